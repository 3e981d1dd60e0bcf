"""Playing a list of steps in a fresh environment of a task, through either door of the services.

The direct door (``Environment.call``) is the fast path; ``via_mcp=True`` goes through the real MCP
in-memory client (``mcp.Client(env.server(name))``) instead. Both reach the same dispatcher, so the
same audit rows come out. ``$ref`` arguments are resolved from earlier results by lookup only.

A task with user turns (``task.user.turns``) is played the way the harness plays it with the scripted user
(:mod:`coworkenv.harness.user_sim`), through the same :class:`~coworkenv.synth.contract.turns.TurnSchedule`: a tool step
is a tool call of the agent, a ``say`` step a finished agent turn, and a turn's edits are made as written,
through a door whose actor is ``user``, when its trigger (``when``) fires. An edit that fails is a failed step
(its outcome's ``path()`` is ``$.user.turns[k].edits[j]``). :func:`noop_steps` is the harness's do-nothing agent.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AsyncExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio
from mcp import Client

from coworkenv.servers.kit import AuditRow, Environment
from coworkenv.servers.kit.environment import audit_order, default_services
from coworkenv.synth.contract.diagnostics import json_path
from coworkenv.synth.contract.task import RefError, SayStep, Step, Task, ToolStep, UserSpec, resolve_refs
from coworkenv.synth.contract.turns import NOOP_TEXT, TurnSchedule, asked_facts, keywords

Row = dict[str, Any]


@dataclass(frozen=True)
class StepOutcome:
    index: int
    step: Step
    ok: bool
    data: dict[str, Any] | None
    text: str
    actor: str = "agent"
    """'user' for an edit of a user turn (its index is the step after which it was made)."""
    edit: tuple[int, int] | None = None
    """For an edit of a user turn: (turn, edit) indices, as in ``$.user.turns[turn].edits[edit]``."""

    def path(self) -> str:
        """Where in the task the step is: ``$.reference_solution[i]``, or ``$.user.turns[k].edits[j]``."""
        if self.edit is not None:
            return json_path("user", "turns", self.edit[0], "edits", self.edit[1])
        return json_path("reference_solution", self.index)


@dataclass
class Trial:
    """What one run left: final state per service, the audit log, the agent's messages, each step's outcome."""

    state: dict[str, dict[str, list[Row]]]
    audit: list[AuditRow]
    messages: list[str]
    outcomes: list[StepOutcome] = field(default_factory=list)

    def failures(self) -> list[StepOutcome]:
        return [o for o in self.outcomes if not o.ok]


class Door(Protocol):
    async def call(
        self, service: str, tool: str, arguments: Mapping[str, Any]
    ) -> tuple[bool, dict[str, Any] | None, str]:
        """(ok, structured result, text) of one tool call."""
        ...


class DirectDoor:
    def __init__(self, env: Environment, actor: str = "agent") -> None:
        self.env = env
        self.actor = actor

    async def call(
        self, service: str, tool: str, arguments: Mapping[str, Any]
    ) -> tuple[bool, dict[str, Any] | None, str]:
        result = await self.env.call(service, tool, arguments, actor=self.actor)
        return not result.is_error, result.data, result.text


class MCPDoor:
    """One in-memory MCP client per service; enter with ``async with``."""

    def __init__(self, env: Environment, actor: str = "agent") -> None:
        self.env = env
        self.actor = actor
        self.clients: dict[str, Client] = {}
        self._stack = AsyncExitStack()

    async def __aenter__(self) -> MCPDoor:
        for name in self.env.states:
            self.clients[name] = await self._stack.enter_async_context(Client(self.env.server(name, self.actor)))
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()

    async def call(
        self, service: str, tool: str, arguments: Mapping[str, Any]
    ) -> tuple[bool, dict[str, Any] | None, str]:
        client = self.clients.get(service)
        if client is None:
            return False, None, f"service {service!r} is not in this environment"
        result = await client.call_tool(tool, dict(arguments))
        text = "".join(getattr(part, "text", "") for part in result.content)
        return not result.is_error, result.structured_content, text


class UserScript:
    """The task's scripted user while steps are replayed, deciding as the harness's ``ScriptedUser`` does, through
    the same :class:`~coworkenv.synth.contract.turns.TurnSchedule`: a tool step is a tool call of the agent, a ``say`` step
    a finished agent turn (answered with the held-back facts it asks about, if any)."""

    def __init__(self, task: Task, spec: UserSpec) -> None:
        self.turns = list(spec.turns)
        self.schedule = TurnSchedule.of([t.when for t in self.turns])
        self.facts = list(spec.held_back)
        self.request_words = keywords(task.request)

    @property
    def exhausted(self) -> bool:
        return self.schedule.exhausted

    def asked_facts(self, agent_text: str) -> list[str]:
        return asked_facts(agent_text, self.facts, self.request_words)

    def _turn(self, k: int | None) -> tuple[int, list[ToolStep]] | None:
        return None if k is None else (k, list(self.turns[k].edits))

    def after_tool_call(self, step: ToolStep, ok: bool) -> tuple[int, list[ToolStep]] | None:
        """The turn due right after this tool call, if any."""
        return self._turn(self.schedule.after_tool_call(step.service, step.tool, ok=ok))

    def after_say(self, text: str) -> tuple[int, list[ToolStep]] | None:
        """The turn the user answers this finished agent turn with, if any."""
        return self._turn(self.schedule.at_finished_turn(nothing_else=not self.asked_facts(text)))


def user_script(task: Task) -> UserScript | None:
    """The task's user turns to play along with its steps, or None for a task without any."""
    if task.user is None or not task.user.turns:
        return None
    return UserScript(task, task.user)


