"""One record per agent backend: the spec it answers to, how its argument is checked, whether it is ready to run,
how it is built, and the model name exports give it (see ``README.md`` in this folder)."""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from coworkenv.harness.agents.base import EpisodeAgent, ModelAgent

Agent = ModelAgent | EpisodeAgent
Argument = Literal["none", "optional", "required"]


class AgentSpecError(ValueError):
    """A spec that names no agent, lacks its argument, or whose backend cannot be loaded."""


def split_spec(spec: str) -> tuple[str, bool, str]:
    """The grammar every spec shares: ``kind`` or ``kind:ARG`` → (kind, whether a ``:`` was given, ARG)."""
    kind, sep, arg = spec.strip().partition(":")
    return kind, bool(sep), arg


@dataclass(frozen=True)
class AgentBackend:
    """How ``--agent KIND[:ARG]`` becomes an agent."""

    kind: str
    """The word before the ``:``. Example: ``"openai"``."""
    grammar: str
    """The spec as the help and the errors show it. Example: ``"openai:MODEL@BASE_URL"``."""
    build: Callable[[str], Agent] | str
    """Makes the agent from ARG (``""`` when none was given): a function, or ``"module:function"``, imported only
    when this backend is asked for (so its packages are needed only then)."""
    summary: str = ""
    """One line for the table of agents."""
    argument: Argument = "none"
    """Whether ``:ARG`` is refused, allowed or needed."""
    example: str = ""
    """A full spec, shown when a needed argument is missing. Example: ``"openai:MODEL@http://127.0.0.1:8000/v1"``."""
    needs: str = "an argument"
    """What ARG is, in words, for the error when it is missing. Example: ``"a file"``."""
    requires: tuple[str, ...] = ()
    """Python packages the backend imports; :meth:`ready` says what to install when one is missing."""
    install: str = ""
    """What to run to get them. Example: ``"pip install 'coworkenv[llm]'"``."""
    model: Callable[[str], str | None] | None = None
    """ARG → the ``provider/model`` name exports (Inspect) give the agent; None: not a model (``coworkenv/<spec>``)."""
    words: tuple[str, ...] = ()
    """Words people type meaning this backend (``vllm`` for ``openai``), for "did you mean"."""

    def check(self, given: bool, arg: str) -> None:
        """Refuse an argument the backend takes none of, or a missing one it needs."""
        if self.argument == "none" and given:
            raise AgentSpecError(f"{self.kind} takes no argument; use {self.grammar}")
        if self.argument == "required" and not arg:
            raise AgentSpecError(f"{self.kind} needs {self.needs}, e.g. {self.example or self.grammar}")

    def ready(self) -> str | None:
        """None when the backend can be built here; else what is missing and what to install."""
        for package in self.requires:
            if importlib.util.find_spec(package) is None:
                return (
                    f"the {self.kind} backend needs the {package!r} package: {self.install or 'pip install ' + package}"
                )
        return None

    def make(self, arg: str) -> Agent:
        """The agent for ARG: the backend's factory, imported now if it is named by a string."""
        problem = self.ready()
        if problem:
            raise AgentSpecError(problem)
        factory = self._factory()
        try:
            agent = factory(arg)
        except ModuleNotFoundError as exc:
            raise AgentSpecError(f"the {self.kind} backend needs the {exc.name!r} package: {self.install}") from exc
        if not isinstance(agent, ModelAgent | EpisodeAgent):
            raise AgentSpecError(f"{self.kind}: the backend returned {type(agent).__name__}, which is not an agent")
        return agent

    def model_name(self, arg: str) -> str | None:
        return self.model(arg) if self.model is not None and arg else None

    def _factory(self) -> Callable[[str], Agent]:
        if not isinstance(self.build, str):
            return self.build
        module_name, _, attr = self.build.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                raise AgentSpecError(
                    f"the {self.kind} backend ({module_name}) is not part of this installation"
                ) from exc
            raise AgentSpecError(f"the {self.kind} backend needs the {exc.name!r} package: {self.install}") from exc
        factory = getattr(module, attr, None)
        if not callable(factory):
            raise AgentSpecError(f"{module_name} defines no {attr}; the {self.kind} backend cannot be built")
        return factory


def provider_model(kind: str) -> Callable[[str], str]:
    """Exports' model name for a provider backend: ``MODEL@URL`` → ``kind/MODEL``."""

    def name(arg: str) -> str:
        return f"{kind}/{arg.split('@', 1)[0]}"

    return name
