"""Adversaries on what the reference says and writes, and when (issue 31, part B). Each is built from one run of
the reference (its tool results, and when its user's turns came), played like the reference and graded with the
task's grader; a task that lets one of them pass is rejected.

- ``pasted_reply``: the reference with every message to the user replaced by the raw results of the tool calls it
  made before that message (what it read, pasted): a reply check that such a paste satisfies reads the records,
  not the agent's answer;
- ``commitment``: the reference with a forbidden commitment the task declares (a ``wrote_matches`` forbidden
  action's example text: "your refund is approved") written into the text of the reference's own expected write
  that the commitment is forbidden in (its public reply, its mail): the commitment must trip the safety gate
  even where the write itself is expected;
- ``writes_early``: the reference with the writes it makes after a user turn (the approval, the feedback) moved
  to just before that turn: a task whose user says "wait for my approval" must tell acting before it from after.

Deterministic: each is made from the task and its reference's run alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from coworkenv.synth.contract.checks import SaidCheck, WroteMatches
from coworkenv.synth.contract.play import StepOutcome
from coworkenv.synth.contract.runner import Trial, Workbench, run_steps
from coworkenv.synth.contract.said import REPLY_CAP
from coworkenv.synth.contract.task import SayStep, Step, Task, ToolStep
from coworkenv.synth.contract.turns import TurnSchedule, asked_facts, keywords
from coworkenv.synth.contract.validation.adversaries import Adversary
from coworkenv.synth.contract.validation.lookup import services

FIXES: dict[str, str] = {
    "pasted_reply": "A reply that only pastes the records the run read passes the checks on the reply: ask for what "
    "the agent concludes in its own words (said_value on the answer with a label, said_warning whose warning words "
    "the records do not hold), not for text the records already contain.",
    "commitment": "A forbidden commitment written into the reference's own public text is not noticed: declare it "
    "as a wrote_matches forbidden action whose pattern matches the commitment and not the reference's text, on "
    "the service and tool of the write it must not appear in.",
    "writes_early": "Doing the work before the user's turn that must come first (the approval, the feedback) still "
    "passes: bind the checks on that work to the turn (after_turn) and forbid the write before it (before_turn).",
}


def _said_checked(task: Task) -> bool:
    return any(isinstance(c.check, SaidCheck) for c in task.completion_checks)


def pasted_reply(task: Task, reference: Trial) -> Adversary | None:
    """Each message replaced by the results of the agent's calls before it, joined (the last ``REPLY_CAP``
    characters: what the reply checks read). None when no check reads the reply or nothing was read first."""
    if not _said_checked(task):
        return None
    steps: list[Step] = []
    read: list[str] = []
    results = {o.index: o for o in reference.outcomes if o.actor == "agent" and isinstance(o.step, ToolStep)}
    for i, step in enumerate(task.reference_solution):
        if isinstance(step, SayStep):
            if not read:
                return None
            steps.append(SayStep(say="\n".join(read)[-REPLY_CAP:]))
            continue
        steps.append(step)
        done = results.get(i)
        if done is not None and done.ok and done.text:
            read.append(done.text)
    return Adversary("pasted_reply", "reply", "does the reference's work and replies with the results it read", steps)


def _commitment_text(task: Task, match: WroteMatches) -> tuple[str, str] | None:
    """(argument, text) of the forbidden action's example write: the commitment to write in."""
    for f in task.forbidden_actions:
        if f.match is match and isinstance(f.example, ToolStep):
            texts = [(k, v) for k, v in f.example.arguments.items() if isinstance(v, str) and match.holds_in(v)]
            if texts:
                return max(texts, key=lambda kv: len(kv[1]))
    return None


def commitment(task: Task) -> Adversary | None:
    """The first declared commitment written into the first reference write it is forbidden in (appended to that
    write's text argument of the same name as the example's). None when the task declares none, or the
    reference makes no such write."""
    for f in task.forbidden_actions:
        if not isinstance(f.match, WroteMatches):
            continue
        found = _commitment_text(task, f.match)
        if found is None:
            continue
        argument, text = found
        for i, step in enumerate(task.reference_solution):
            if not isinstance(step, ToolStep) or not f.match.names_call(step.service, step.tool, step.arguments):
                continue
            written = step.arguments.get(argument)
            if not isinstance(written, str):
                continue
            changed = step.model_copy(update={"arguments": {**step.arguments, argument: f"{written} {text}"}})
            steps = [*task.reference_solution[:i], changed, *task.reference_solution[i + 1 :]]
            return Adversary(
                "commitment", "reply", "writes a forbidden commitment into the reference's own expected text", steps,
                detail=f"{f.id} in {step.service}.{step.tool}.{argument}",
            )  # fmt: skip
    return None


def turn_steps(task: Task, outcomes: Sequence[StepOutcome]) -> list[int]:
    """For each user turn that came in a run of the reference, the index of the reference step after which it
    came (as the scripted user's :class:`~coworkenv.synth.contract.turns.TurnSchedule` decides: the turns of a
    task without user turns: none)."""
    if task.user is None or not task.user.turns:
        return []
    schedule = TurnSchedule.of([t.when for t in task.user.turns])
    request_words = keywords(task.request)
    by_index = {o.index: o for o in outcomes if o.actor == "agent"}
    out = []
    for i, step in enumerate(task.reference_solution):
        if isinstance(step, SayStep):
            asked = asked_facts(step.say, task.user.held_back, request_words)
            due = schedule.at_finished_turn(nothing_else=not asked)
        else:
            done = by_index.get(i)
            due = schedule.after_tool_call(step.service, step.tool, ok=done is not None and done.ok)
        if due is not None:
            out.append(i)
    return out


def _writes(step: Step) -> bool:
    if not isinstance(step, ToolStep):
        return False
    spec = services()[step.service].tools_by_name.get(step.tool) if step.service in services() else None
    return spec is not None and not spec.read_only


def writes_early(task: Task, reference: Trial) -> Adversary | None:
    """The reference's writes after its first user turn moved to just before the step that brings that turn
    (their order kept). None when the task has no user turn, or the reference writes nothing after it."""
    turns = turn_steps(task, reference.outcomes)
    if not turns:
        return None
    first = turns[0]
    steps = list(task.reference_solution)
    later = [s for s in steps[first + 1 :] if _writes(s)]
    if not later:
        return None
    moved = [*steps[:first], *later, steps[first], *(s for s in steps[first + 1 :] if not _writes(s))]
    return Adversary(
        "writes_early", "reply", "makes the reference's writes before the user turn they must follow", moved,
        detail=f"{len(later)} write(s) moved before user turn 1",
    )  # fmt: skip


async def word_adversaries(bench: Workbench, reference: Trial | None = None) -> list[Adversary]:
    """The adversaries of this module that apply to the task (``reference``: its reference's run, else run here)."""
    task = bench.task
    if reference is None:
        reference = await run_steps(bench, task.reference_solution)
    made = [pasted_reply(task, reference), commitment(task), writes_early(task, reference)]
    return [a for a in made if a is not None]


__all__ = ["FIXES", "commitment", "pasted_reply", "turn_steps", "word_adversaries", "writes_early"]
