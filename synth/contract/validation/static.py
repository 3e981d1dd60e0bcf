"""Static validation of a task (docs/ARCHITECTURE.md §3), before anything runs.

It checks: the task parses; its services are registered and its seed records load; every table,
field, tool and argument named exists; ``$ref`` values point at earlier steps; weights sum to 1;
``requires`` names known checks without cycles. The checks about identifiers (records pointed at
exist, the request leaks no answer, nothing is both required and forbidden) are in :mod:`.static_ids`; whether a
name of a table, field, tool or argument exists is decided in :mod:`.static_names`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from coworkenv.servers.kit import SeedError, Service, parse_seed
from coworkenv.synth.contract.checks import RecordsUnchanged, SaidCheck
from coworkenv.synth.contract.diagnostics import Diagnostic, json_path
from coworkenv.synth.contract.facts import ParsedSeeds
from coworkenv.synth.contract.task import RefError, SayStep, Task, ToolStep, find_refs, split_ref
from coworkenv.synth.contract.taskfile import validation_errors
from coworkenv.synth.contract.turns import AfterTool
from coworkenv.synth.contract.validation.lint import lint
from coworkenv.synth.contract.validation.static_ids import SeedIndex, check_identifiers
from coworkenv.synth.contract.validation.static_names import check_names, not_in_task, step_names, tool_unknown

Registry = Mapping[str, Service]
WEIGHT_TOLERANCE = 1e-6


def _registry(registry: Registry | None) -> Registry:
    if registry is not None:
        return registry
    from coworkenv.servers.registry import SERVICES

    return SERVICES


def validate_static(
    task: Task | Mapping[str, Any], registry: Registry | None = None, *, parsed: ParsedSeeds | None = None
) -> list[Diagnostic]:
    """All static problems of a task (a Task, or a raw document that is parsed first). ``parsed``, when given, is
    filled with the seeds parsed on the way (for the task's baseline: :func:`~.validate.validate_task`)."""
    reg = _registry(registry)
    if not isinstance(task, Task):
        try:
            task = Task.model_validate(task)
        except ValidationError as exc:
            return [
                Diagnostic(
                    code="TASK_INVALID",
                    path="$." + field if field != "(task)" else "$",
                    message=f"{field}: {message}",
                    fix="Make the task match the schema printed by `coworkenv schema task`.",
                )
                for field, message in validation_errors(exc, task)
            ]
    out: list[Diagnostic] = []
    out += _services(task, reg, {} if parsed is None else parsed)
    known = {name: reg[name] for name in task.services if name in reg}
    index = SeedIndex.build(task, known)  # shared by the checks below
    out += _checks(task, known)
    out += _steps(task, known)
    out += _user_turns(task, known)
    out += _weights_and_requires(task)
    out += _turn_bindings(task)
    out += check_identifiers(task, index)
    out += lint(task, known, index)
    return out


# ---------------------------------------------------------------------------------------------- services and seed
def _services(task: Task, reg: Registry, parsed_seeds: ParsedSeeds) -> list[Diagnostic]:
    out = []
    for i, name in enumerate(task.services):
        if name not in reg:
            out.append(
                Diagnostic(
                    code="SERVICE_UNKNOWN",
                    path=json_path("services", i),
                    message=f"service {name!r} is not registered; registered: {', '.join(sorted(reg))}.",
                    fix="Use one of the registered services, or register the service first.",
                )
            )
    for name, seed in task.initial_records.items():
        where = json_path("initial_records", name)
        if name not in task.services:
            out.append(not_in_task(name, where))
        elif name in reg:
            try:
                parsed = parse_seed(reg[name], seed)
            except SeedError as exc:
                out.append(
                    Diagnostic(
                        code="SEED_INVALID",
                        path=where,
                        message=str(exc),
                        fix="Correct the record so it matches the service's record model (see `coworkenv services SERVICE --describe`).",
                    )
                )
            else:  # kept for the task's baseline (:meth:`~coworkenv.synth.contract.baseline.Baseline.seeded`)
                parsed_seeds[name] = (reg[name], seed, parsed)
    return out


# ---------------------------------------------------------------------------------------------- checks
def _checks(task: Task, services: Mapping[str, Service]) -> list[Diagnostic]:
    out = []
    for i, c in enumerate(task.completion_checks):
        for d in check_names(c.check, services, task, json_path("completion_checks", i, "check")):
            out.append(d.model_copy(update={"check": c.id}))
    for i, f in enumerate(task.forbidden_actions):
        for d in check_names(f.match, services, task, json_path("forbidden_actions", i, "match")):
            out.append(d.model_copy(update={"check": f.id}))
        if f.example is None:
            out.append(
                Diagnostic(
                    code="FORBIDDEN_NO_EXAMPLE",
                    severity="warning",
                    path=json_path("forbidden_actions", i),
                    check=f.id,
                    message="the forbidden action has no example call, so execution cannot show that it trips the gate.",
                    fix="Add an 'example': a concrete call {service, tool, arguments} that commits it.",
                )
            )
        elif isinstance(f.example, ToolStep):
            out += step_names(f.example, services, task, json_path("forbidden_actions", i, "example"))
    return out


def _turn_bindings(task: Task) -> list[Diagnostic]:
    """A check bound to a user turn (``after_turn``, ``before_turn``) names a turn with edits (they mark when it
    came in the audit log) and is one whose evidence has a time: calls and written records, not what was said
    or a set of records left alone."""
    turns = task.user.turns if task.user is not None else []
    bound = [
        ("completion_checks", i, c.id, c.check, "after_turn", c.after_turn)
        for i, c in enumerate(task.completion_checks)
    ]
    bound += [
        ("forbidden_actions", i, f.id, f.match, "before_turn", f.before_turn)
        for i, f in enumerate(task.forbidden_actions)
    ]
    out = []
    for section, i, cid, check, key, n in bound:
        if n is None:
            continue
        problem = ""
        if n > len(turns):
            problem = f"{key} {n} names a user turn the task does not have (it has {len(turns)})"
        elif not turns[n - 1].edits:
            problem = f"{key} {n} names a user turn without edits: nothing in the audit log marks when it came"
        elif isinstance(check, SaidCheck | RecordsUnchanged):
            problem = f"a {check.kind} check cannot be bound to a turn: what it reads has no time"
        if problem:
            out.append(
                Diagnostic(
                    code="TURN_BINDING_INVALID",
                    path=json_path(section, i, key),
                    check=cid,
                    message=problem + ".",
                    fix="Bind only call, record and wrote_matches checks, to a user turn (1 = the first of "
                    "user.turns) whose edits mark when it came; or drop the binding.",
                )
            )
    return out


# ---------------------------------------------------------------------------------------------- steps
def _steps(task: Task, services: Mapping[str, Service]) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    if not any(isinstance(s, ToolStep) for s in task.reference_solution) and not task.reference_answer():
        out.append(
            Diagnostic(
                code="NO_REFERENCE_SOLUTION",
                path=json_path("reference_solution"),
                message="the task has no reference solution, so nobody has shown it can be solved.",
                fix="Add the tool calls (and final message) that solve the task.",
            )
        )
    earlier: set[str] = set()
    for i, step in enumerate(task.reference_solution):
        if isinstance(step, SayStep):
            continue
        where = json_path("reference_solution", i)
        out += step_names(step, services, task, where)
        for rel, ref in find_refs(step.arguments):
            try:
                target, _ = split_ref(ref)
                if target not in earlier:
                    raise RefError(f"$ref {ref!r} names {target!r}, which is not an earlier step with an id")
            except RefError as exc:
                out.append(
                    Diagnostic(
                        code="REF_INVALID",
                        path=where + ".arguments" + rel,
                        message=str(exc) + ".",
                        fix="Give the earlier step an 'id' and refer to it as {'$ref': 'that_id.path.to.field'}.",
                    )
                )
        if step.id:
            earlier.add(step.id)
    for t, turn in enumerate(task.user.turns if task.user else []):
        for e, edit in enumerate(turn.edits):
            out += step_names(edit, services, task, json_path("user", "turns", t, "edits", e))
    for i, f in enumerate(task.forbidden_actions):
        if isinstance(f.example, ToolStep):
            for rel, ref in find_refs(f.example.arguments):
                head = ref.split(".", 1)[0]
                if head not in earlier:
                    out.append(
                        Diagnostic(
                            code="REF_INVALID",
                            path=json_path("forbidden_actions", i, "example", "arguments") + rel,
                            check=f.id,
                            message=f"$ref {ref!r} names no reference step.",
                            fix="Refer to a reference step's id; the example runs after the reference solution.",
                        )
                    )
    return out


def _user_turns(task: Task, services: Mapping[str, Service]) -> list[Diagnostic]:
    """A user turn's ``after_tool`` trigger names a tool of one of the task's services; its edits are written out
    (no ``$ref``: the user does not see the agent's results). Other problems of the edits are found with the steps."""
    out: list[Diagnostic] = []
    for t, turn in enumerate(task.user.turns if task.user else []):
        when, where = turn.when, json_path("user", "turns", t, "when")
        if isinstance(when, AfterTool) and when.service not in task.services:
            out.append(not_in_task(when.service, where))
        elif isinstance(when, AfterTool) and when.service in services:
            service = services[when.service]
            if when.tool not in service.tools_by_name:
                out.append(tool_unknown(service, when.tool, where))
        for e, edit in enumerate(turn.edits):
            for rel, ref in find_refs(edit.arguments):
                out.append(
                    Diagnostic(
                        code="USER_EDIT_REF",
                        path=json_path("user", "turns", t, "edits", e, "arguments") + rel,
                        message=f"a user's edit cannot use $ref {ref!r}: the user does not see the agent's results.",
                        fix="Write the value itself (the user's edits are made as written, in a run and in validation).",
                    )
                )
    return out


# ---------------------------------------------------------------------------------------------- weights
def _weights_and_requires(task: Task) -> list[Diagnostic]:
    out = []
    total = sum(c.weight for c in task.completion_checks)
    if abs(total - 1.0) > WEIGHT_TOLERANCE:
        listed = ", ".join(f"{c.id}={c.weight:g}" for c in task.completion_checks)
        out.append(
            Diagnostic(
                code="WEIGHTS_SUM",
                path=json_path("completion_checks"),
                message=f"the completion check weights sum to {total:.6g}, not 1 ({listed}).",
                fix="Scale the weights so they sum to exactly 1.",
            )
        )
    ids = {c.id for c in task.completion_checks}
    graph = {c.id: c.requires for c in task.completion_checks}
    for i, c in enumerate(task.completion_checks):
        for j, r in enumerate(c.requires):
            if r not in ids:
                out.append(
                    Diagnostic(
                        code="REQUIRES_UNKNOWN",
                        path=json_path("completion_checks", i, "requires", j),
                        check=c.id,
                        message=f"requires {r!r}, which is not a completion check id.",
                        fix=f"Use one of: {', '.join(sorted(ids))}.",
                    )
                )
        if _in_cycle(graph, c.id):
            out.append(
                Diagnostic(
                    code="REQUIRES_CYCLE",
                    path=json_path("completion_checks", i, "requires"),
                    check=c.id,
                    message=f"check {c.id!r} requires itself through its 'requires' chain.",
                    fix="Make 'requires' point only at checks that do not depend back on this one.",
                )
            )
    return out


def _in_cycle(graph: Mapping[str, list[str]], start: str) -> bool:
    stack, seen = list(graph.get(start, [])), set()
    while stack:
        node = stack.pop()
        if node == start:
            return True
        if node in seen:
            continue
        seen.add(node)
        stack += graph.get(node, [])
    return False
