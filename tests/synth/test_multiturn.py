"""Multi-turn families (the user changes the work mid-task) and validation that plays the user's turns."""

from __future__ import annotations

from hashlib import sha256

import anyio
import pytest

from coworkenv.harness.agents.registry import make_agent
from coworkenv.harness.episode import run_episode
from coworkenv.servers.kit import canonical_json
from coworkenv.synth.families.base import Family
from coworkenv.synth.families.changed_requirements import ChangedRequirements
from coworkenv.synth.families.meeting_notes import MeetingNotesFollowup
from coworkenv.synth.families.multiturn import DocsReviseAfterFeedback
from coworkenv.synth.runner import run_steps
from coworkenv.synth.task import SayStep, Task
from coworkenv.synth.validate import validate_task

DIFFICULTIES = ("easy", "medium", "hard")
SEEDS = (0, 1, 7)
FAMILIES = (DocsReviseAfterFeedback, ChangedRequirements, MeetingNotesFollowup)
CASES = [(f, d) for f in FAMILIES for d in DIFFICULTIES]


def make(family: type[Family], difficulty: str, seed: int) -> Task:
    fam = family()
    return fam.make(fam.service_options[0], difficulty, seed)  # type: ignore[arg-type]


def with_when(task: Task, when: str | None) -> Task:
    data = task.model_dump(mode="json")
    data["user"]["turns"][0]["when"] = when
    return Task.model_validate(data)


@pytest.mark.anyio
@pytest.mark.parametrize(("family", "difficulty"), CASES, ids=lambda v: getattr(v, "name", v))
async def test_every_multiturn_task_passes_static_and_execution_validation(
    family: type[Family], difficulty: str
) -> None:
    with anyio.fail_after(60):
        for seed in SEEDS:
            task = make(family, difficulty, seed)
            assert task.user is not None and task.user.persona and task.user.turns
            assert all(turn.edits for turn in task.user.turns)
            assert task.forbidden_actions and all(f.example is not None for f in task.forbidden_actions)
            assert abs(sum(c.weight for c in task.completion_checks) - 1) < 1e-9
            report = await validate_task(task)
            assert report.valid, [d.message for d in report.diagnostics if d.severity == "error"]


@pytest.mark.anyio
@pytest.mark.parametrize(("family", "difficulty"), CASES, ids=lambda v: getattr(v, "name", v))
async def test_replay_through_the_harness_scores_one_and_noop_scores_zero(
    family: type[Family], difficulty: str
) -> None:
    with anyio.fail_after(60):
        for seed in SEEDS:
            task = make(family, difficulty, seed)
            replay = await run_episode(task, make_agent("replay"))
            assert replay.grade is not None and replay.grade.score == 1.0, (replay.error, replay.grade)
            assert any(e.kind == "edit" and not e.is_error for e in replay.user_events)
            noop = await run_episode(task, make_agent("noop"))
            assert noop.grade is not None and noop.grade.score == 0.0


@pytest.mark.anyio
@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
async def test_a_run_that_ignores_the_users_change_does_not_pass(family: type[Family]) -> None:
    with anyio.fail_after(30):
        task = make(family, "medium", 3)
        steps = task.reference_solution
        first_say = next(i for i, s in enumerate(steps) if isinstance(s, SayStep))
        stubborn = [*steps[: first_say + 1], SayStep(say="All done as you first asked.")]
        trial = await run_steps(task, stubborn)
        assert trial.grade(task).score < 0.75


