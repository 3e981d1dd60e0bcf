"""The Claw-Eval tool profile: Claw-Eval's mock services' tools, served by our services.

Claw-Eval (``claw-eval/claw-eval``) names its tools per mock service (``gmail_send_message``,
``helpdesk_close_ticket``, …); its prompts, graders and judges name them too. Each module here maps one of its
services onto one of ours, as a :class:`ClawService`:

- ``tools``: kit tools named and shaped as Claw-Eval's (arguments as its request models take them, results as its
  endpoints return them), reading and writing our service's tables; so state, audit, clock and transports are ours;
- ``seed``: its fixture files (file name → parsed JSON) as a seed of our service, **keeping the fixtures' ids**;
- ``audit_data``: what its ``/audit`` route returns, rebuilt from our state and audit rows (its graders read it);
- ``clock``: the simulated time an imported task runs at (its mocks shift fixture dates to "now"; we set the clock).

:func:`profiled` makes the :class:`~coworkenv.servers.kit.Service` a task gets: our service with the tools of the
Claw-Eval services it serves in place of its own.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from pydantic import ConfigDict

from coworkenv.servers.kit import Service
from coworkenv.servers.kit.tool import ToolSpec

Fixtures = Mapping[str, Any]
"""A Claw-Eval service's fixture files of one task: file name (``inbox.json``) → parsed JSON."""
SeedTables = dict[str, list[dict[str, Any]]]
"""A seed of one of our services: table → records."""
AuditRow = Mapping[str, Any]
"""One row of our audit log, as ``Environment.audit()`` gives it."""


@dataclass(frozen=True)
class ClawService:
    name: str
    """Claw-Eval's service name. Example: 'gmail'"""
    serves_on: str
    """Our service that serves it. Example: 'email'"""
    tools: tuple[ToolSpec, ...]
    """Claw-Eval's tools of this service, on our tables."""
    seed: Callable[[Fixtures], SeedTables]
    """Its fixtures as a seed of ``serves_on`` (ids kept); raises ValueError naming the file and record when bad."""
    audit_data: Callable[[Mapping[str, list[dict[str, Any]]], list[AuditRow]], dict[str, Any]]
    """What its ``/audit`` route would return: from our service's final tables and its audit rows."""
    clock: Callable[[Fixtures], datetime | None] = lambda fixtures: None
    """The simulated time a task with these fixtures runs at; None: no opinion (the importer picks)."""
    moves: tuple[str, ...] = ()
    """The fixture fields its mock moves to the wall clock when it loads them (gmail: ``date``). Each mock moves its
    own, so in a task whose services want different clocks the importer moves these by :func:`moved` until this
    service's clock is the task's: each service then sits against the one clock as its mock puts it."""
    moves_whole_days: bool = False
    """Its mock keeps each time of day (calendar): moved by whole days only."""


def moved(fixtures: Fixtures, fields: tuple[str, ...], by: timedelta) -> dict[str, Any]:
    """A copy of ``fixtures`` with every ISO date-time under one of ``fields`` (in records of a list, or of a
    document's lists) later by ``by``, written as it was (its zone, or its ``Z``)."""

    def shift(value: Any) -> Any:
        if not isinstance(value, str):
            return value
        text = value.strip()
        try:
            when = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
        except ValueError:
            return value
        later = when + by
        if text.endswith("Z"):
            return later.replace(tzinfo=None).isoformat(timespec="seconds") + "Z"
        return later.isoformat(timespec="seconds")

    def record(row: Any) -> Any:
        if not isinstance(row, dict):
            return row
        return {k: shift(v) if k in fields else v for k, v in row.items()}

    def document(doc: Any) -> Any:
        if isinstance(doc, list):
            return [record(r) for r in doc]
        if isinstance(doc, dict):
            return {k: document(v) if isinstance(v, list) else v for k, v in doc.items()}
        return doc

    return {name: document(doc) for name, doc in fixtures.items()}


_MODULES = {
    "gmail": "gmail",
    "contacts": "contacts",
    "calendar": "calendar",
    "notes": "notes",
    "crm": "crm",
    "helpdesk": "helpdesk",
    "finance": "finance",
    "kb": "kb",
    "inventory": "inventory",
    "todo": "todo",
    "scheduler": "scheduler",
    "config": "config",
    "rss": "rss",
}
"""Claw-Eval service → module of this package that maps it."""

OUT_OF_SCOPE = {
    "web_real": "needs web_real (live web search)",
    "web_real_injection": "needs web_real_injection (live web search)",
    "web": "needs web (web pages fetched live)",
    "ocr": "needs ocr (reading images)",
    "caption": "needs caption (describing images)",
    "documents": "needs documents (parsing PDF and office files)",
}
"""Claw-Eval services we do not serve, and the one-line reason a task that needs one is not imported."""


def claw_services() -> tuple[str, ...]:
    """The Claw-Eval services this profile serves."""
    return tuple(_MODULES)


def claw_service(name: str) -> ClawService:
    """The mapping of one Claw-Eval service; KeyError (with the reason) when it is not served."""
    module = _MODULES.get(name)
    if module is None:
        reason = OUT_OF_SCOPE.get(name) or (name.startswith("ocr") and "needs ocr (reading images)") or ""
        raise KeyError(reason or f"needs {name} (a Claw-Eval service coworkenv does not serve)")
    found: ClawService = importlib.import_module(f"{__name__}.{module}").SERVICE
    return found


def profiled(service: Service, claw_names: Iterable[str], only: Iterable[str] | None = None) -> Service:
    """``service`` with the tools of the Claw-Eval services ``claw_names`` (all served on it) in place of its own;
    with ``only``, just those tools (a task lists the tools its agent gets)."""
    tools: list[ToolSpec] = []
    for name in claw_names:
        claw = claw_service(name)
        if claw.serves_on != service.name:
            raise ValueError(f"Claw-Eval's {name} is served on {claw.serves_on}, not on {service.name}")
        tools.extend(claw.tools)
    if only is not None:
        wanted = set(only)
        tools = [t for t in tools if t.name in wanted]
    return replace(service, tools=tuple(lenient(t) for t in tools))


def lenient(spec: ToolSpec) -> ToolSpec:
    """``spec`` taking arguments it does not know and leaving them out, as Claw-Eval's mocks do (their request
    models ignore extra fields): an agent that adds one gets the same answer there and here, not an error."""
    if spec.args_model.model_config.get("extra") == "ignore":
        return spec
    config = ConfigDict(**{**spec.args_model.model_config, "extra": "ignore"})
    model = type(spec.args_model.__name__, (spec.args_model,), {"model_config": config, "__module__": __name__})
    return replace(spec, args_model=model)
