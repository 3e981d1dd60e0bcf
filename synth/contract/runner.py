"""Playing a list of steps in a fresh environment of a task, through either door of the services, and grading it.

The steps, doors and scripted user are :mod:`coworkenv.synth.contract.play` (re-exported here); this module holds
the task's :class:`Workbench` (its baseline: one pristine environment per task, forked for each run; the
workspaces many direct-door runs share, marked and rolled back; the memos of its grading and validation),
:func:`run_steps` / :func:`play_now`, which pick the cheapest way to play, and :func:`grade_trial`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio

from coworkenv.servers.kit import AuditRow, Environment
from coworkenv.servers.kit.door import DirectDoor, memory_targets, open_mcp_door
from coworkenv.servers.kit.environment import ServiceLookup, audit_order
from coworkenv.synth.contract.baseline import Baseline
from coworkenv.synth.contract.baseline import play_now as play_in_fork
from coworkenv.synth.contract.facts import GradeMemo, ParsedSeeds
from coworkenv.synth.contract.grader import Grade, grade
from coworkenv.synth.contract.play import (
    Row,
    StepOutcome,
    Trial,
    UserScript,
    noop_steps,
    play_steps,
    user_script,
)
from coworkenv.synth.contract.task import Step, Task
from coworkenv.synth.contract.turns import TurnSchedule, asked_facts
from coworkenv.synth.contract.validation.memos import ValidationMemos


@dataclass
class Workbench:
    """One task played and graded many times (validation, its tests and benches): the task's :class:`Baseline`
    (seeded once), the workspaces its direct-door runs share, what its reference solution left, and the memos the
    caller keeps while it grades the task's read-only trials (:class:`GradeMemo`) and validates it
    (:class:`ValidationMemos`). The code that plays a task makes one and hands it down; nothing is kept on the
    task."""

    baseline: Baseline
    grading: GradeMemo = field(default_factory=GradeMemo)
    validation: ValidationMemos = field(default_factory=ValidationMemos)
    fresh: Workspace | None = None
    """The workspace of fresh runs (:func:`workspace`), made the first time it is asked for."""
    after_reference: AfterReference | None = None
    """What the reference solution's own direct-door run left (:func:`run_steps`), once it was played."""

    @classmethod
    def of(cls, task: Task, parsed: ParsedSeeds | None = None, registry: ServiceLookup | None = None) -> Workbench:
        """A workbench for ``task``: its baseline with expected changes (:meth:`Baseline.of`), its services looked up
        in ``registry`` (default: every known service)."""
        return cls(Baseline.of(task, parsed, registry))

    @property
    def task(self) -> Task:
        return self.baseline.task

    def close(self) -> None:
        """Close its environments and drop the trials its memos keep alive (the end of a validation)."""
        for ws in (self.fresh, None if self.after_reference is None else self.after_reference.workspace):
            if ws is not None:
                ws.env.close()
        self.fresh = self.after_reference = None
        self.grading.clear()
        self.baseline.close()


def grade_trial(bench: Workbench, trial: Trial, *, explain: bool = True) -> Grade:
    """Grade what a run of steps left (:func:`run_steps`); ``explain`` as in :func:`grade`. A trial's state and
    audit are never changed once made, so what was worked out for them (or for the lists of rows they share with
    other trials) is reused from the workbench's memo."""
    return grade(bench.baseline, trial.state, trial.audit, trial.messages, explain=explain, reuse=bench.grading)


def play_now(bench: Workbench, steps: Sequence[Step]) -> Trial:
    """Play steps in a fresh environment of the task through the direct door, synchronously
    (:func:`coworkenv.synth.contract.baseline.play_now`)."""
    return play_in_fork(bench.baseline, steps)


