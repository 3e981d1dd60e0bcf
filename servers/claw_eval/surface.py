"""What one of our services serves to an imported Claw-Eval task: the tools of the Claw-Eval services it serves, as
the task declares them.

A Claw-Eval ``task.yaml`` lists the tools its agent gets, each with its own description and input schema (often
in the task's language). A :class:`Surface` names them: our service, the Claw-Eval services served on it, and the
task's declarations of their tools. :meth:`Surface.service` is then our service with those tools in place of its
own (:func:`~coworkenv.servers.claw_eval.profiled`), each listed with the declared description and input schema
(arguments are still validated by the profile tool's own model, so a call runs exactly as the tool takes it).

The same surface reaches every door: the harness builds its environments from :meth:`Surface.service` (direct
door, in-memory MCP) and serves it over stdio and HTTP with ``coworkenv serve SERVICE`` and the options of
:meth:`Surface.serve_args` (``--profile claw-eval:gmail,contacts --declared JSON``).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from coworkenv.servers.claw_eval import claw_service, profiled
from coworkenv.servers.kit import Service
from coworkenv.servers.kit.tool import ToolSpec

PROFILE = "claw-eval"


@dataclass(frozen=True)
class DeclaredTool(ToolSpec):
    """A profile tool listed as a task declares it: its description and input schema, the tool's own body and
    argument model."""

    declared_schema: Mapping[str, Any] = field(default_factory=dict)

    def input_schema(self) -> dict[str, Any]:
        return json.loads(json.dumps(self.declared_schema))  # a fresh copy: callers may change what they get


def declared(spec: ToolSpec, declaration: Mapping[str, Any]) -> ToolSpec:
    """``spec`` with the description and input schema of ``declaration`` (``{name, description, input_schema}``);
    what the declaration leaves out stays the tool's own."""
    description = declaration.get("description")
    schema = declaration.get("input_schema")
    text = description.strip() if isinstance(description, str) and description.strip() else spec.description
    if not isinstance(schema, Mapping):
        return replace(spec, description=text)
    shaped = {"type": "object", "properties": {}, **schema}
    return DeclaredTool(
        spec.name, text, spec.fn, spec.args_model, spec.output_model, spec.annotations, declared_schema=shaped
    )


@dataclass(frozen=True)
class Surface:
    """One of our services as a task sees it: the Claw-Eval services served on it, and the declared tools."""

    service_name: str
    """Ours. Example: 'email'"""
    claw: tuple[str, ...]
    """The Claw-Eval services it serves here. Example: ('gmail',)"""
    declared_json: str | None = None
    """The task's declarations of these services' tools as canonical JSON text (a list); None: every tool of
    them, as the profile describes it."""

    @classmethod
    def of(
        cls, service_name: str, claw: Iterable[str], declarations: Sequence[Mapping[str, Any]] | None = None
    ) -> Surface:
        text = None if declarations is None else json.dumps(list(declarations), sort_keys=True, ensure_ascii=False)
        return cls(service_name, tuple(claw), text)

    @property
    def declarations(self) -> list[dict[str, Any]] | None:
        return None if self.declared_json is None else list(json.loads(self.declared_json))

    def service(self) -> Service:
        """Our service with these tools in place of its own (built once per surface in a process)."""
        return _built(self)

    def serve_args(self) -> list[str]:
        """The ``coworkenv serve`` options that serve this surface."""
        args = ["--profile", f"{PROFILE}:{','.join(self.claw)}"]
        return args + (["--declared", self.declared_json] if self.declared_json is not None else [])


@functools.lru_cache(maxsize=512)
def _built(surface: Surface) -> Service:
    from coworkenv.servers.registry import get_service

    base = get_service(surface.service_name)
    declarations = surface.declarations
    if declarations is None:
        return profiled(base, surface.claw)
    by_name = {str(d.get("name")): d for d in declarations}
    service = profiled(base, surface.claw, only=by_name)
    missing = sorted(set(by_name) - {spec.name for spec in service.tools})
    if missing:
        served = ", ".join(surface.claw)
        raise ValueError(f"the task declares tools that coworkenv's Claw-Eval {served} does not serve: {missing}")
    return replace(service, tools=tuple(declared(spec, by_name[spec.name]) for spec in service.tools))


def surfaces(claw: Iterable[str], declarations: Sequence[Mapping[str, Any]] = ()) -> dict[str, Surface]:
    """The surfaces of a task on the Claw-Eval profile: per service of ours, the Claw-Eval services it serves and
    the declared tools among theirs (``declarations`` empty: every tool of them). KeyError (its reason) for a
    Claw-Eval service coworkenv does not serve."""
    served: dict[str, list[str]] = {}
    for name in dict.fromkeys(claw):
        served.setdefault(claw_service(name).serves_on, []).append(name)
    out: dict[str, Surface] = {}
    for ours, names in served.items():
        if not declarations:
            out[ours] = Surface.of(ours, names)
            continue
        tools = {spec.name for name in names for spec in claw_service(name).tools}
        mine = [d for d in declarations if d.get("name") in tools]
        out[ours] = Surface.of(ours, names, mine)
    if declarations:
        known = {d.get("name") for s in out.values() for d in s.declarations or []}
        unknown = sorted(str(d.get("name")) for d in declarations if d.get("name") not in known)
        if unknown:
            raise ValueError(f"the task declares tools no Claw-Eval service it names serves: {unknown}")
    return out


def parse_profile(value: str) -> tuple[str, ...]:
    """``claw-eval:gmail,contacts`` → ('gmail', 'contacts'); ValueError saying how to write it."""
    profile, sep, names = value.partition(":")
    claw = tuple(n.strip() for n in names.split(",") if n.strip())
    if profile != PROFILE or not sep or not claw:
        raise ValueError(f"--profile {value!r}: write it as {PROFILE}:SERVICE[,SERVICE...], e.g. {PROFILE}:gmail")
    return claw


def parse_declared(text: str) -> list[dict[str, Any]]:
    """The ``--declared`` JSON: a list of ``{name, description?, input_schema?}``; ValueError naming the problem."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"--declared is not JSON ({exc}); give a list of {{name, description, input_schema}}") from exc
    if not isinstance(value, list) or not all(isinstance(d, dict) and isinstance(d.get("name"), str) for d in value):
        raise ValueError("--declared must be a JSON list of objects, each with a name (and description, input_schema)")
    return value
