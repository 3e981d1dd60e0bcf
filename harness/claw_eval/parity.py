"""``coworkenv import claw-eval CHECKOUT --out DIR --parity``: does our import answer as Claw-Eval's own mock
services do?

For every imported task in ``DIR`` (a task file with ``external.kind == "claw-eval"`` and a ``tool_profile``),
parity plays the same call sequences (:mod:`.parity_calls`: one scripted, N random from a seeded generator, writes
and not-found ids included) on both sides:

- **theirs**: the task's mock services started from the checkout as Claw-Eval's harness starts them
  (:mod:`.parity_mock`), ``/reset`` before each sequence, each call sent to its ``tool_endpoints`` URL;
- **ours**: the task's services of ours with the Claw-Eval tool profile, seeded from the task file, on its clock,
  through the kit's in-process door, a fresh fork of the seeded environment per sequence (:mod:`.parity_ours`).

It compares each call's HTTP status and result JSON, each service's final ``/audit`` JSON (ours rebuilt by the
profile's ``audit_data``) and, when the checkout's ``claw_eval`` package imports, the task's grader run on each
side's records (:mod:`.parity_grade`). Values are read by the rules of :mod:`.parity_compare` (fixture dates the
mocks move to the wall clock read back in the task's time; creation stamps read ``<now>``; ids each side makes up
read ``<new-id:N>``; a 422 compares by status). The report (:mod:`.parity_report`) says, per task, how many
comparisons agreed and the first disagreement of each kind with both sides' values; it is written to
``DIR/parity_report.json``, and the per-service figures and the overall agreement (agreeing / compared over calls,
audits and grader outputs pooled) are printed, the agreement last.
"""

from __future__ import annotations

import json
import sys
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio

from coworkenv.harness.claw_eval.grading_checkout import ClawPackage
from coworkenv.harness.claw_eval.import_read import named_entries, read_fixtures, read_task_yaml
from coworkenv.harness.claw_eval.parity_calls import Call, Pools, random_sequences, scripted_sequence
from coworkenv.harness.claw_eval.parity_compare import (
    Reader,
    first_difference,
    mock_shifts,
    shift_arguments,
    shifted_times,
    strings_of,
    times_of,
)
from coworkenv.harness.claw_eval.parity_grade import grade, mock_events, our_audit, our_events, package_for
from coworkenv.harness.claw_eval.parity_mock import Answer, ClawMocks, missing_modules
from coworkenv.harness.claw_eval.parity_ours import OurSide
from coworkenv.harness.claw_eval.parity_report import Disagreement, ParityReport, TaskParity
from coworkenv.servers.kit import Service
from coworkenv.servers.kit.atomic import write_atomic
from coworkenv.servers.kit.door import CallOutcome
from coworkenv.servers.kit.files import one_line
from coworkenv.synth.contract.task import Task
from coworkenv.synth.contract.taskfile import TaskFileError, parse_task, read_documents

REPORT_FILE = "parity_report.json"
SEQUENCES = 5
_SKIP = {REPORT_FILE, "import_report.json"}

__all__ = ["REPORT_FILE", "ParityError", "ParityReport", "imported_tasks", "run_parity"]


class ParityError(ValueError):
    """Parity cannot run at all (one line saying what to do)."""


def imported_tasks(folder: Path, only: Iterable[str] | None = None) -> list[Task]:
    """The imported Claw-Eval tasks of ``folder`` (task files with ``external.kind == "claw-eval"`` and a tool
    profile), by id; ``only``: just those whose id or Claw-Eval id is listed."""
    wanted = set(only) if only is not None else None
    found: dict[str, Task] = {}
    files = sorted(p for p in folder.rglob("*") if p.suffix in (".json", ".yaml", ".yml") and p.name not in _SKIP)
    for path in files:
        try:
            docs = read_documents(path)
        except TaskFileError:
            continue
        for doc in docs:
            external = doc.data.get("external") if isinstance(doc.data, dict) else None
            if (
                not isinstance(external, dict)
                or external.get("kind") != "claw-eval"
                or not doc.data.get("tool_profile")
            ):
                continue
            try:
                task = parse_task(doc)
            except TaskFileError:
                continue
            source = task.external.source if task.external else ""
            if wanted is None or task.id in wanted or source in wanted:
                found[task.id] = task
    return [found[k] for k in sorted(found)]


