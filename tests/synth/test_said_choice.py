"""``said_choice``: a reply singles out the answer when its cue word ("most", "busiest") is said of the answer and
of no other candidate. Saying it of every candidate, one sentence each, or of a list of them, is no answer."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from pydantic import ValidationError

from coworkenv.synth.contract.checks import SaidChoice
from coworkenv.synth.contract.chosen import chosen, judge_choice
from coworkenv.synth.contract.runner import Workbench, grade_trial, run_steps
from coworkenv.synth.contract.task import SayStep, Task
from coworkenv.synth.contract.taskfile import load_task, save_task
from coworkenv.synth.generate.families import get_family

CUE = r"most|busiest|leads?|largest"
NAMES = ["Acme Robotics", "Globex Health", "Initech Labs"]


@pytest.mark.parametrize(
    ("reply", "singles_out"),
    [
        ("Acme Robotics has the most stale tickets (3), Globex Health has 1.", True),
        ("The customer with the most stale tickets is Acme Robotics.", True),
        ("Globex Health has 1 and Acme Robotics has the most.", True),
        ("Acme Robotics, with three tickets, leads.", True),
        ("Escalated tkt_1 (Globex Health) and tkt_2 (Acme Robotics). Acme Robotics has the most of them.", True),
        ("acme   robotics is the busiest", True),
        ("Globex Health doesn't have the most; Acme Robotics has the most.", True),
        ("Acme Robotics does not have the most.", False),
        ("Acme Robotics has the most. Globex Health has the most. Initech Labs has the most.", False),
        ("Acme Robotics and Globex Health have the most.", False),
        ("Most tickets: Acme Robotics, Globex Health, Initech Labs.", False),
        ("It's a tie: Acme Robotics or Globex Health leads.", False),
        ("Globex Health has the most.", False),
        ("Done.", False),
    ],
)
def test_the_cue_is_said_of_the_nearest_candidate_and_those_listed_with_it(reply: str, singles_out: bool) -> None:
    ok, why = judge_choice(reply, "Acme Robotics", CUE, NAMES)
    assert ok is singles_out, why


def test_a_longer_name_is_not_read_as_the_shorter_one_inside_it() -> None:
    assert chosen("Globex Health has the most.", CUE, ["Globex", "Globex Health"]) == {"Globex Health"}
    assert chosen("Globex has the most.", CUE, ["Globex", "Globex Health"]) == {"Globex"}


def test_a_cue_with_no_candidate_in_its_sentence_is_said_of_nobody() -> None:
    assert chosen("Most of them were old. Acme Robotics had three.", CUE, NAMES) == set()


def test_the_failure_names_the_other_candidates_it_was_said_of() -> None:
    ok, why = judge_choice("Acme Robotics and Initech Labs lead.", "Acme Robotics", CUE, NAMES)
    assert not ok and "'Initech Labs'" in why


def test_a_said_choice_needs_another_candidate_and_a_bounded_cue() -> None:
    with pytest.raises(ValidationError, match="at least one other"):
        SaidChoice(answer="Acme", candidates=["acme"], cue="most")
    with pytest.raises(ValidationError, match="cue"):
        SaidChoice(answer="Acme", candidates=["Globex"], cue="(a+)+$")
    with pytest.raises(ValidationError, match="candidate"):
        SaidChoice(answer="Acme", candidates=["Globex", "  "], cue="most")


def _busiest_task() -> Task:
    family = get_family("tickets-stale-escalation")
    task = family.make(family.service_options[0], "hard", 4)
    assert any(c.check.kind == "said_choice" for c in task.completion_checks)
    return task


@pytest.mark.anyio
async def test_a_ranking_task_fails_a_reply_that_says_most_of_every_customer(anyio_backend: str) -> None:
    task = _busiest_task()
    check = next(c.check for c in task.completion_checks if isinstance(c.check, SaidChoice))
    others = [n for n in check.candidates if n != check.answer]

    async def answered(say: str) -> bool:
        steps = [SayStep(say=say) if isinstance(s, SayStep) else s for s in task.reference_solution]
        with anyio.fail_after(60):
            bench = Workbench.of(task)
            grade = grade_trial(bench, await run_steps(bench, steps), explain=False)
        return next(c.passed for c in grade.checks if c.id == "names_busiest")

    assert await answered(" ".join(s.say for s in task.reference_solution if isinstance(s, SayStep)))
    assert await answered(f"Escalated them. {check.answer} has the most stale tickets, {others[0]} has one.")
    assert not await answered(" ".join(f"{n} has the most stale tickets." for n in check.candidates))
    assert not await answered(f"{' and '.join(check.candidates[:3])} have the most stale tickets.")


def test_a_said_choice_round_trips_through_the_task_file(tmp_path: Path) -> None:
    task = _busiest_task()
    again = load_task(save_task(task, tmp_path / "task.json"))
    assert again.completion_checks == task.completion_checks
