"""The checks every scenario family gets, for a family author's own tests: the shipped families pass them, and a
family of another package is checked the same way in two lines::

    from coworkenv.synth.testing import check_family


    def test_my_family_makes_valid_tasks_at_every_level() -> None:
        check_family("notes-duplicate-note")

:func:`check_family` makes a task of the family for each of its service sets, at each level (``easy``, ``medium``,
``hard``), for each seed, and checks that:

- the same (services, level, seed) makes the same task, byte for byte (a family is seeded code);
- the task passes the full validation ``coworkenv validate`` runs: static (it parses, names only tables, fields,
  tools and records that exist, weights sum to 1, the request leaks no answer), then by execution (the reference
  solution scores 1.0 with safety 1; doing nothing scores completion 0; each forbidden example trips the safety
  gate; mutated references lose score; every alternative solution scores 1.0; the adversaries that don't read the
  task stay below the pass mark);
- the reference's grade and the no-op's are those numbers, said again so that a failure names them.

A failure is an ``AssertionError`` listing the diagnostics (each names the check or step, what it expected and what
the state held). The services the tasks use are looked up by name (the shipped ones, those registered and those of
installed packages' entry points).
"""

from __future__ import annotations

from collections.abc import Sequence

import anyio

from coworkenv.synth.contract.task import Difficulty
from coworkenv.synth.contract.validation.validate import TaskReport, validate_task
from coworkenv.synth.generate.families import Family, get_family


def check_family(
    family: Family | type[Family] | str,
    *,
    levels: Sequence[Difficulty] = ("easy", "medium", "hard"),
    seeds: Sequence[int] = (7,),
    services: Sequence[Sequence[str]] | None = None,
    adversaries: bool = True,
    timeout: float = 120,
) -> list[TaskReport]:
    """Make and validate the family's tasks (see the module's notes); returns the reports. ``family``: a registered
    family's name, or the family itself (a class is made with no arguments). ``services``: only these of its
    service sets (default: all of them)."""
    fam = _family(family)
    options = [tuple(s) for s in services] if services is not None else list(fam.service_options)
    reports = []
    for option in options:
        for level in levels:
            for seed in seeds:
                reports.append(_check_one(fam, option, level, seed, adversaries, timeout))
    return reports


def _family(family: Family | type[Family] | str) -> Family:
    if isinstance(family, str):
        return get_family(family)
    if isinstance(family, type):
        return family()
    return family


def _check_one(
    fam: Family, services: tuple[str, ...], level: Difficulty, seed: int, adversaries: bool, timeout: float
) -> TaskReport:
    where = f"{fam.name} on {'+'.join(services)}, {level}, seed {seed}"
    task = fam.make(services, level, seed)
    again = fam.make(services, level, seed)
    assert task.model_dump_json() == again.model_dump_json(), f"{where}: the same seed made two different tasks"

    async def main() -> TaskReport:
        with anyio.fail_after(timeout):
            return await validate_task(task, adversaries=adversaries)

    report = anyio.run(main)
    problems = "\n".join(f"  {d.line()}" for d in report.errors)
    assert report.valid, f"{where}: the task is not valid:\n{problems}"
    execution = report.execution
    assert execution is not None and execution.reference is not None and execution.noop is not None, where
    reference, noop = execution.reference, execution.noop
    assert reference.score == 1.0 and reference.safety == 1.0, f"{where}: the reference scores {reference.score}"
    assert noop.completion == 0.0, f"{where}: doing nothing scores completion {noop.completion}"
    assert all(a == 1.0 for a in execution.alternatives), f"{where}: alternatives score {execution.alternatives}"
    return report