class Workspace:
    """An environment of the task that many direct-door runs share: each run is played after the workspace's
    mark and rolled back to it (:meth:`Environment.mark`), so a run costs what it changes rather than a fork of
    every database, and the connections keep their compiled statements. ``state`` and ``audit``: the dump and
    the audit rows at the mark (a trial shares ``state``'s lists for the tables its run did not write to)."""

    def __init__(self, env: Environment, state: dict[str, dict[str, list[Row]]], audit: list[AuditRow]) -> None:
        self.env = env
        self.state = state
        self.audit = audit
        self.mark = env.mark()
        self.busy = False

    @contextmanager
    def run(self) -> Iterator[Environment]:
        """The environment for one run, rolled back to the mark afterwards (whatever happened)."""
        if self.busy:
            raise RuntimeError("a workspace plays one run at a time")
        self.busy = True
        try:
            yield self.env
        finally:
            self.env.rollback(self.mark)
            self.busy = False

    def trial(self, messages: list[str], outcomes: list[StepOutcome]) -> Trial:
        """What the run in progress has left, as a trial (the audit log: the rows at the mark, then the run's)."""
        new = self.env.audit_since(self.mark)
        audit = sorted([*self.audit, *new], key=audit_order) if self.audit else new
        return Trial(self.env.dump_since(self.mark, self.state), audit, messages, outcomes)


def workspace(bench: Workbench) -> Workspace | None:
    """The task's workspace of fresh runs (a fork of its pristine environment, made once per workbench), or
    None while it plays another run (then play on a fork)."""
    ws = bench.fresh
    if ws is None:
        ws = bench.fresh = Workspace(bench.baseline.fork(), bench.baseline.initial, [])
    return None if ws.busy else ws


@dataclass
class AfterReference:
    """What the task's reference solution left (direct door, no user turns): the steps played (copies), its
    environment as a workspace (marked where the reference ended), the outcomes and messages of its steps, its
    results by step id."""

    steps: list[Step]
    workspace: Workspace
    outcomes: list[StepOutcome]
    messages: list[str]
    results: dict[str, Any]


def _starts_with(steps: Sequence[Step], prefix: Sequence[Step]) -> bool:
    return len(steps) >= len(prefix) and all(a == b for a, b in zip(steps, prefix, strict=False))


def after_reference_workspace(bench: Workbench) -> Workspace | None:
    """The workspace marked where the task's reference solution ended, when a run of it through the direct door
    (of a task without user turns) is at hand and free; None otherwise."""
    after = bench.after_reference
    if after is None or after.workspace.busy:
        return None
    return after.workspace


def after_reference_env(bench: Workbench) -> Environment | None:
    """A fork of the environment the reference solution left, when a run of it through the direct door (of a
    task without user turns) is at hand; None otherwise."""
    ws = after_reference_workspace(bench)
    if ws is None:
        return None
    with ws.run() as env:
        return env.fork()


async def _continue_reference(after: AfterReference, steps: Sequence[Step]) -> Trial:
    n = len(after.steps)
    with after.workspace.run() as env:
        results = dict(after.results)
        outcomes, messages = await play_steps(DirectDoor(env), steps[n:], n, results=results)
        return after.workspace.trial([*after.messages, *messages], [*after.outcomes, *outcomes])


async def _play_in(ws: Workspace, task: Task, steps: Sequence[Step]) -> Trial:
    """Play steps (and the task's user turns, if any) in a workspace of fresh runs."""
    with ws.run() as env:
        user = user_script(task)
        outcomes, messages = await play_steps(
            DirectDoor(env), steps, user=user, user_door=None if user is None else DirectDoor(env, actor="user")
        )
        return ws.trial(messages, outcomes)


async def _run_direct(bench: Workbench, steps: Sequence[Step]) -> Trial:
    """A run through the direct door of a task without user turns. Its calls' effects depend only on the state
    and the calls, so a run that starts with the whole reference solution continues from what the reference
    left (its workspace) instead of playing the reference again; the reference's own run keeps its environment
    for that."""
    after = bench.after_reference
    if after is not None and not after.workspace.busy and _starts_with(steps, after.steps):
        return await _continue_reference(after, steps)
    task = bench.task
    ref = task.reference_solution
    keep = after is None and len(steps) == len(ref) and _starts_with(steps, ref)
    ws = None if keep else workspace(bench)
    if ws is not None:
        return await _play_in(ws, task, steps)
    env = bench.baseline.fork()
    try:
        results: dict[str, Any] = {}
        outcomes, messages = await play_steps(DirectDoor(env), steps, results=results)
        trial = Trial(env.dump_over(bench.baseline.initial), env.audit(), messages, outcomes)
        if keep:
            played = [s.model_copy(deep=True) for s in steps]
            kept = Workspace(env, trial.state, trial.audit)
            bench.after_reference = AfterReference(played, kept, list(outcomes), list(messages), results)
        return trial
    finally:
        if not keep:
            env.close()


