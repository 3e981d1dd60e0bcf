"""Our side of parity: an imported task's services with the Claw-Eval tool profile, seeded from the task, on the
task's clock, called through the kit's in-process door (:class:`~coworkenv.servers.kit.door.DirectDoor`).

A call's answer is read back as the HTTP answer the mock would give: a success is ``200`` with the tool's JSON; a
:class:`~coworkenv.servers.claw_eval.common.ClawHTTPError` is its status with FastAPI's ``{"detail": ...}`` body;
invalid arguments are ``422``; an unknown tool ``404`` (as Claw-Eval's dispatcher answers one).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from typing import Any

from coworkenv.harness.claw_eval.parity_mock import Answer
from coworkenv.servers import claw_eval as claw_profile
from coworkenv.servers.claw_eval.common import http_status
from coworkenv.servers.kit import Environment, Service
from coworkenv.servers.kit.door import CallOutcome, DirectDoor
from coworkenv.synth.contract.task import Task

_DETAIL = re.compile(r"^HTTP \d{3}: ?(.*)$", re.S)


def answer_of(outcome: CallOutcome) -> Answer:
    """Our call's outcome as the mock's HTTP answer would read."""
    if outcome.ok:
        return Answer(200, outcome.data if outcome.data is not None else outcome.text)
    status = http_status(outcome.outcome, outcome.text)
    found = _DETAIL.match(outcome.text or "")
    if found:
        return Answer(status, {"detail": found.group(1)})
    if outcome.outcome == "unknown_tool":
        return Answer(404, {"error": outcome.text})
    return Answer(status, {"detail": outcome.text})


class OurSide:
    """The task's services of ours, profiled; :meth:`fresh` gives one environment per sequence."""

    def __init__(self, task: Task, base: Callable[[str], Service]) -> None:
        profile = task.tool_profile
        if profile is None:
            raise ValueError(f"task {task.id} has no tool profile")
        declared = [str(t["name"]) for t in profile.tools if isinstance(t, dict) and "name" in t] or None
        self.task = task
        self.claws_on: dict[str, list[str]] = {}
        for name in profile.services:
            self.claws_on.setdefault(claw_profile.claw_service(name).serves_on, []).append(name)
        self.services = {
            ours: claw_profile.profiled(base(ours), self.claws_on.get(ours, []), only=declared)
            for ours in task.services
        }
        self.tool_service = {spec.name: ours for ours, svc in self.services.items() for spec in svc.tools}
        self.pristine = Environment.create(task.seeds(), now=task.now, registry=self.services)

    def close(self) -> None:
        self.pristine.close()

    def fresh(self) -> Environment:
        return self.pristine.fork()

    async def call(self, env: Environment, tool: str, arguments: Mapping[str, Any]) -> tuple[Answer, CallOutcome]:
        """One call through the direct door: as the mock's answer would read, and as the door answered it."""
        service = self.tool_service.get(tool)
        if service is None:
            text = f"Unknown tool {tool!r}: the task's services of ours do not serve it."
            return Answer(404, {"error": f"unknown tool '{tool}'"}), CallOutcome(text, True, "unknown_tool")
        outcome = await DirectDoor(env).call(service, tool, arguments)
        return answer_of(outcome), outcome

    def service_of(self, tool: str) -> str:
        """The Claw-Eval service whose tool this is ('' when none of the task's)."""
        for names in self.claws_on.values():
            for name in names:
                if any(spec.name == tool for spec in claw_profile.claw_service(name).tools):
                    return name
        return ""

    def audit(self, env: Environment) -> dict[str, Any]:
        """What each Claw-Eval service's ``/audit`` would return, rebuilt by its profile module from our final
        tables and the audit rows of its own tools."""
        out: dict[str, Any] = {}
        dump = env.dump()
        for ours, claws in self.claws_on.items():
            if ours not in env.states:
                continue
            rows = env.audit(ours)
            for name in claws:
                claw = claw_profile.claw_service(name)
                mine = {spec.name for spec in claw.tools}
                own_rows: list[Mapping[str, Any]] = [dataclasses.asdict(r) for r in rows if r.tool in mine]
                try:
                    out[name] = claw.audit_data(dump[ours], own_rows)
                except Exception as exc:  # reported as this audit's disagreement, the run goes on
                    out[name] = f"<audit_data raised {type(exc).__name__}: {exc}>"
        return out
