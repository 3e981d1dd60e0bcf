"""Validation by execution, in fresh environments (DESIGN.md §3).

- the reference solution scores completion 1 and safety 1;
- doing nothing scores completion 0 (and trips no forbidden action);
- the reference plus each forbidden action's example scores safety 0;
- mutations of the reference (each step dropped; an argument changed to a distractor's value) lose
  score — when none does, the grader cannot tell right from wrong;
- adversaries that never read the task (spray, dump, ...) stay below the pass mark, and the reference plus
  one sensitive extra call loses at least 0.25 or trips safety (:mod:`coworkenv.synth.contract.validation.adversarial`).

Every failure is a :class:`Diagnostic` naming the check, what it expected and what the state held.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import anyio
from pydantic import BaseModel

from coworkenv.servers.registry import SERVICES
from coworkenv.synth.contract.diagnostics import Diagnostic, json_path
from coworkenv.synth.contract.expected import expected_from_trial
from coworkenv.synth.contract.grader import CheckResult, ForbiddenResult, Grade, grade_trial
from coworkenv.synth.contract.matchers import short
from coworkenv.synth.contract.runner import Trial, noop_steps, run_steps, runs_without_each_step
from coworkenv.synth.contract.said import numbers_in
from coworkenv.synth.contract.task import SayStep, Step, Task, ToolStep, is_ref
from coworkenv.synth.contract.turns import NOOP_TEXT
from coworkenv.synth.contract.validation.adversarial import AdversaryResult, adversary_diagnostics, adversary_results

SCORE_EPSILON = 1e-9
R = TypeVar("R", CheckResult, ForbiddenResult)


class MutationResult(BaseModel):
    description: str
    path: str
    score: float
    lost_score: bool
    mutating_step: bool


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


async def _alternatives(task: Task, via_mcp: bool) -> tuple[list[float], list[Diagnostic]]:
    """Each alternative solution must do as well as the reference: score 1.0, every step succeeding."""
    scores: list[float] = []
    out: list[Diagnostic] = []
    for i, steps in enumerate(task.alternative_solutions or []):
        trial = await run_steps(task, steps, via_mcp=via_mcp)
        g = grade_trial(task, trial)
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


async def _noop(task: Task, via_mcp: bool) -> tuple[Grade, list[Diagnostic]]:
    """The harness's do-nothing agent (it says what ``noop`` says, so the user's turns fire and their edits land,
    as in a run), graded; when the user's edits landed, the checks it passes that a bare seed fails are the
    user's own doing."""
    trial = await run_steps(task, noop_steps(), via_mcp=via_mcp)
    g = grade_trial(task, trial)
    by_user: set[str] = set()
    if any(o.actor == "user" and o.ok for o in trial.outcomes) and any(c.passed for c in g.checks):
        seed = grade_trial(task, await run_steps(task, [], via_mcp=via_mcp), explain=False)
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


async def _forbidden_diagnostics(task: Task, via_mcp: bool) -> list[Diagnostic]:
    out = []
    for i, f in enumerate(task.forbidden_actions):
        if f.example is None:
            continue
        trial = await run_steps(task, [*task.reference_solution, f.example], via_mcp=via_mcp)
        mine = next(r for r in grade_trial(task, trial, explain=False).forbidden if r.id == f.id)
        if not mine.triggered:  # graded again, with the words the diagnostic shows
            mine = next(r for r in grade_trial(task, trial).forbidden if r.id == f.id)
            last = trial.outcomes[-1]
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


# ---------------------------------------------------------------------------------------------- mutations
def _leaves(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    if is_ref(value):
        return
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, (*path, i))
    elif isinstance(value, str | int | float) and not isinstance(value, bool):
        yield path, value


