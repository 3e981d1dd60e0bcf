"""Agents by spec string.

==========================  ==========================================================================
``replay``                  plays the task's reference solution (validation, not scores)
``noop``                    says it cannot help
``scripted:PATH``           a fixed policy from a JSON file of turns (see :mod:`.builtin`)
``anthropic:MODEL``         the Anthropic Messages API (the teacher); needs ``coworkenv[llm]``
``openai:MODEL@BASE_URL``   any OpenAI-compatible chat-completions endpoint (e.g. a vLLM-served student)
``hf:PATH``                 a local transformers model with its chat template's tool calls
``claude-code``             Claude Code run headless against the task's services over stdio
==========================  ==========================================================================

The model backends are imported only when asked for. Each backend module may define
``from_spec(arg: str)``; otherwise its agent class is called with the spec's argument.
"""

from __future__ import annotations

import difflib
import importlib
from typing import Any

from coworkenv.harness.agents.base import EpisodeAgent, ModelAgent
from coworkenv.harness.agents.builtin import NoopAgent, ReplayAgent, ScriptedAgent

_BACKENDS: dict[str, tuple[str, str, str]] = {
    # kind: (module, class, what to install)
    "anthropic": ("anthropic_agent", "AnthropicAgent", "pip install 'coworkenv[llm]'"),
    "openai": ("openai_agent", "OpenAIAgent", "pip install openai"),
    "hf": ("hf_agent", "HFAgent", "pip install 'coworkenv[train]'"),
    "claude-code": ("claude_code", "ClaudeCodeAgent", "npm install -g @anthropic-ai/claude-code"),
}
SPECS = ("replay", "noop", "scripted:PATH", "anthropic:MODEL", "openai:MODEL@BASE_URL", "hf:PATH", "claude-code")
_KINDS = {spec.partition(":")[0]: spec for spec in SPECS}
_ALIASES: dict[str, tuple[str, ...]] = {
    # words people type for an agent, and the specs they mean
    "claude": ("claude-code", "anthropic:MODEL"),
    "claudecode": ("claude-code",),
    "claude_code": ("claude-code",),
    "sonnet": ("anthropic:MODEL",),
    "opus": ("anthropic:MODEL",),
    "haiku": ("anthropic:MODEL",),
    "gpt": ("openai:MODEL@BASE_URL",),
    "vllm": ("openai:MODEL@BASE_URL",),
    "transformers": ("hf:PATH",),
    "huggingface": ("hf:PATH",),
    "script": ("scripted:PATH",),
    "reference": ("replay",),
    "none": ("noop",),
}


class AgentSpecError(ValueError):
    """A spec that names no agent, lacks its argument, or whose backend cannot be loaded."""


def _backend(kind: str, arg: str) -> Any:
    module_name, class_name, install = _BACKENDS[kind]
    qualified = f"coworkenv.harness.agents.{module_name}"
    try:
        module = importlib.import_module(qualified)
    except ModuleNotFoundError as exc:
        if exc.name == qualified:
            raise AgentSpecError(f"the {kind} backend ({qualified}) is not part of this installation") from exc
        raise AgentSpecError(f"the {kind} backend needs the {exc.name!r} package: {install}") from exc
    factory = getattr(module, "from_spec", None)
    if factory is not None:
        return factory(arg)
    cls = getattr(module, class_name, None)
    if cls is None:
        raise AgentSpecError(f"{qualified} defines neither from_spec nor {class_name}")
    if kind == "openai":
        model, _, base_url = arg.partition("@")
        return cls(model, base_url=base_url or None)
    return cls(arg) if arg else cls()


def make_agent(spec: str) -> ModelAgent | EpisodeAgent:
    """The agent a spec string names; :class:`AgentSpecError` says what is wrong and what specs exist."""
    kind, sep, arg = spec.strip().partition(":")
    if kind == "replay" and not sep:
        return ReplayAgent()
    if kind == "noop" and not sep:
        return NoopAgent()
    if kind == "scripted":
        if not arg:
            raise AgentSpecError("scripted needs a file: scripted:PATH (a JSON list of turns)")
        try:
            return ScriptedAgent.from_file(arg)
        except ValueError as exc:
            raise AgentSpecError(str(exc)) from exc
    if kind in _BACKENDS:
        if kind in ("anthropic", "openai", "hf") and not arg:
            example = {"anthropic": "anthropic:claude-sonnet-4-5", "openai": "openai:MODEL@http://127.0.0.1:8000/v1"}
            raise AgentSpecError(f"{kind} needs an argument, e.g. {example.get(kind, 'hf:PATH')}")
        agent = _backend(kind, arg)
        if not isinstance(agent, ModelAgent | EpisodeAgent):
            raise AgentSpecError(f"{spec}: the backend returned {type(agent).__name__}, which is not an agent")
        return agent
    hint = did_you_mean(kind)
    raise AgentSpecError(f"unknown agent {spec!r}; {hint}use one of: {', '.join(SPECS)}")


def did_you_mean(kind: str) -> str:
    """``"did you mean claude-code or anthropic:MODEL? "`` for a near miss, else ``""``."""
    word = kind.strip().lower()
    guesses = [
        spec for alias, specs in _ALIASES.items() if word == alias or word.startswith(alias + "-") for spec in specs
    ]
    guesses += [_KINDS[k] for k in _KINDS if word and (k.startswith(word) or word.startswith(k))]
    guesses += [_KINDS[k] for k in difflib.get_close_matches(word, list(_KINDS), n=2, cutoff=0.6)]
    unique = list(dict.fromkeys(guesses))[:3]
    return f"did you mean {' or '.join(unique)}? " if unique else ""
