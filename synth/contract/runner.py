"""Playing a list of steps in a fresh environment of a task, through either door of the services.

The steps, doors and scripted user are :mod:`coworkenv.synth.contract.play` (re-exported here); this module holds
the task's fresh environments (a fork of one pristine environment per task), the workspaces many direct-door runs
share (marked and rolled back), and :func:`run_steps` / :func:`play_now`, which pick the cheapest way to play.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import anyio

from coworkenv.servers.kit import AuditRow, Environment
from coworkenv.servers.kit.door import DirectDoor, memory_targets, open_mcp_door
from coworkenv.servers.kit.environment import audit_order, default_services
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


def initial_dump(task: Task) -> dict[str, dict[str, list[Row]]]:
    """The state every fresh environment of the task starts from (cached). A trial's state shares this dump's
    lists for the tables nothing wrote to, so grading diffs only what changed."""
    cached = task._cache.get("initial_dump")
    if cached is None:
        # rows shared with the trials' dumps where unchanged, so a diff skips them by identity
        cached = _pristine(task).dump_over({})
        task._cache["initial_dump"] = cached
    return cached


def fresh_environment(task: Task) -> Environment:
    """A fresh environment of the task: a fork of one pristine environment seeded once per task object
    (validation plays a task 10-20 times; a fork costs ~0.2 ms, seeding several ms)."""
    return _pristine(task).fork()


def _pristine(task: Task) -> Environment:
    """The task's pristine environment, seeded the first time it is asked for; nothing plays in it."""
    pristine = task._cache.get("pristine_env")
    if not isinstance(pristine, Environment):
        pristine = Environment.create(task.seeds(), now=task.now, parsed=_parsed_seeds(task))
        task._cache["pristine_env"] = pristine
    return pristine


def _parsed_seeds(task: Task) -> dict[str, Any]:
    """The seeds static validation parsed (validated and normalised) for the shipped services, where the task
    still holds those very seeds: they need not be validated again to seed the environment."""
    kept = task._cache.get("parsed_seeds", {})
    services = default_services() or {}
    return {
        name: parsed
        for name, (service, seed, parsed) in kept.items()
        if services.get(name) is service and task.initial_records.get(name) is seed
    }


def play_now(task: Task, steps: Sequence[Step]) -> Trial:
    """Play steps through the direct door, synchronously (its calls never suspend): for code that is not
    async, or that must not give up the event loop (grading)."""
    env = fresh_environment(task)
    try:
        coro = play_steps(DirectDoor(env), steps, user=user_script(task), user_door=DirectDoor(env, actor="user"))
        try:
            coro.send(None)
        except StopIteration as stop:
            outcomes, messages = stop.value
        else:
            coro.close()
            raise RuntimeError("a direct-door call suspended; play these steps with `await run_steps(...)`")
        return Trial(env.dump_over(initial_dump(task)), env.audit(), messages, outcomes)
    finally:
        env.close()


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


def workspace(task: Task) -> Workspace | None:
    """The task's workspace of fresh runs (a fork of its pristine environment, made once per task object), or
    None while it plays another run (then play on a fork)."""
    ws = task._cache.get("workspace")
    if not isinstance(ws, Workspace):
        ws = task._cache["workspace"] = Workspace(fresh_environment(task), initial_dump(task), [])
    return None if ws.busy else ws


@dataclass
class _AfterReference:
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


def after_reference_workspace(task: Task) -> Workspace | None:
    """The workspace marked where the task's reference solution ended, when a run of it through the direct door
    (of a task without user turns) is at hand and free; None otherwise."""
    after = task._cache.get("after_reference")
    if not isinstance(after, _AfterReference) or after.workspace.busy:
        return None
    return after.workspace


def after_reference_env(task: Task) -> Environment | None:
    """A fork of the environment the reference solution left, when a run of it through the direct door (of a
    task without user turns) is at hand; None otherwise."""
    ws = after_reference_workspace(task)
    if ws is None:
        return None
    with ws.run() as env:
        return env.fork()


async def _continue_reference(after: _AfterReference, steps: Sequence[Step]) -> Trial:
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


async def _run_direct(task: Task, steps: Sequence[Step]) -> Trial:
    """A run through the direct door of a task without user turns. Its calls' effects depend only on the state
    and the calls, so a run that starts with the whole reference solution continues from what the reference
    left (its workspace) instead of playing the reference again; the reference's own run keeps its environment
    for that."""
    after = task._cache.get("after_reference")
    if isinstance(after, _AfterReference) and not after.workspace.busy and _starts_with(steps, after.steps):
        return await _continue_reference(after, steps)
    ref = task.reference_solution
    keep = after is None and len(steps) == len(ref) and _starts_with(steps, ref)
    ws = None if keep else workspace(task)
    if ws is not None:
        return await _play_in(ws, task, steps)
    env = fresh_environment(task)
    try:
        results: dict[str, Any] = {}
        outcomes, messages = await play_steps(DirectDoor(env), steps, results=results)
        trial = Trial(env.dump_over(initial_dump(task)), env.audit(), messages, outcomes)
        if keep:
            played = [s.model_copy(deep=True) for s in steps]
            kept = Workspace(env, trial.state, trial.audit)
            task._cache["after_reference"] = _AfterReference(played, kept, list(outcomes), list(messages), results)
        return trial
    finally:
        if not keep:
            env.close()


async def runs_without_each_step(
    task: Task, steps: Sequence[Step], drops: Sequence[int], timeout: float = 60
) -> dict[int, Trial] | None:
    """For each index ``i`` in ``drops``, the trial of ``steps`` without step ``i`` (what
    ``run_steps(task, [*steps[:i], *steps[i + 1:]])`` gives), played through the direct door in the task's
    workspace: the steps are played once, marking the state before each step to drop, and each run without
    step ``i`` continues from the mark before it (the last drop first), so the steps before ``i`` are not played
    again. None when that cannot be done (a task with user turns: their triggers depend on the whole run; or the
    workspace is busy): then play each run on its own."""
    ws = workspace(task) if user_script(task) is None else None
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


async def run_steps(task: Task, steps: Sequence[Step], *, via_mcp: bool = False, timeout: float = 60) -> Trial:
    """Play steps in a fresh environment of the task and collect the trial."""
    if not via_mcp and user_script(task) is None:
        with anyio.fail_after(timeout):
            return await _run_direct(task, steps)
    ws = None if via_mcp else workspace(task)
    if ws is not None:
        with anyio.fail_after(timeout):
            return await _play_in(ws, task, steps)
    env = fresh_environment(task)
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
        return Trial(env.dump_over(initial_dump(task)), env.audit(), messages, outcomes)
    finally:
        env.close()


__all__ = [
    "Row",
    "StepOutcome",
    "Trial",
    "TurnSchedule",
    "UserScript",
    "Workspace",
    "after_reference_env",
    "after_reference_workspace",
    "asked_facts",
    "fresh_environment",
    "initial_dump",
    "noop_steps",
    "play_now",
    "play_steps",
    "run_steps",
    "runs_without_each_step",
    "user_script",
    "workspace",
]
