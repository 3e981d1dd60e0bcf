"""Validation by execution, in fresh environments (docs/ARCHITECTURE.md §3).

- the reference solution scores completion 1 and safety 1;
- doing nothing scores completion 0 (and trips no forbidden action);
- the reference plus each forbidden action's example scores safety 0;
- mutations of the reference (each step dropped; an argument changed to a distractor's value) lose
  score — when none does, the grader cannot tell right from wrong (:mod:`coworkenv.synth.contract.validation.mutations`);
- adversaries that never read the task (spray, dump, ...) stay below the pass mark, and the reference plus
  one sensitive extra call loses at least 0.25 or trips safety (:mod:`coworkenv.synth.contract.validation.adversarial`).

Every failure is a :class:`Diagnostic` naming the check, what it expected and what the state held.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TypeVar

import anyio
from pydantic import BaseModel

from coworkenv.servers.kit.environment import ServiceLookup
from coworkenv.synth.contract.baseline import Baseline
from coworkenv.synth.contract.diagnostics import Diagnostic, json_path
from coworkenv.synth.contract.facts import ParsedSeeds
from coworkenv.synth.contract.grader import CheckResult, ForbiddenResult, Grade
from coworkenv.synth.contract.matchers import short
from coworkenv.synth.contract.runner import Trial, Workbench, grade_trial, noop_steps, run_steps
from coworkenv.synth.contract.task import Step, Task
from coworkenv.synth.contract.turns import NOOP_TEXT
from coworkenv.synth.contract.validation.adversarial import AdversaryResult, adversary_diagnostics, adversary_results
from coworkenv.synth.contract.validation.adversary_words import turn_steps
from coworkenv.synth.contract.validation.lookup import validating_with
from coworkenv.synth.contract.validation.mutations import (
    SCORE_EPSILON,
    MutationResult,
    mutation_diagnostics,
    mutation_results,
    mutations,
)

R = TypeVar("R", CheckResult, ForbiddenResult)


class ExecReport(BaseModel):
    task_id: str
    diagnostics: list[Diagnostic]
    reference: Grade | None = None
    noop: Grade | None = None
    mutations: list[MutationResult] = []
    alternatives: list[float] = []
    """Each alternative solution's score (all must be 1.0)."""
    adversaries: list[AdversaryResult] = []
    """Each adversary's score (:mod:`coworkenv.synth.contract.validation.adversaries`); empty when they were not run."""
    seconds: float = 0.0


# ---------------------------------------------------------------------------------------------- the runs
def _reference_diagnostics(task: Task, trial: Trial, g: Grade) -> list[Diagnostic]:
    out = []
    for o in trial.failures():
        out.append(
            Diagnostic(
                code="REFERENCE_STEP_FAILED",
                path=o.path(),
                message=f"reference step {o.index} failed: {o.text}" if o.edit is None else o.text,
                fix="Fix the step's tool or arguments (or the seed it relies on) so that it succeeds.",
            )
        )
    # a check blocked by another's failure is left out: the one blocking it is reported
    out += _flagged(
        g.checks,
        "completion_checks",
        "REFERENCE_FAILS_CHECK",
        lambda c: not c.passed and not c.blocked_by,
        lambda c: f"the reference solution does not pass this check: {c.reason}.",
        "Correct the check's expectation, or the reference solution, so that a right run passes.",
    )
    out += _flagged(
        g.forbidden,
        "forbidden_actions",
        "REFERENCE_TRIPS_FORBIDDEN",
        lambda f: f.triggered,
        lambda f: f"the reference solution commits this forbidden action: {f.found}.",
        "Narrow the forbidden match so the right run does not match it, or fix the reference.",
    )
    return out


async def _alternatives(bench: Workbench, via_mcp: bool) -> tuple[list[float], list[Diagnostic]]:
    """Each alternative solution must do as well as the reference: score 1.0, every step succeeding."""
    scores: list[float] = []
    out: list[Diagnostic] = []
    for i, steps in enumerate(bench.task.alternative_solutions or []):
        trial = await run_steps(bench, steps, via_mcp=via_mcp)
        g = grade_trial(bench, trial)
        scores.append(g.score)
        failed = [f"step {o.index}: {o.text}" for o in trial.failures() if o.edit is None]
        missed = [c.id for c in g.checks if not c.passed]
        if g.score < 1.0 - SCORE_EPSILON or failed:
            why = "; ".join([*failed, *([f"fails check(s) {', '.join(missed)}"] if missed else [])])
            if g.safety < 1.0:
                why = "; ".join([why, "trips the safety gate"]) if why else "trips the safety gate"
            if g.unexplained:
                changed = [f"{u.op} {u.service}.{u.table} {u.id}" for u in g.unexplained]
                why += f"; changes what the reference does not ({short(changed, 200)})"
            out.append(
                Diagnostic(
                    code="ALTERNATIVE_FAILS",
                    path=json_path("alternative_solutions", i),
                    message=f"alternative solution {i} scores {g.score:g}, not 1.0: {why or 'see its grade'}.",
                    fix="Check outcomes rather than the path the reference takes, or fix the alternative's steps.",
                )
            )
    return scores, out


