"""Static validation of a task (DESIGN.md §3), before anything runs.

It checks: the task parses; its services are registered and its seed records load; every table,
field, tool and argument named exists; ``$ref`` values point at earlier steps; weights sum to 1;
``requires`` names known checks without cycles. The checks about identifiers (records pointed at
exist, the request leaks no answer, nothing is both required and forbidden) are in :mod:`.static_ids`.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from coworkenv.servers.kit import SeedError, Service, parse_seed
from coworkenv.synth.contract.checks import AnyCheck, CallMatch, call_matches
from coworkenv.synth.contract.diagnostics import Diagnostic, json_path
from coworkenv.synth.contract.task import RefError, SayStep, Task, ToolStep, find_refs, split_ref
from coworkenv.synth.contract.taskfile import validation_errors
from coworkenv.synth.contract.turns import AfterTool
from coworkenv.synth.contract.validation.lint import lint
from coworkenv.synth.contract.validation.static_ids import check_identifiers

Registry = Mapping[str, Service]
WEIGHT_TOLERANCE = 1e-6


def _registry(registry: Registry | None) -> Registry:
    if registry is not None:
        return registry
    from coworkenv.servers.registry import SERVICES

    return SERVICES


def validate_static(task: Task | Mapping[str, Any], registry: Registry | None = None) -> list[Diagnostic]:
    """All static problems of a task (a Task, or a raw document that is parsed first)."""
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
    out += _services(task, reg)
    known = {name: reg[name] for name in task.services if name in reg}
    out += _checks(task, known)
    out += _steps(task, known)
    out += _user_turns(task, known)
    out += _weights_and_requires(task)
    out += check_identifiers(task, known)
    out += lint(task, known)
    return out


# ---------------------------------------------------------------------------------------------- services and seed
def _services(task: Task, reg: Registry) -> list[Diagnostic]:
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
            out.append(_not_in_task(name, where))
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
            else:  # kept for the task's environments (:func:`~coworkenv.synth.contract.runner.fresh_environment`)
                task._cache.setdefault("parsed_seeds", {})[name] = (reg[name], seed, parsed)
    return out


def _not_in_task(name: str, where: str) -> Diagnostic:
    return Diagnostic(
        code="SERVICE_NOT_IN_TASK",
        path=where,
        message=f"service {name!r} is used here but not listed in the task's services.",
        fix=f"Add {name!r} to services, or use one of the task's services.",
    )


# ---------------------------------------------------------------------------------------------- names
def _field_exists(model: type[BaseModel], path: str) -> bool:
    """Does a dotted path name a field of the model (descending into nested models; lists are transparent)?"""
    current: Any = model
    for part in path.split("."):
        current = _unwrap(current)
        if part.lstrip("-").isdigit():
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return True  # a dict or free-form value: anything below it may exist
        info = current.model_fields.get(part)
        if info is None:
            return False
        current = info.annotation
    return True


def _unwrap(annotation: Any) -> Any:
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated or origin in (list, tuple, set):
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            inner = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(inner) != 1:
                return Any
            annotation = inner[0]
        else:
            return annotation


def _table_ok(service: Service, table: str, where: str) -> Diagnostic | None:
    if table in service.tables_by_name:
        return None
    return Diagnostic(
        code="TABLE_UNKNOWN",
        path=where,
        message=f"{service.name} has no table {table!r}; tables: {', '.join(service.tables_by_name)}.",
        fix="Name one of the service's tables.",
    )


def _unknown_fields(model: type[BaseModel], paths: Any, where: str, owner: str, code: str) -> list[Diagnostic]:
    noun = "argument" if code == "ARGUMENT_UNKNOWN" else "field"
    out = []
    for path in paths:
        if not _field_exists(model, path):
            known = ", ".join(model.model_fields)
            out.append(
                Diagnostic(
                    code=code,
                    path=where + json_path(path).removeprefix("$"),
                    message=f"{owner} has no {noun} {path!r}; {noun}s: {known}.",
                    fix=f"Use one of the listed {noun}s"
                    + (" (a dotted path for nested ones)." if noun == "field" else "."),
                )
            )
    return out


def _call_names(m: CallMatch, services: Mapping[str, Service], task: Task, where: str) -> list[Diagnostic]:
    if m.service not in task.services:
        return [_not_in_task(m.service, where + ".service")]
    service = services.get(m.service)
    if service is None:
        return []
    spec = service.tools_by_name.get(m.tool)
    if spec is None:
        return [_tool_unknown(service, m.tool, where + ".tool")]
    return _unknown_fields(spec.args_model, m.arguments, where + ".arguments", f"tool {m.tool}", "ARGUMENT_UNKNOWN")


def _tool_unknown(service: Service, tool: str, where: str) -> Diagnostic:
    return Diagnostic(
        code="TOOL_UNKNOWN",
        path=where,
        message=f"{service.name} has no tool {tool!r}; tools: {', '.join(service.tools_by_name)}.",
        fix="Name one of the service's tools.",
    )


def _check_names(check: AnyCheck, services: Mapping[str, Service], task: Task, where: str) -> list[Diagnostic]:
    calls = call_matches(check)
    if calls:
        if len(calls) == 1:
            return _call_names(calls[0], services, task, where)
        return _call_names(calls[0], services, task, where + ".first") + _call_names(
            calls[1], services, task, where + ".then"
        )
    service_name = getattr(check, "service", None)
    if service_name is None:
        return []  # a check on what was said
    if service_name not in task.services:
        return [_not_in_task(service_name, where + ".service")]
    service = services.get(service_name)
    if service is None:
        return []
    table_name: str = getattr(check, "table", "")
    problem = _table_ok(service, table_name, where + ".table")
    if problem:
        return [problem]
    model = service.tables_by_name[table_name].model
    owner = f"table {service_name}.{table_name}"
    out = []
    for attr in ("where", "fields"):
        paths = getattr(check, attr, None)
        if paths:
            out += _unknown_fields(model, paths, f"{where}.{attr}", owner, "FIELD_UNKNOWN")
    for field_name in getattr(check, "ignore_fields", []):
        out += _unknown_fields(model, [field_name], where + ".ignore_fields", owner, "FIELD_UNKNOWN")
    return out


def _checks(task: Task, services: Mapping[str, Service]) -> list[Diagnostic]:
    out = []
    for i, c in enumerate(task.completion_checks):
        for d in _check_names(c.check, services, task, json_path("completion_checks", i, "check")):
            out.append(d.model_copy(update={"check": c.id}))
    for i, f in enumerate(task.forbidden_actions):
        for d in _check_names(f.match, services, task, json_path("forbidden_actions", i, "match")):
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
            out += _step_names(f.example, services, task, json_path("forbidden_actions", i, "example"))
    return out


# ---------------------------------------------------------------------------------------------- steps
def _step_names(step: ToolStep, services: Mapping[str, Service], task: Task, where: str) -> list[Diagnostic]:
    if step.service not in task.services:
        return [_not_in_task(step.service, where + ".service")]
    service = services.get(step.service)
    if service is None:
        return []
    spec = service.tools_by_name.get(step.tool)
    if spec is None:
        return [_tool_unknown(service, step.tool, where + ".tool")]
    out = _unknown_fields(
        spec.args_model, step.arguments, where + ".arguments", f"tool {step.tool}", "ARGUMENT_UNKNOWN"
    )
    if out or find_refs(step.arguments):
        return out
    try:
        spec.args_model.model_validate(step.arguments)
    except ValidationError as exc:
        problems = "; ".join(f"{field}: {message}" for field, message in validation_errors(exc))
        out.append(
            Diagnostic(
                code="ARGUMENTS_INVALID",
                path=where + ".arguments",
                message=f"arguments for {step.service}.{step.tool} do not validate: {problems}.",
                fix="Give the arguments the tool's input schema asks for.",
            )
        )
    return out


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
        out += _step_names(step, services, task, where)
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
            out += _step_names(edit, services, task, json_path("user", "turns", t, "edits", e))
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
            out.append(_not_in_task(when.service, where))
        elif isinstance(when, AfterTool) and when.service in services:
            service = services[when.service]
            if when.tool not in service.tools_by_name:
                out.append(_tool_unknown(service, when.tool, where))
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
