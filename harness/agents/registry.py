"""Agents by spec string: one :class:`AgentBackend` record per kind, registered with :func:`register_agent` or by
another package in the ``coworkenv.agents`` entry-point group (see ``README.md`` in this folder).

==========================  ==========================================================================
``replay``                  plays the task's reference solution (validation, not scores)
``noop``                    says it cannot help
``scripted:PATH``           a fixed policy from a JSON file of turns (see :mod:`.builtin`)
``anthropic:MODEL``         the Anthropic Messages API (the teacher); needs ``coworkenv[llm]``
``openai:MODEL@BASE_URL``   any OpenAI-compatible chat-completions endpoint (e.g. a vLLM-served student)
``hf:PATH``                 a local transformers model with its chat template's tool calls
``claude-code``             Claude Code run headless against the task's services over stdio
==========================  ==========================================================================

The model backends are imported only when asked for.
"""

from __future__ import annotations

import difflib

from coworkenv.harness.agents.backend import Agent, AgentBackend, AgentSpecError, provider_model, split_spec
from coworkenv.harness.agents.builtin import NoopAgent, ReplayAgent, ScriptedAgent
from coworkenv.servers.kit.plugins import AGENTS_GROUP, register_entry_points

__all__ = ["BACKENDS", "AgentBackend", "AgentSpecError", "get_backend", "make_agent", "register_agent"]

BACKENDS: dict[str, AgentBackend] = {}


def register_agent(backend: AgentBackend) -> AgentBackend:
    """Add a backend: ``--agent KIND[:ARG]`` then builds it, exports name its model, errors list its grammar."""
    if not isinstance(backend, AgentBackend):
        raise TypeError(f"an agent backend must be an AgentBackend record, not {type(backend).__name__}")
    if not backend.kind or ":" in backend.kind:
        raise ValueError(f"an agent backend's kind must be a word without ':', not {backend.kind!r}")
    known = BACKENDS.get(backend.kind)
    if known is not None and known != backend:
        raise ValueError(f"an agent backend {backend.kind!r} is already registered; give yours another kind")
    BACKENDS[backend.kind] = backend
    return backend


def unregister_agent(kind: str) -> None:
    """Take a backend out of the registry (tests that add one put things back with it)."""
    BACKENDS.pop(kind, None)


def _scripted(arg: str) -> Agent:
    try:
        return ScriptedAgent.from_file(arg)
    except ValueError as exc:
        raise AgentSpecError(str(exc)) from exc


_LLM = "pip install 'coworkenv[llm]'"
for _backend in (
    AgentBackend(
        "replay",
        "replay",
        lambda _: ReplayAgent(),
        "plays the task's reference solution (validation, not scores)",
        words=("reference",),
    ),
    AgentBackend("noop", "noop", lambda _: NoopAgent(), "says it cannot help", words=("none",)),
    AgentBackend(
        "scripted",
        "scripted:PATH",
        _scripted,
        "a fixed policy from a JSON file of turns",
        argument="required",
        example="scripted:PATH (a JSON list of turns)",
        needs="a file",
        words=("script",),
    ),
    AgentBackend(
        "anthropic",
        "anthropic:MODEL",
        "coworkenv.harness.agents.anthropic_agent:from_spec",
        "the Anthropic Messages API (the teacher)",
        argument="required",
        example="anthropic:claude-sonnet-4-5",
        requires=("anthropic",),
        install=_LLM,
        model=provider_model("anthropic"),
        words=("claude", "sonnet", "opus", "haiku"),
    ),
    AgentBackend(
        "openai",
        "openai:MODEL@BASE_URL",
        "coworkenv.harness.agents.openai_agent:from_spec",
        "any OpenAI-compatible chat-completions endpoint (e.g. a vLLM-served student)",
        argument="required",
        example="openai:MODEL@http://127.0.0.1:8000/v1",
        requires=("openai",),
        install="pip install openai",
        model=provider_model("openai"),
        words=("gpt", "vllm"),
    ),
    AgentBackend(
        "hf",
        "hf:PATH",
        "coworkenv.harness.agents.hf_agent:from_spec",
        "a local transformers model with its chat template's tool calls",
        argument="required",
        example="hf:PATH",
        install="pip install 'coworkenv[train]'",
        model=provider_model("hf"),
        words=("transformers", "huggingface"),
    ),
    AgentBackend(
        "claude-code",
        "claude-code",
        "coworkenv.harness.agents.claude_code:from_spec",
        "Claude Code run headless against the task's services over stdio",
        argument="optional",
        install="npm install -g @anthropic-ai/claude-code",
        words=("claude", "claudecode", "claude_code"),
    ),
):
    register_agent(_backend)
register_entry_points(AGENTS_GROUP, register_agent)


def specs() -> tuple[str, ...]:
    """The grammar of every registered backend: ``("replay", "noop", "scripted:PATH", ...)``."""
    return tuple(b.grammar for b in BACKENDS.values())


def get_backend(spec: str) -> AgentBackend | None:
    """The backend a spec names, or None."""
    return BACKENDS.get(split_spec(spec)[0])


def make_agent(spec: str) -> Agent:
    """The agent a spec string names; :class:`AgentSpecError` says what is wrong and what specs exist."""
    kind, given, arg = split_spec(spec)
    backend = BACKENDS.get(kind)
    if backend is None:
        hint = did_you_mean(kind)
        raise AgentSpecError(f"unknown agent {spec!r}; {hint}use one of: {', '.join(specs())}")
    backend.check(given, arg)
    return backend.make(arg)


def model_name(spec: str) -> str | None:
    """The ``provider/model`` name an export gives the agent of ``spec``; None when it is not a model."""
    backend = get_backend(spec)
    return backend.model_name(split_spec(spec)[2]) if backend is not None else None


def did_you_mean(kind: str) -> str:
    """``"did you mean claude-code or anthropic:MODEL? "`` for a near miss, else ``""``."""
    word = kind.strip().lower()
    kinds = list(BACKENDS)
    guesses = [k for k in kinds if word and (k.startswith(word) or word.startswith(k))]
    guesses += [k for k, b in BACKENDS.items() for alias in b.words if word == alias or word.startswith(alias + "-")]
    guesses += difflib.get_close_matches(word, kinds, n=2, cutoff=0.6)
    unique = list(dict.fromkeys(BACKENDS[k].grammar for k in guesses))[:3]
    return f"did you mean {' or '.join(unique)}? " if unique else ""
