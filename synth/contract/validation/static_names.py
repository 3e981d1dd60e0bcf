"""Whether the names a task uses exist, for static validation (:mod:`.static`): the service of a check, step or
trigger is one of the task's; its table, tool, fields and arguments are the service's (dotted paths descend into
nested models); a step's written-out arguments validate against the tool's input schema. Each problem is a
:class:`Diagnostic` at the place of the name.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from coworkenv.servers.kit import Service
from coworkenv.servers.kit.tool import ToolSpec
from coworkenv.synth.contract.checks import AnyCheck, CallMatch, WroteMatches, call_matches
from coworkenv.synth.contract.diagnostics import Diagnostic, json_path
from coworkenv.synth.contract.task import Task, ToolStep, find_refs
from coworkenv.synth.contract.taskfile import validation_errors


def not_in_task(name: str, where: str) -> Diagnostic:
    return Diagnostic(
        code="SERVICE_NOT_IN_TASK",
        path=where,
        message=f"service {name!r} is used here but not listed in the task's services.",
        fix=f"Add {name!r} to services, or use one of the task's services.",
    )


def _field_exists(model: type[BaseModel], path: str) -> bool:
    """Does a dotted path name a field of the model (descending into nested models; lists are transparent)?
    Paths joined by ``|``: each of them."""
    if "|" in path:
        return all(_field_exists(model, p) for p in path.split("|"))
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


def _tool_call(
    service_name: str, tool: str, arguments: Mapping[str, Any], services: Mapping[str, Service], task: Task, where: str
) -> tuple[ToolSpec | None, list[Diagnostic]]:
    """The tool a call names (None when it names none to check further) and what is wrong with its names."""
    if service_name not in task.services:
        return None, [not_in_task(service_name, where + ".service")]
    service = services.get(service_name)
    if service is None:
        return None, []
    spec = service.tools_by_name.get(tool)
    if spec is None:
        return None, [tool_unknown(service, tool, where + ".tool")]
    return spec, _unknown_fields(spec.args_model, arguments, where + ".arguments", f"tool {tool}", "ARGUMENT_UNKNOWN")


def _call_names(m: CallMatch, services: Mapping[str, Service], task: Task, where: str) -> list[Diagnostic]:
    return _tool_call(m.service, m.tool, m.arguments, services, task, where)[1]


def tool_unknown(service: Service, tool: str, where: str) -> Diagnostic:
    return Diagnostic(
        code="TOOL_UNKNOWN",
        path=where,
        message=f"{service.name} has no tool {tool!r}; tools: {', '.join(service.tools_by_name)}.",
        fix="Name one of the service's tools.",
    )


def _wrote_names(check: WroteMatches, services: Mapping[str, Service], task: Task, where: str) -> list[Diagnostic]:
    """A ``wrote_matches`` check names a service of the task (if any) and a tool of it (if any)."""
    if check.service is None:
        return []
    if check.service not in task.services:
        return [not_in_task(check.service, where + ".service")]
    service = services.get(check.service)
    if service is None or check.tool is None or check.tool in service.tools_by_name:
        return []
    return [tool_unknown(service, check.tool, where + ".tool")]


def check_names(check: AnyCheck, services: Mapping[str, Service], task: Task, where: str) -> list[Diagnostic]:
    if isinstance(check, WroteMatches):
        return _wrote_names(check, services, task, where)
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
        return [not_in_task(service_name, where + ".service")]
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


def step_names(step: ToolStep, services: Mapping[str, Service], task: Task, where: str) -> list[Diagnostic]:
    spec, out = _tool_call(step.service, step.tool, step.arguments, services, task, where)
    if spec is None or out or find_refs(step.arguments):
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