async def _noop(bench: Workbench, via_mcp: bool) -> tuple[Grade, list[Diagnostic]]:
    """The harness's do-nothing agent (it says what ``noop`` says, so the user's turns fire and their edits land,
    as in a run), graded; when the user's edits landed, the checks it passes that a bare seed fails are the
    user's own doing."""
    trial = await run_steps(bench, noop_steps(), via_mcp=via_mcp)
    g = grade_trial(bench, trial)
    by_user: set[str] = set()
    if any(o.actor == "user" and o.ok for o in trial.outcomes) and any(c.passed for c in g.checks):
        seed = grade_trial(bench, await run_steps(bench, [], via_mcp=via_mcp), explain=False)
        by_user = {c.id for c in g.checks if c.passed} - {c.id for c in seed.checks if c.passed}
    return g, _noop_diagnostics(g, by_user)


def _noop_diagnostics(g: Grade, by_user: set[str]) -> list[Diagnostic]:
    def message(c: CheckResult) -> str:
        who = "the user's own edit satisfies" if c.id in by_user else "doing nothing passes"
        return (
            f"{who} this check (worth {c.weight:g}), so a do-nothing agent (it says {NOOP_TEXT!r}) scores "
            f"completion {g.completion:g}: expected {c.expected}; found {c.found}."
        )

    return _flagged(
        g.checks,
        "completion_checks",
        "NOOP_PASSES_CHECK",
        lambda c: c.passed,
        message,
        "Check for something only the agent's work produces (not what the user's turns already change), or list "
        "in 'requires' a check that needs the agent's work.",
    ) + _flagged(
        g.forbidden,
        "forbidden_actions",
        "NOOP_TRIPS_FORBIDDEN",
        lambda f: f.triggered,
        lambda f: f"doing nothing already matches this forbidden action: {f.found}.",
        "Match what the agent would do wrong, not something true of the seed.",
    )


def _flagged(
    results: Sequence[R],
    section: str,
    code: str,
    flagged: Callable[[R], bool],
    message: Callable[[R], str],
    fix: str,
) -> list[Diagnostic]:
    """One diagnostic per check (or forbidden action) result that ``flagged`` picks, at its place in ``section``."""
    return [
        Diagnostic(code=code, path=json_path(section, i), check=r.id, message=message(r), fix=fix)
        for i, r in enumerate(results)
        if flagged(r)
    ]


def _with_example(task: Task, example: Step, before_turn: int | None, reference: Trial) -> list[Step]:
    """The reference plus a forbidden action's example: at the end, or (``before_turn``) right before the step
    of the reference that brings that user turn."""
    steps = list(task.reference_solution)
    turns = turn_steps(task, reference.outcomes) if before_turn is not None else []
    at = turns[before_turn - 1] if before_turn is not None and before_turn <= len(turns) else len(steps)
    return [*steps[:at], example, *steps[at:]]


async def _forbidden_diagnostics(bench: Workbench, via_mcp: bool, reference: Trial) -> list[Diagnostic]:
    task, out = bench.task, []
    for i, f in enumerate(task.forbidden_actions):
        if f.example is None:
            continue
        steps = _with_example(task, f.example, f.before_turn, reference)
        trial = await run_steps(bench, steps, via_mcp=via_mcp)
        mine = next(r for r in grade_trial(bench, trial, explain=False).forbidden if r.id == f.id)
        if not mine.triggered:  # graded again, with the words the diagnostic shows
            mine = next(r for r in grade_trial(bench, trial).forbidden if r.id == f.id)
            last = next((o for o in trial.outcomes if o.step is f.example), trial.outcomes[-1])
            ran = f"the example call {'succeeded' if last.ok else 'failed: ' + last.text}"
            out.append(
                Diagnostic(
                    code="FORBIDDEN_NOT_TRIPPED",
                    path=json_path("forbidden_actions", i, "match"),
                    check=f.id,
                    message=f"after the reference plus this action's example, the gate stays open ({ran}): "
                    f"expected {mine.expected}; found {mine.found}.",
                    fix="Make the match describe what the example does (tool, arguments, actor), or fix the example.",
                )
            )
    return out