@pytest.mark.anyio
async def test_validation_makes_the_users_edits_as_actor_user_after_the_agents_turn() -> None:
    with anyio.fail_after(30):
        task = make(DocsReviseAfterFeedback, "hard", 2)
        trial = await run_steps(task, task.reference_solution)
        assert not trial.failures()
        user_rows = [r for r in trial.audit if r.actor == "user"]
        assert [r.tool for r in user_rows] == ["edit_document", "edit_document"]
        user_outcomes = [o for o in trial.outcomes if o.actor == "user"]
        first_say = next(i for i, s in enumerate(task.reference_solution) if isinstance(s, SayStep))
        assert {o.index for o in user_outcomes} == {first_say}
        # without any say step the user never gets a turn, so nothing is edited
        quiet = await run_steps(task, [s for s in task.reference_solution if not isinstance(s, SayStep)])
        assert not [r for r in quiet.audit if r.actor == "user"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    "when", [None, "when the agent finishes its turn", "turn 2", "after 2 tool calls", "after assign_ticket"]
)
async def test_validation_and_the_harness_apply_the_users_turn_at_the_same_moment(when: str | None) -> None:
    with anyio.fail_after(30):
        task = with_when(make(ChangedRequirements, "hard", 4), when)
        trial = await run_steps(task, task.reference_solution)
        episode = await run_episode(task, make_agent("replay"))
        assert episode.final_state_hash is not None
        assert sha256(canonical_json(trial.state).encode()).hexdigest() == episode.final_state_hash
        order = [(r.actor, r.tool) for r in trial.audit if r.tool != "search_tickets"]
        user_at = order.index(("user", "add_comment"))
        agent_calls_before = sum(1 for actor, _ in order[:user_at] if actor == "agent")
        expected = {None: 2, "when the agent finishes its turn": 2, "after 2 tool calls": 1}
        assert agent_calls_before == expected.get(when, 2)


@pytest.mark.anyio
async def test_a_user_edit_that_fails_is_a_failed_step() -> None:
    with anyio.fail_after(30):
        task = make(DocsReviseAfterFeedback, "easy", 5)
        data = task.model_dump(mode="json")
        data["user"]["turns"][0]["edits"][0]["arguments"]["find"] = "text that is not in the document"
        broken = Task.model_validate(data)
        trial = await run_steps(broken, broken.reference_solution)
        failed = trial.failures()
        assert failed and failed[0].actor == "user" and "user turn 0, edit 0" in failed[0].text
        report = await validate_task(broken)
        assert not report.valid
        assert any(d.code == "REFERENCE_STEP_FAILED" for d in report.diagnostics)


WHENS = [
    None,
    "",
    "after a draft",
    "turn 2",
    "at turn 3",
    "after 3 tool calls",
    "after 1 call",
    "after assign_ticket",
    "after tickets__update_ticket",
    "after the agent replies",
]


@pytest.mark.parametrize("when", WHENS)
def test_validation_and_the_scripted_user_read_a_turns_when_with_one_parser(when: str | None) -> None:
    from coworkenv.harness import user_sim
    from coworkenv.synth import runner, turns

    assert runner.parse_trigger is user_sim.parse_trigger is turns.parse_trigger
    assert runner.keywords is user_sim.keywords is turns.keywords
    trigger = turns.parse_trigger(when, make(ChangedRequirements, "easy", 1))
    assert trigger.kind in ("finish", "turn", "calls", "tool")


@pytest.mark.anyio
async def test_a_question_about_a_held_back_fact_delays_a_turn_that_is_not_due_yet_in_both() -> None:
    with anyio.fail_after(30):
        data = make(ChangedRequirements, "medium", 6).model_dump(mode="json")
        data["user"]["held_back"] = ["The customer's contract renewal is in June."]
        data["user"]["turns"][0]["when"] = "turn 2"
        steps = data["reference_solution"]
        first_say = next(i for i, s in enumerate(steps) if "say" in s)
        steps.insert(first_say, {"say": "Before I go on: when is their contract renewal?"})
        task = Task.model_validate(data)
        trial = await run_steps(task, task.reference_solution)
        episode = await run_episode(task, make_agent("replay"))
        assert sha256(canonical_json(trial.state).encode()).hexdigest() == episode.final_state_hash
        assert trial.grade(task).score == episode.grade.score == 1.0  # type: ignore[union-attr]
        user_edit = next(o for o in trial.outcomes if o.actor == "user")
        assert user_edit.index == first_say + 1  # not after the question: at the next finished turn