def run_parity(
    checkout: Path,
    out: Path,
    *,
    sequences: int = SEQUENCES,
    seed: int = 0,
    claw_python: str | None = None,
    only: Sequence[str] | None = None,
    grade_outputs: bool = True,
    echo: Callable[[str], None] | None = print,
    base: Callable[[str], Service] | None = None,
    progress: Callable[[str], None] | None = None,
) -> ParityReport:
    """Parity of every imported task of ``out`` with the mock services of ``checkout`` (see the module doc).

    ``claw_python``: the interpreter that runs the mocks (needs fastapi and uvicorn; default this one).
    ``base``: our service of a name (default the registry's). ``progress``: told one line per task as it is done.
    Raises :class:`ParityError` when nothing can run."""
    python = claw_python or sys.executable
    lacking = missing_modules(python)
    if lacking:
        raise ParityError(lacking)
    tasks = imported_tasks(out, only)
    if not tasks:
        raise ParityError(
            f"{out} holds no imported Claw-Eval task; run `coworkenv import claw-eval CHECKOUT --out {out}`"
        )
    if base is None:
        from coworkenv.servers.registry import get_service

        base = get_service
    package, why = package_for(checkout) if grade_outputs else (None, "grader outputs not compared: not asked")
    report = ParityReport(sequences=sequences, seed=seed)
    run = _Run(checkout, python, sequences, seed, package, why, base)
    for number, task in enumerate(tasks, 1):
        found = anyio.run(run.task, task)
        report.tasks.append(found)
        if progress is not None:
            progress(f"parity {number}/{len(tasks)} {found.source}: {found.progress_line()}")
    write_atomic(out / REPORT_FILE, json.dumps(report.as_json(), indent=2, ensure_ascii=False, default=str) + "\n")
    if echo is not None:
        for line in report.lines():
            echo(line)
    return report


@dataclass(frozen=True)
class _Run:
    checkout: Path
    python: str
    sequences: int
    seed: int
    package: ClawPackage | None
    no_grading: str | None
    base: Callable[[str], Service]

    async def task(self, task: Task) -> TaskParity:
        source = task.external.source if task.external else task.id
        services = list(task.tool_profile.services) if task.tool_profile else []
        result = TaskParity(task.id, source, services, grading=self.no_grading)
        try:
            await self._play(task, source, result)
        except Exception as exc:  # this task is not compared; the others go on
            result.problem = one_line(f"{type(exc).__name__}: {exc}", 300)
        return result

    async def _play(self, task: Task, source: str, result: TaskParity) -> None:
        folder = self.checkout / "tasks" / source
        spec = read_task_yaml(folder)
        fixtures = {str(e["name"]): read_fixtures(self.checkout, folder, e) for e in named_entries(spec, "services")}
        documents = [doc for files in fixtures.values() for doc in files.values()]
        pools = Pools.of(documents)
        tools = [t for t in (task.tool_profile.tools if task.tool_profile else []) if isinstance(t, dict)]
        tools = tools or [t for t in spec.get("tools") or [] if isinstance(t, dict)]
        plays = [scripted_sequence(tools, pools)]
        plays += random_sequences(tools, pools, self.sequences, self.seed ^ zlib.crc32(task.id.encode()))
        urls = {str(e["tool_name"]): str(e["url"]) for e in spec.get("tool_endpoints") or [] if isinstance(e, dict)}
        ours = OurSide(task, self.base)
        try:
            with ClawMocks(self.checkout, spec, self.python) as mocks:
                for play in plays:
                    await _Sequence(self, task, result, mocks, ours, fixtures, strings_of(documents), urls).play(
                        play.name, play.calls
                    )
        finally:
            ours.close()