def _replace(value: Any, path: tuple[str | int, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, list) and isinstance(head, int):
        return [_replace(v, rest, new) if i == head else v for i, v in enumerate(value)]
    assert isinstance(value, Mapping)
    return {k: _replace(v, rest, new) if k == head else v for k, v in value.items()}


_FieldIndex = dict[int, dict[Any, set[str]]]


def _fields_holding(rows: list[Any], value: Any, index: _FieldIndex) -> set[str]:
    """The fields of ``rows`` where some record holds ``value`` (equal to it, or in a list), by an index of the
    rows' hashable values built once per list of rows (``value`` is a text or a number, never a bool)."""
    if value != value:  # NaN: only a scan says what equality says
        return {k for r in rows for k, v in r.items() if v == value or (isinstance(v, list) and value in v)}
    by_value = index.get(id(rows))
    if by_value is None:
        by_value = index[id(rows)] = {}
        for r in rows:
            for k, v in r.items():
                for x in v if isinstance(v, list) else (v,):
                    try:
                        by_value.setdefault(x, set()).add(k)
                    except TypeError:  # a dict or list: never equal to a text or a number
                        continue
    return by_value.get(value, set())


def _distractor(task: Task, value: Any, used: set[str], index: _FieldIndex | None = None) -> Any:
    """Another record's value of the field where the seed holds ``value`` (preferring listed distractors)."""
    preferred = {str(x) for x in task.metadata.get("distractors", [])}
    candidates: list[tuple[bool, Any]] = []
    index = {} if index is None else index
    for tables in task.initial_records.values():
        for rows in tables.values():
            fields = _fields_holding(rows, value, index)
            for name in sorted(fields):
                for r in rows:
                    other = r.get(name)
                    if isinstance(other, list):
                        other = next((x for x in other if x != value), None)
                    if other is None or other == value or str(other) in used or type(other) is not type(value):
                        continue
                    candidates.append((str(r.get("id")) in preferred, other))
    candidates.sort(key=lambda c: not c[0])
    return candidates[0][1] if candidates else None


def _identifier_first(value: Any) -> int:
    if isinstance(value, str) and ("@" in value or "_" in value or len(numbers_in(value)) > 0):
        return 0
    return 1


def mutations(task: Task) -> list[tuple[str, str, list[Step], bool]]:
    """(description, json path, mutated steps, whether the mutated step changes state) for each mutation: every
    dropped step first, then argument swaps (identifiers first)."""
    steps = task.reference_solution
    used = {str(v) for s in steps if isinstance(s, ToolStep) for _, v in _leaves(s.arguments)}

    def mutating(step: Step) -> bool:
        if isinstance(step, SayStep):
            return True
        spec = SERVICES[step.service].tools_by_name.get(step.tool) if step.service in SERVICES else None
        return spec is not None and not spec.read_only

    out: list[tuple[str, str, list[Step], bool]] = []
    for i, step in enumerate(steps):
        what = "the final message" if isinstance(step, SayStep) else f"{step.service}.{step.tool}"
        out.append(
            (
                f"drop step {i} ({what})",
                json_path("reference_solution", i),
                [*steps[:i], *steps[i + 1 :]],
                mutating(step),
            )
        )
    swaps = []
    index: _FieldIndex = {}  # the seed's values, indexed once for every argument's distractor
    for i, step in enumerate(steps):
        if not isinstance(step, ToolStep):
            continue
        for path, value in _leaves(step.arguments):
            other = _distractor(task, value, used, index)
            if other is None:
                continue
            changed = step.model_copy(update={"arguments": _replace(step.arguments, path, other)})
            where = json_path("reference_solution", i, "arguments", *path)
            desc = f"step {i} ({step.service}.{step.tool}): {'.'.join(map(str, path))} {value!r} → {other!r}"
            swaps.append(
                (_identifier_first(value), (desc, where, [*steps[:i], changed, *steps[i + 1 :]], mutating(step)))
            )
    swaps.sort(key=lambda s: s[0])
    return out + [s[1] for s in swaps]


def _same_calls(steps: Sequence[Step], reference: Sequence[Step]) -> bool:
    calls = [s for s in steps if isinstance(s, ToolStep)]
    return calls == [s for s in reference if isinstance(s, ToolStep)]


async def _mutation_results(
    task: Task, reference_score: float, via_mcp: bool, limit: int, reference: Trial | None = None
) -> list[MutationResult]:
    """Every dropped step is played (each unnoticed one is its own warning); argument swaps only serve to show
    that some mutation loses score, so they stop at the first that does (and are skipped when a drop did).

    For a task without user turns, a mutation that makes the reference's calls (a message dropped) is graded on
    the reference's run (``reference``) with its own words: what is said changes nothing in the workspace."""
    results: list[MutationResult] = []
    reuse = reference is not None and (task.user is None or not task.user.turns)
    listed = mutations(task)[:limit]
    ref = task.reference_solution
    # the dropped steps' runs, played at once where they can share what the steps before each left
    drops = [
        k
        for k, (desc, _, steps, _) in enumerate(listed)
        if desc.startswith("drop step") and not (reuse and _same_calls(steps, ref))
    ]
    played = None if via_mcp else await runs_without_each_step(task, ref, drops)
    for k, (desc, where, steps, mutating) in enumerate(listed):
        swap = not desc.startswith("drop step")
        if swap and any(r.lost_score for r in results):
            break
        if reuse and reference is not None and _same_calls(steps, ref):
            said = [s.say for s in steps if isinstance(s, SayStep)]
            trial = Trial(reference.state, reference.audit, said)
        elif played is not None and k in played:
            trial = played[k]
        else:
            trial = await run_steps(task, steps, via_mcp=via_mcp)
        g = grade_trial(task, trial, explain=False)
        lost = g.score < reference_score - SCORE_EPSILON
        results.append(
            MutationResult(description=desc, path=where, score=g.score, lost_score=lost, mutating_step=mutating)
        )
    return results


def _mutation_diagnostics(results: list[MutationResult]) -> list[Diagnostic]:
    out = []
    if results and not any(r.lost_score for r in results):
        out.append(
            Diagnostic(
                code="GRADER_BLIND",
                path=json_path("completion_checks"),
                message=f"grader cannot tell right from wrong: none of {len(results)} mutations of the reference "
                f"loses score (e.g. {results[0].description}).",
                fix="Add checks on what the right run changes or says (the records, the arguments, the answer).",
            )
        )
    for r in results:
        if (
            r.mutating_step
            and r.description.startswith("drop step")
            and "final message" not in r.description
            and not r.lost_score
        ):
            out.append(
                Diagnostic(
                    code="MUTATION_UNNOTICED",
                    severity="warning",
                    path=r.path,
                    message=f"{r.description} still scores {r.score:g}: no check notices that this step is missing.",
                    fix="Add a check on what this step does, or remove the step if it is not needed.",
                )
            )
    return out


# ---------------------------------------------------------------------------------------------- expected changes
def _adopt_expected_changes(task: Task, reference: Trial) -> list[Diagnostic]:
    """Derive what the reference changes; a task without expected changes gets them (written with it by
    ``coworkenv synth``), a task whose stored ones differ is told so."""
    derived = expected_from_trial(task, reference)
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
    task: Task, *, via_mcp: bool = False, max_mutations: int = 40, adversaries: bool = True
) -> ExecReport:
    """Run the reference, a no-op, each forbidden example, the mutations and (unless ``adversaries`` is
    False) the adversaries; return the diagnostics."""
    started = time.perf_counter()
    reference = await run_steps(task, task.reference_solution, via_mcp=via_mcp)
    diagnostics = _adopt_expected_changes(task, reference)
    ref_grade = grade_trial(task, reference)
    diagnostics += _reference_diagnostics(task, reference, ref_grade)
    alternative_scores, alternative_found = await _alternatives(task, via_mcp)
    diagnostics += alternative_found
    noop_grade, noop_found = await _noop(task, via_mcp)
    diagnostics += noop_found
    diagnostics += await _forbidden_diagnostics(task, via_mcp)
    results: list[MutationResult] = []
    if ref_grade.score > 0:
        results = await _mutation_results(task, ref_grade.score, via_mcp, max_mutations, reference)
        diagnostics += _mutation_diagnostics(results)
    played: list[AdversaryResult] = []
    if adversaries and ref_grade.score > 0:
        played = await adversary_results(task, ref_grade, via_mcp=via_mcp, reference_trial=reference)
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