# ---------------------------------------------------------------------------------------------- expected changes
def _adopt_expected_changes(baseline: Baseline, reference: Trial) -> list[Diagnostic]:
    """Derive what the reference changes; a task without expected changes gets them (written with it by
    ``coworkenv synth``), a task whose stored ones differ is told so. The baseline grades with the stored ones
    unless they are stale (:func:`~coworkenv.synth.contract.expected.stale_keys`): then with those derived."""
    task = baseline.task
    derived = baseline.expected_from(reference)
    if baseline.expected is None:
        baseline.expected = derived
    if task.expected_changes is None:
        task.expected_changes = derived
        return []
    stored = [e.model_dump() for e in task.expected_changes]
    if stored == [e.model_dump() for e in derived]:
        return []
    shown = short([e.model_dump() for e in derived], 400)
    return [
        Diagnostic(
            code="EXPECTED_CHANGES_STALE",
            path=json_path("expected_changes"),
            message=f"the stored expected changes differ from what the reference solution changes: {shown}.",
            fix="Delete 'expected_changes' from the task to have validation derive them again.",
        )
    ]


# ---------------------------------------------------------------------------------------------- entry points
async def validate_exec(
    task: Task,
    *,
    via_mcp: bool = False,
    max_mutations: int = 40,
    adversaries: bool = True,
    parsed: ParsedSeeds | None = None,
    registry: ServiceLookup | None = None,
) -> ExecReport:
    """Run the reference, a no-op, each forbidden example, the mutations and (unless ``adversaries`` is
    False) the adversaries; return the diagnostics.

    The task is seeded once, here: its :class:`Workbench` (the baseline, whose expected changes come from this
    run of the reference, and the memos of this validation) is made here and handed to every run and grade.
    ``parsed``: what static validation parsed of the task's seeds; ``registry``: where its services are looked up
    (default: every known service)."""
    started = time.perf_counter()
    bench = Workbench(Baseline.seeded(task, parsed, registry))
    try:
        with validating_with(bench.baseline.services):
            return await _validate_in(bench, started, via_mcp, max_mutations, adversaries)
    finally:
        bench.close()


async def _validate_in(
    bench: Workbench, started: float, via_mcp: bool, max_mutations: int, adversaries: bool
) -> ExecReport:
    """:func:`validate_exec`'s runs, in the task's own services."""
    task = bench.task
    reference = await run_steps(bench, task.reference_solution, via_mcp=via_mcp)
    diagnostics = _adopt_expected_changes(bench.baseline, reference)
    ref_grade = grade_trial(bench, reference)
    diagnostics += _reference_diagnostics(task, reference, ref_grade)
    alternative_scores, alternative_found = await _alternatives(bench, via_mcp)
    diagnostics += alternative_found
    noop_grade, noop_found = await _noop(bench, via_mcp)
    diagnostics += noop_found
    diagnostics += await _forbidden_diagnostics(bench, via_mcp, reference)
    results: list[MutationResult] = []
    if ref_grade.score > 0:
        results = await mutation_results(bench, ref_grade.score, via_mcp, max_mutations, reference)
        diagnostics += mutation_diagnostics(results)
    played: list[AdversaryResult] = []
    if adversaries and ref_grade.score > 0:
        played = await adversary_results(bench, ref_grade, via_mcp=via_mcp, reference_trial=reference)
        diagnostics += adversary_diagnostics(task, played, ref_grade)
    return ExecReport(
        task_id=task.id,
        diagnostics=diagnostics,
        reference=ref_grade,
        noop=noop_grade,
        mutations=results,
        alternatives=alternative_scores,
        adversaries=played,
        seconds=round(time.perf_counter() - started, 4),
    )


def validate_exec_sync(
    task: Task, *, via_mcp: bool = False, max_mutations: int = 40, adversaries: bool = True
) -> ExecReport:
    async def main() -> ExecReport:
        return await validate_exec(task, via_mcp=via_mcp, max_mutations=max_mutations, adversaries=adversaries)

    return anyio.run(main)


__all__ = ["SCORE_EPSILON", "ExecReport", "MutationResult", "mutations", "validate_exec", "validate_exec_sync"]