@dataclass
class _Sequence:
    run: _Run
    task: Task
    result: TaskParity
    mocks: ClawMocks
    ours: OurSide
    fixtures: Mapping[str, Mapping[str, Any]]
    fixture_strings: set[str]
    urls: Mapping[str, str]

    def service(self, tool: str) -> str:
        return self.mocks.tool_services.get(tool) or self.ours.service_of(tool)

    async def play(self, name: str, calls: Sequence[Call]) -> None:
        loaded = self.mocks.reset()
        shifts = mock_shifts(self.fixtures, loaded)
        sent = [Call(c.tool, shift_arguments(c.arguments, shifts.get(self.service(c.tool)))) for c in calls]
        task_times = [t for svc, files in self.fixtures.items() for t in shifted_times(svc, files)]
        task_times += times_of([c.arguments for c in calls])
        aliases = _aliases(calls, sent)
        theirs = Reader(
            self.fixture_strings | strings_of([c.arguments for c in sent]), task_times, shifts, aliases=aliases
        )
        moved = self.task.external.spec.get("moved_seconds") if self.task.external else None
        ours_moved = {str(k): timedelta(seconds=float(v)) for k, v in (moved or {}).items()}
        to_ours = [Call(c.tool, shift_arguments(c.arguments, ours_moved.get(self.service(c.tool)))) for c in calls]
        mine = Reader(
            self.fixture_strings | strings_of([c.arguments for c in to_ours]),
            task_times,
            ours_moved,
            aliases=_aliases(calls, to_ours),
        )
        started = datetime.now(UTC)
        env = self.ours.fresh()
        try:
            our_start = env.clock.now()
            answered: list[tuple[Call, Answer]] = []
            outcomes: list[tuple[Call, CallOutcome]] = []
            for n, (call, to_mock, ours) in enumerate(zip(calls, sent, to_ours, strict=True), start=1):
                service = self.service(call.tool)
                mock = self.mocks.call(call.tool, to_mock.arguments)
                our, outcome = await self.ours.call(env, call.tool, ours.arguments)
                answered.append((to_mock, mock))
                outcomes.append((ours, outcome))
                read_mock = theirs.read(_body(mock), service, (started, datetime.now(UTC)))
                read_ours = mine.read(_body(our), service, (our_start, env.clock.now()))
                self._compare_call(name, n, call, mock, our, read_mock, read_ours, service)
            now = datetime.now(UTC)
            mock_audit = self.mocks.audit()
            our_audits = self.ours.audit(env)
            for svc in sorted(set(mock_audit) | set(our_audits)):
                a = theirs.read(mock_audit.get(svc, "<absent>"), svc, (started, now))
                b = mine.read(our_audits.get(svc, "<absent>"), svc, (our_start, env.clock.now()))
                found = first_difference(a, b)
                self.result.audit(svc, found is None)
                if found:
                    self.result.note(Disagreement("audit", name, svc, None, None, *found))
            if self.run.package is not None:
                self._grade(name, answered, outcomes, mock_audit, our_audit(self.task, env))
        finally:
            env.close()

    def _compare_call(
        self, name: str, n: int, call: Call, mock: Answer, our: Answer, read_mock: Any, read_ours: Any, service: str
    ) -> None:
        if mock.status != our.status:
            self.result.call(service, False)
            values = ({"status": mock.status, "body": mock.body}, {"status": our.status, "body": our.body})
            self.result.note(Disagreement("status", name, call.tool, n, call.arguments, "$status", *values))
            return
        found = first_difference(read_mock, read_ours)
        self.result.call(service, found is None)
        if found:
            self.result.note(Disagreement("result", name, call.tool, n, call.arguments, *found))

    def _grade(
        self,
        name: str,
        answered: list[tuple[Call, Answer]],
        outcomes: list[tuple[Call, CallOutcome]],
        mock_audit: dict[str, Any],
        audit: dict[str, Any],
    ) -> None:
        assert self.run.package is not None
        tid = f"{self.task.id}-parity-{name}"
        source = self.result.source
        theirs = grade(self.run.package, source, mock_events(self.task.request, answered, self.urls, tid), mock_audit)
        mine = grade(self.run.package, source, our_events(self.task.request, outcomes, self.urls, tid), audit)
        agrees = theirs.agrees(mine)
        self.result.grades.add(agrees)
        if not agrees:
            self.result.note(Disagreement("grader", name, None, None, None, "$scores", theirs.value, mine.value))


def _aliases(calls: Sequence[Call], sent: Sequence[Call]) -> dict[str, str]:
    """Each argument text the mock was sent in place of the one the sequence wrote (a moved date) → the written one."""
    out: dict[str, str] = {}
    for call, moved in zip(calls, sent, strict=True):
        for written, given in zip(_leaves(call.arguments), _leaves(moved.arguments), strict=False):
            if isinstance(written, str) and isinstance(given, str) and written != given:
                out[given] = written
    return out


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, Mapping):
        return [leaf for key in sorted(value, key=str) for leaf in _leaves(value[key])]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def _body(answer: Answer) -> Any:
    """What of an answer is compared beside its status (a 422's body is not: see :mod:`.parity_compare`)."""
    return "<invalid arguments>" if answer.status == 422 else answer.body
