"""Validate tasks: static checks first, then (when those pass) execution; files and folders at once."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import anyio
from pydantic import BaseModel

from coworkenv.synth.contract.diagnostics import Diagnostic, is_valid
from coworkenv.synth.contract.facts import ParsedSeeds
from coworkenv.synth.contract.task import Task
from coworkenv.synth.contract.taskfile import TaskFileError, parse_task, read_documents, task_files
from coworkenv.synth.contract.validation.execution import ExecReport, validate_exec
from coworkenv.synth.contract.validation.static import Registry, validate_static


class TaskReport(BaseModel):
    """The verdict on one task: valid when no diagnostic is an error."""

    task_id: str | None
    source: str
    valid: bool
    diagnostics: list[Diagnostic]
    execution: ExecReport | None = None

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning"]


async def validate_task(
    task: Task,
    *,
    source: str = "",
    execute: bool = True,
    via_mcp: bool = False,
    registry: Registry | None = None,
    max_mutations: int = 40,
    adversaries: bool = True,
) -> TaskReport:
    """Static validation, then (if it found no error) validation by execution (with the adversaries unless
    ``adversaries`` is False). The seeds static validation parses are handed to the execution's baseline, so
    seeding the task does not validate them again."""
    parsed: ParsedSeeds = {}
    diagnostics = validate_static(task, registry, parsed=parsed)
    execution = None
    if execute and is_valid(diagnostics):
        try:
            execution = await validate_exec(
                task,
                via_mcp=via_mcp,
                max_mutations=max_mutations,
                adversaries=adversaries,
                parsed=parsed,
                registry=registry,
            )
            diagnostics += execution.diagnostics
        except Exception as exc:  # an environment that cannot even be built is a finding, not a crash
            diagnostics.append(
                Diagnostic(
                    code="EXECUTION_FAILED",
                    path="$",
                    message=f"the task could not be run: {type(exc).__name__}: {exc}",
                    fix="Fix the seed records, services or clock so that a fresh environment can be created.",
                )
            )
    return TaskReport(
        task_id=task.id, source=source, valid=is_valid(diagnostics), diagnostics=diagnostics, execution=execution
    )


def _load_error(exc: TaskFileError) -> TaskReport:
    path = "$" if not exc.field else "$." + exc.field
    diag = Diagnostic(
        code="TASK_INVALID",
        path=path,
        message=exc.detail,
        fix="Make the task match the schema printed by `coworkenv schema task`.",
    )
    return TaskReport(task_id=None, source=exc.source, valid=False, diagnostics=[diag])


async def validate_paths(
    paths: Iterable[str | Path],
    *,
    execute: bool = True,
    via_mcp: bool = False,
    max_mutations: int = 40,
    adversaries: bool = True,
) -> list[TaskReport]:
    """Validate every task in the given files and folders; a file that does not load is one invalid report."""
    reports: list[TaskReport] = []
    for file in task_files(paths):
        try:
            docs = read_documents(file)
        except TaskFileError as exc:
            reports.append(_load_error(exc))
            continue
        for doc in docs:
            try:
                task = parse_task(doc)
            except TaskFileError as exc:
                reports.append(_load_error(exc))
                continue
            reports.append(
                await validate_task(
                    task,
                    source=doc.source,
                    execute=execute,
                    via_mcp=via_mcp,
                    max_mutations=max_mutations,
                    adversaries=adversaries,
                )
            )
    return reports


def validate_paths_sync(
    paths: Iterable[str | Path], *, execute: bool = True, via_mcp: bool = False
) -> list[TaskReport]:
    async def main() -> list[TaskReport]:
        return await validate_paths(paths, execute=execute, via_mcp=via_mcp)

    return anyio.run(main)
