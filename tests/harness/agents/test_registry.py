"""Agents by spec string: the built-in ones, scripted files, lazily imported backends with clear errors."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from coworkenv.harness.agents import backend, registry
from coworkenv.harness.agents.builtin import NoopAgent, ReplayAgent, ScriptedAgent
from coworkenv.harness.agents.registry import AgentSpecError, make_agent


def test_replay_noop_and_scripted_specs_make_their_agents(tmp_path: Path) -> None:
    assert isinstance(make_agent("replay"), ReplayAgent)
    assert isinstance(make_agent("noop"), NoopAgent)
    script = tmp_path / "policy.json"
    script.write_text(json.dumps([{"text": "Hi."}]))
    agent = make_agent(f"scripted:{script}")
    assert isinstance(agent, ScriptedAgent) and agent.script.turns[0].text == "Hi."


def test_bad_specs_say_what_exists() -> None:
    with pytest.raises(AgentSpecError, match=r"unknown agent 'gpt-5'.*replay, noop"):
        make_agent("gpt-5")
    with pytest.raises(AgentSpecError, match="scripted needs a file"):
        make_agent("scripted:")
    with pytest.raises(AgentSpecError, match="anthropic needs an argument"):
        make_agent("anthropic")


def test_a_bad_script_names_the_file_and_the_field(tmp_path: Path) -> None:
    script = tmp_path / "bad.json"
    script.write_text(json.dumps({"turns": [{"tool_calls": [{"arguments": {}}]}]}))
    with pytest.raises(AgentSpecError, match=r"bad.json: turns.0.tool_calls.0.name"):
        make_agent(f"scripted:{script}")
    with pytest.raises(AgentSpecError, match="cannot read"):
        make_agent(f"scripted:{tmp_path / 'missing.json'}")


def test_backends_are_imported_only_when_asked_for_and_built_from_the_spec() -> None:
    agent = make_agent("openai:student@http://127.0.0.1:9/v1")
    assert agent.name == "openai:student@http://127.0.0.1:9/v1"
    assert make_agent("anthropic:claude-sonnet-4-5").name == "anthropic:claude-sonnet-4-5"


def test_a_missing_backend_module_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    gone = replace(registry.BACKENDS["hf"], build="coworkenv.harness.agents.no_such_backend:from_spec")
    monkeypatch.setitem(registry.BACKENDS, "hf", gone)
    with pytest.raises(AgentSpecError, match="not part of this installation"):
        make_agent("hf:/models/tiny")


def test_a_backend_whose_package_is_missing_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backend.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(AgentSpecError, match="needs the 'openai' package: pip install openai"):
        make_agent("openai:m@http://x")


def test_a_package_missing_inside_the_backend_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> None:
        raise ModuleNotFoundError("No module named 'torch'", name="torch")

    monkeypatch.setattr(backend.importlib, "import_module", missing)
    with pytest.raises(AgentSpecError, match=r"needs the 'torch' package: pip install 'coworkenv\[train\]'"):
        make_agent("hf:/models/tiny")


def test_a_backend_that_takes_no_argument_refuses_one() -> None:
    with pytest.raises(AgentSpecError, match="replay takes no argument; use replay"):
        make_agent("replay:now")
