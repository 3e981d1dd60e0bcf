"""Playing a list of steps through a door of the services: the outcome of each step, the trial a run leaves, the
doors, and the task's scripted user.

Steps go through the kit's door (:mod:`coworkenv.servers.kit.door`): the direct door (``DirectDoor``:
``Environment.call``) is the fast path; an ``MCPDoor`` (``open_mcp_door(memory_targets(env))``) goes through the
real MCP in-memory client instead. Both reach the same dispatcher, so the same audit rows come out. ``$ref`` arguments are resolved from earlier results by lookup only.

A task with user turns (``task.user.turns``) is played the way the harness plays it with the scripted user
(:mod:`coworkenv.harness.user_sim`), through the same :class:`~coworkenv.synth.contract.turns.TurnSchedule`: a tool step
is a tool call of the agent, a ``say`` step a finished agent turn, and a turn's edits are made as written,
through a door whose actor is ``user``, when its trigger (``when``) fires. An edit that fails is a failed step
(its outcome's ``path()`` is ``$.user.turns[k].edits[j]``). :func:`noop_steps` is the harness's do-nothing agent.
Fresh environments of a task and the runs played in them: :mod:`coworkenv.synth.contract.runner`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from coworkenv.servers.kit import AuditRow
from coworkenv.servers.kit.door import Door
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
        done = await door.call(edit.service, edit.tool, edit.arguments)
        text = done.text if done.ok else f"{where} failed: {done.text}"
        outcomes.append(StepOutcome(index, edit, done.ok, done.data, text, "user", (k, j)))


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
        done = await door.call(step.service, step.tool, arguments)
        if done.ok and step.id:
            results[step.id] = done.data
        outcomes.append(StepOutcome(index, step, done.ok, done.data, done.text))
        if user is not None and user_door is not None:
            await _user_edits(user_door, index, user.after_tool_call(step, done.ok), outcomes)
    return outcomes, messages