async def runs_without_each_step(
    bench: Workbench, steps: Sequence[Step], drops: Sequence[int], timeout: float = 60
) -> dict[int, Trial] | None:
    """For each index ``i`` in ``drops``, the trial of ``steps`` without step ``i`` (what
    ``run_steps(task, [*steps[:i], *steps[i + 1:]])`` gives), played through the direct door in the task's
    workspace: the steps are played once, marking the state before each step to drop, and each run without
    step ``i`` continues from the mark before it (the last drop first), so the steps before ``i`` are not played
    again. None when that cannot be done (a task with user turns: their triggers depend on the whole run; or the
    workspace is busy): then play each run on its own."""
    ws = workspace(bench) if user_script(bench.task) is None else None
    if ws is None or not drops:
        return None if ws is None else {}
    wanted = sorted(set(drops))
    out: dict[int, Trial] = {}
    with anyio.fail_after(timeout), ws.run() as env:
        door = DirectDoor(env)
        results: dict[str, Any] = {}
        outcomes: list[StepOutcome] = []
        messages: list[str] = []
        before: dict[int, tuple[Any, dict[str, Any], list[StepOutcome], list[str]]] = {}
        for i in range(wanted[-1] + 1):
            if i in wanted:
                before[i] = (env.mark(), dict(results), list(outcomes), list(messages))
            if i < wanted[-1]:
                done, said = await play_steps(door, steps[i : i + 1], i, results=results)
                outcomes += done
                messages += said
        for i in reversed(wanted):
            mark, earlier, done_before, said_before = before[i]
            env.rollback(mark)  # what steps[:i] left (the marks after it go)
            done, said = await play_steps(door, steps[i + 1 :], i, results=dict(earlier))
            out[i] = ws.trial([*said_before, *said], [*done_before, *done])
    return out


async def run_steps(bench: Workbench, steps: Sequence[Step], *, via_mcp: bool = False, timeout: float = 60) -> Trial:
    """Play steps in a fresh environment of the workbench's task and collect the trial."""
    task = bench.task
    if not via_mcp and user_script(task) is None:
        with anyio.fail_after(timeout):
            return await _run_direct(bench, steps)
    ws = None if via_mcp else workspace(bench)
    if ws is not None:
        with anyio.fail_after(timeout):
            return await _play_in(ws, task, steps)
    env = bench.baseline.fork()
    try:
        with anyio.fail_after(timeout):
            user = user_script(task)
            if via_mcp:
                async with (
                    open_mcp_door(memory_targets(env)) as door,
                    open_mcp_door(memory_targets(env, "user")) as as_user,
                ):
                    outcomes, messages = await play_steps(door, steps, user=user, user_door=as_user)
            else:
                outcomes, messages = await play_steps(
                    DirectDoor(env), steps, user=user, user_door=DirectDoor(env, actor="user")
                )
        return Trial(env.dump_over(bench.baseline.initial), env.audit(), messages, outcomes)
    finally:
        env.close()


__all__ = [
    "Baseline",
    "Row",
    "StepOutcome",
    "Trial",
    "TurnSchedule",
    "UserScript",
    "Workbench",
    "Workspace",
    "after_reference_env",
    "after_reference_workspace",
    "asked_facts",
    "grade_trial",
    "noop_steps",
    "play_now",
    "play_steps",
    "run_steps",
    "runs_without_each_step",
    "user_script",
    "workspace",
]