def noop_steps() -> list[Step]:
    """What the harness's do-nothing agent (``noop``) does: it says :data:`~coworkenv.synth.contract.turns.NOOP_TEXT` and
    stops. Its one finished turn gets the user's answer, so the user's turns fire and their edits land as in a run."""
    return [SayStep(say=NOOP_TEXT)]


async def _user_edits(
    door: Door, index: int, due: tuple[int, list[ToolStep]] | None, outcomes: list[StepOutcome]
) -> None:
    """Make the edits of a user turn as the harness's user does: as written (the user never sees the agent's
    results, so nothing is resolved), each failure an outcome naming ``$.user.turns[k].edits[j]``."""
    if due is None:
        return
    k, edits = due
    for j, edit in enumerate(edits):
        where = f"user turn {k}, edit {j} ({edit.service}.{edit.tool})"
        ok, data, text = await door.call(edit.service, edit.tool, edit.arguments)
        outcomes.append(StepOutcome(index, edit, ok, data, text if ok else f"{where} failed: {text}", "user", (k, j)))


async def play_steps(
    door: Door,
    steps: Sequence[Step],
    start: int = 0,
    *,
    user: UserScript | None = None,
    user_door: Door | None = None,
    results: dict[str, Any] | None = None,
) -> tuple[list[StepOutcome], list[str]]:
    """Run steps in order; a step whose $ref cannot resolve is skipped (its outcome says why). With ``user``
    (and ``user_door``, acting as ``user``), the user's turns' edits are made when their triggers fire.
    ``results``: the results of earlier steps by id (for steps that continue a run; updated in place)."""
    results = {} if results is None else results
    outcomes: list[StepOutcome] = []
    messages: list[str] = []
    for offset, step in enumerate(steps):
        index = start + offset
        if isinstance(step, SayStep):
            messages.append(step.say)
            outcomes.append(StepOutcome(index, step, True, None, step.say))
            if user is not None and user_door is not None:
                await _user_edits(user_door, index, user.after_say(step.say), outcomes)
            continue
        try:
            arguments = resolve_refs(step.arguments, results)
        except RefError as exc:
            outcomes.append(StepOutcome(index, step, False, None, f"skipped: {exc}"))
            continue
        ok, data, text = await door.call(step.service, step.tool, arguments)
        if ok and step.id:
            results[step.id] = data
        outcomes.append(StepOutcome(index, step, ok, data, text))
        if user is not None and user_door is not None:
            await _user_edits(user_door, index, user.after_tool_call(step, ok), outcomes)
    return outcomes, messages


def initial_dump(task: Task) -> dict[str, dict[str, list[Row]]]:
    """The state every fresh environment of the task starts from (cached). A trial's state shares this dump's
    lists for the tables nothing wrote to, so grading diffs only what changed."""
    cached = task._cache.get("initial_dump")
    if cached is None:
        fresh_environment(task).close()
        # rows shared with the trials' dumps where unchanged, so a diff skips them by identity
        cached = task._cache["pristine_env"].dump_over({})
        task._cache["initial_dump"] = cached
    return cached


def fresh_environment(task: Task) -> Environment:
    """A fresh environment of the task: a fork of one pristine environment seeded once per task object
    (validation plays a task 10-20 times; a fork costs ~0.2 ms, seeding several ms)."""
    pristine = task._cache.get("pristine_env")
    if not isinstance(pristine, Environment):
        pristine = Environment.create(task.seeds(), now=task.now, parsed=_parsed_seeds(task))
        task._cache["pristine_env"] = pristine
    return pristine.fork()


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
                async with MCPDoor(env) as door, MCPDoor(env, actor="user") as as_user:
                    outcomes, messages = await play_steps(door, steps, user=user, user_door=as_user)
            else:
                outcomes, messages = await play_steps(
                    DirectDoor(env), steps, user=user, user_door=DirectDoor(env, actor="user")
                )
        return Trial(env.dump_over(initial_dump(task)), env.audit(), messages, outcomes)
    finally:
        env.close()
