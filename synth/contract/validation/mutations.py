"""Mutations of a task's reference solution, for validation by execution (docs/ARCHITECTURE.md §3): each step dropped,
and an argument changed to a distractor's value (another record's value of the same field). Each must lose score;
when none does, the grader cannot tell right from wrong (``GRADER_BLIND``), and a dropped state-changing step that
nobody notices is a warning (``MUTATION_UNNOTICED``). Run by
:func:`~coworkenv.synth.contract.validation.execution.validate_exec`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from coworkenv.synth.contract.amounts import numbers_in
from coworkenv.synth.contract.diagnostics import Diagnostic, json_path
from coworkenv.synth.contract.runner import Trial, Workbench, grade_trial, run_steps, runs_without_each_step
from coworkenv.synth.contract.task import SayStep, Step, Task, ToolStep, is_ref
from coworkenv.synth.contract.validation.lookup import services

SCORE_EPSILON = 1e-9


class MutationResult(BaseModel):
    description: str
    path: str
    score: float
    lost_score: bool
    mutating_step: bool


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
        spec = services()[step.service].tools_by_name.get(step.tool) if step.service in services() else None
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


async def mutation_results(
    bench: Workbench, reference_score: float, via_mcp: bool, limit: int, reference: Trial | None = None
) -> list[MutationResult]:
    """Every dropped state-changing step (and the dropped final message) is played: each unnoticed one is its own
    warning. Dropped read-only steps and argument swaps only serve to show that some mutation loses score, so
    they are played only while none has (read-only drops first, then swaps, which stop at the first that does).

    For a task without user turns, a mutation that makes the reference's calls (a message dropped) is graded on
    the reference's run (``reference``) with its own words: what is said changes nothing in the workspace."""
    task = bench.task
    reuse = reference is not None and (task.user is None or not task.user.turns)
    listed = mutations(task)[:limit]
    ref = task.reference_solution
    done: dict[int, MutationResult] = {}

    async def judge(ks: list[int]) -> None:
        """Play and grade these mutations; dropped steps at once where they can share what the steps before
        each left."""
        drops = [
            k for k in ks if listed[k][0].startswith("drop step") and not (reuse and _same_calls(listed[k][2], ref))
        ]
        played = None if via_mcp or not drops else await runs_without_each_step(bench, ref, drops)
        for k in ks:
            desc, where, steps, mutating = listed[k]
            if reuse and reference is not None and _same_calls(steps, ref):
                said = [s.say for s in steps if isinstance(s, SayStep)]
                trial = Trial(reference.state, reference.audit, said)
            elif played is not None and k in played:
                trial = played[k]
            else:
                trial = await run_steps(bench, steps, via_mcp=via_mcp)
            g = grade_trial(bench, trial, explain=False)
            lost = g.score < reference_score - SCORE_EPSILON
            done[k] = MutationResult(
                description=desc, path=where, score=g.score, lost_score=lost, mutating_step=mutating
            )

    def lost() -> bool:
        return any(r.lost_score for r in done.values())

    dropped = [k for k, m in enumerate(listed) if m[0].startswith("drop step")]
    await judge([k for k in dropped if listed[k][3]])
    if not lost():
        await judge([k for k in dropped if not listed[k][3]])
    for k in range(len(listed)):
        if k in dropped:
            continue
        if lost():
            break
        await judge([k])
    return [done[k] for k in sorted(done)]


def mutation_diagnostics(results: list[MutationResult]) -> list[Diagnostic]:
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
