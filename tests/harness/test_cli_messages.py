"""Mistakes on the command line get one line that says what to do: a near-miss agent name gets a suggestion,
a missing API key names the variable of the provider in use, and nothing is written."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from coworkenv.harness.agents.registry import did_you_mean
from coworkenv.harness.cli import COMMANDS
from coworkenv.synth.contract.library import examples_dir

TASK = examples_dir() / "tickets-triage-new-urgent.json"


def cli() -> click.Group:
    group = click.Group("coworkenv")
    for command in COMMANDS:
        group.add_command(command)
    return group


def run(tmp_path: Path, agent: str) -> tuple[str, int, Path]:
    out = tmp_path / "run"
    result = CliRunner().invoke(cli(), ["run", "--tasks", str(TASK), "--agent", agent, "--out", str(out)])
    return result.output, result.exit_code, out


def one_error_line(output: str) -> str:
    lines = output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "Traceback" not in output, output
    return lines[0]


@pytest.mark.parametrize(
    ("agent", "suggested"),
    [
        ("claude", "did you mean claude-code or anthropic:MODEL?"),
        ("antropic:claude-sonnet-4-5", "did you mean anthropic:MODEL?"),
        ("repaly", "did you mean replay?"),
        ("gpt-4o", "did you mean openai:MODEL@BASE_URL?"),
    ],
)
def test_an_unknown_agent_gets_a_did_you_mean_and_nothing_is_written(
    tmp_path: Path, agent: str, suggested: str
) -> None:
    output, code, out = run(tmp_path, agent)
    line = one_error_line(output)
    assert code != 0 and f"unknown agent {agent!r}" in line and suggested in line
    assert not out.exists()


def test_an_agent_name_nothing_like_any_agent_just_lists_them() -> None:
    assert did_you_mean("xyzzy") == ""


def test_a_missing_anthropic_key_is_one_sentence_naming_anthropic_api_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("anthropic")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    output, code, out = run(tmp_path, "anthropic:claude-sonnet-4-5")
    line = one_error_line(output)
    assert code != 0 and "set ANTHROPIC_API_KEY" in line
    assert "TypeError" not in line and "OPENAI" not in line
    assert not out.exists()


def test_a_missing_openai_key_is_one_sentence_naming_openai_api_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("openai")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    output, code, out = run(tmp_path, "openai:gpt-4o")
    line = one_error_line(output)
    assert code != 0 and "set OPENAI_API_KEY" in line and "ANTHROPIC" not in line
    assert not out.exists()


def test_a_missing_claude_executable_says_how_to_install_it_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COWORKENV_CLAUDE", str(tmp_path / "no-such-claude"))
    output, code, out = run(tmp_path, "claude-code")
    line = one_error_line(output)
    assert code != 0 and "npm install -g @anthropic-ai/claude-code@" in line and "COWORKENV_CLAUDE" in line
    assert not out.exists()


def test_the_missing_training_data_hint_names_the_real_export_command(tmp_path: Path) -> None:
    from coworkenv.train.data import DataError, read_chat_jsonl

    with pytest.raises(DataError) as caught:
        read_chat_jsonl(tmp_path / "sft.jsonl")
    assert "coworkenv export RUNDIR --out" in str(caught.value) and "harness export" not in str(caught.value)


def test_a_local_examples_folder_is_read_as_given_and_the_note_says_where_the_bundled_ones_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from coworkenv.harness.cli_outputs import _task_sources

    monkeypatch.chdir(tmp_path)
    assert _task_sources(("examples",)) == [examples_dir()]  # no folder here: the bundled set
    (tmp_path / "examples").mkdir()
    capsys.readouterr()
    assert _task_sources(("examples",)) == [Path("examples")]
    note = capsys.readouterr().err
    assert "./examples" in note and str(examples_dir()) in note
