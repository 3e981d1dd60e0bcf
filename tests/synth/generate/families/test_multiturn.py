"""Multi-turn families (the user changes the work mid-task) and validation that plays the user's turns."""

from __future__ import annotations

from hashlib import sha256
from typing import Any

import anyio
import pytest

from coworkenv.harness.agents.builtin import NoopAgent
from coworkenv.harness.agents.registry import make_agent
from coworkenv.harness.episode import run_episode
from coworkenv.harness.user_sim import ScriptedUser
from coworkenv.servers.kit import canonical_json
from coworkenv.synth.contract.runner import Workbench, grade_trial, noop_steps, run_steps, user_script
from coworkenv.synth.contract.task import SayStep, Task, ToolStep, task_json_schema
from coworkenv.synth.contract.turns import NOOP_TEXT, AfterTurn
from coworkenv.synth.contract.validation.static import validate_static
from coworkenv.synth.contract.validation.validate import validate_task
from coworkenv.synth.generate.families.changed_requirements import ChangedRequirements
from coworkenv.synth.generate.families.docs_revision import DocsReviseAfterFeedback
from coworkenv.synth.generate.families.kit.base import Family
from coworkenv.synth.generate.families.meeting_notes import MeetingNotesFollowup
from tests.harness.conftest import multi_turn_dict

DIFFICULTIES = ("easy", "medium", "hard")
SEEDS = (0, 1, 7)
FAMILIES = (DocsReviseAfterFeedback, ChangedRequirements, MeetingNotesFollowup)
CASES = [(f, d) for f in FAMILIES for d in DIFFICULTIES]


def make(family: type[Family], difficulty: str, seed: int) -> Task:
    fam = family()
    return fam.make(fam.service_options[0], difficulty, seed)  # type: ignore[arg-type]


def with_when(task: Task, when: Any) -> Task:
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
        bench = Workbench.of(task)
        trial = await run_steps(bench, stubborn)
        assert grade_trial(bench, trial).score < 0.75


@pytest.mark.anyio
async def test_validation_makes_the_users_edits_as_actor_user_after_the_agents_turn() -> None:
    with anyio.fail_after(30):
        task = make(DocsReviseAfterFeedback, "hard", 2)
        bench = Workbench.of(task)
        trial = await run_steps(bench, task.reference_solution)
        assert not trial.failures()
        user_rows = [r for r in trial.audit if r.actor == "user"]
        assert [r.tool for r in user_rows] == ["edit_document", "edit_document"]
        user_outcomes = [o for o in trial.outcomes if o.actor == "user"]
        first_say = next(i for i, s in enumerate(task.reference_solution) if isinstance(s, SayStep))
        assert {o.index for o in user_outcomes} == {first_say}
        # without any say step the user never gets a turn, so nothing is edited
        quiet = await run_steps(bench, [s for s in task.reference_solution if not isinstance(s, SayStep)])
        assert not [r for r in quiet.audit if r.actor == "user"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    "when",
    [
        None,
        {"on_finish": True},
        {"after_turn": 2},
        {"after_calls": 2},
        {"after_tool": "tickets.assign_ticket"},
        {"after_tool": "tickets.update_ticket", "count": 2},
    ],
    ids=str,
)
async def test_validation_and_the_harness_apply_the_users_turn_at_the_same_moment(when: Any) -> None:
    with anyio.fail_after(30):
        task = with_when(make(ChangedRequirements, "hard", 4), when)
        bench = Workbench.of(task)
        trial = await run_steps(bench, task.reference_solution)
        episode = await run_episode(task, make_agent("replay"))
        assert episode.final_state_hash is not None
        assert sha256(canonical_json(trial.state).encode()).hexdigest() == episode.final_state_hash
        order = [(r.actor, r.tool) for r in trial.audit if r.tool != "search_tickets"]
        user_at = order.index(("user", "add_comment"))
        agent_calls_before = sum(1 for actor, _ in order[:user_at] if actor == "agent")
        # after 2 calls: right after the 2nd (search, update); the others come by the first finished turn
        assert agent_calls_before == (1 if when == {"after_calls": 2} else 2)


@pytest.mark.anyio
async def test_a_user_edit_that_fails_is_a_failed_step() -> None:
    with anyio.fail_after(30):
        task = make(DocsReviseAfterFeedback, "easy", 5)
        data = task.model_dump(mode="json")
        data["user"]["turns"][0]["edits"][0]["arguments"]["find"] = "text that is not in the document"
        broken = Task.model_validate(data)
        broken_bench = Workbench.of(broken)
        trial = await run_steps(broken_bench, broken.reference_solution)
        failed = trial.failures()
        assert failed and failed[0].actor == "user" and "user turn 0, edit 0" in failed[0].text
        report = await validate_task(broken)
        assert not report.valid
        paths = [d.path for d in report.diagnostics if d.code == "REFERENCE_STEP_FAILED"]
        assert paths == ["$.user.turns[0].edits[0]"]


def test_validation_and_the_scripted_user_share_one_turn_schedule() -> None:
    from coworkenv.harness import user_llm, user_sim
    from coworkenv.synth.contract import runner, turns

    assert runner.TurnSchedule is user_sim.TurnSchedule is user_llm.TurnSchedule is turns.TurnSchedule
    assert runner.asked_facts is user_sim.asked_facts is turns.asked_facts
    task = make(ChangedRequirements, "easy", 1)
    script = user_script(task)
    assert script is not None
    assert script.schedule == ScriptedUser(task).schedule == turns.TurnSchedule([AfterTurn(after_turn=1)])


@pytest.mark.anyio
async def test_a_question_about_a_held_back_fact_delays_a_turn_that_is_not_due_yet_in_both() -> None:
    with anyio.fail_after(30):
        data = make(ChangedRequirements, "medium", 6).model_dump(mode="json")
        data["user"]["held_back"] = ["The customer's contract renewal is in June."]
        data["user"]["turns"][0]["when"] = {"after_turn": 2}
        steps = data["reference_solution"]
        first_say = next(i for i, s in enumerate(steps) if "say" in s)
        steps.insert(first_say, {"say": "Before I go on: when is their contract renewal?"})
        task = Task.model_validate(data)
        bench = Workbench.of(task)
        trial = await run_steps(bench, task.reference_solution)
        episode = await run_episode(task, make_agent("replay"))
        assert sha256(canonical_json(trial.state).encode()).hexdigest() == episode.final_state_hash
        assert grade_trial(bench, trial).score == episode.grade.score == 1.0  # type: ignore[union-attr]
        user_edit = next(o for o in trial.outcomes if o.actor == "user")
        assert user_edit.index == first_say + 1  # not after the question: at the next finished turn


# ---------------------------------------------------------------------------------------------- typed triggers
@pytest.mark.parametrize(
    ("phrase", "typed"),
    [
        ("when the agent finishes its turn", {"on_finish": True}),
        ("When the agent finishes a turn", {"on_finish": True}),
        ("turn 2", {"after_turn": 2}),
        ("at turn 3", {"after_turn": 3}),
        ("after 1 tool call", {"after_calls": 1}),
        ("after 3 tool calls", {"after_calls": 3}),
        ("after tickets.escalate_ticket", {"after_tool": "tickets.escalate_ticket", "count": 1}),
        ("after tickets__escalate_ticket", {"after_tool": "tickets.escalate_ticket", "count": 1}),
    ],
)
def test_the_exact_trigger_phrases_are_read_as_their_typed_form(phrase: str, typed: dict[str, Any]) -> None:
    task = Task.model_validate(multi_turn_dict(when=phrase))
    assert task.model_dump(mode="json")["user"]["turns"][0]["when"] == typed


@pytest.mark.parametrize(
    "phrase",
    ["after the agent's second turn", "after 2 edits", "before the agent posts", "after escalate_ticket", ""],
)
def test_an_unknown_trigger_phrase_is_an_error_naming_the_turn(phrase: str) -> None:
    [problem] = validate_static(multi_turn_dict(when=phrase))
    assert (problem.code, problem.path) == ("TASK_INVALID", "$.user.turns[0].when")
    assert "unknown trigger phrase" in problem.message
    assert '{"after_tool": "docs.edit_document", "count": 1}' in problem.message  # the typed form, shown


@pytest.mark.parametrize(
    "when",
    [{}, {"after_calls": 0}, {"after_tool": "escalate_ticket"}, {"on_finish": False}, {"after_turn": 2, "count": 1}],
    ids=str,
)
def test_a_malformed_typed_trigger_is_an_error_naming_the_turn(when: dict[str, Any]) -> None:
    problems = validate_static(multi_turn_dict(when=when))
    assert problems and all(p.code == "TASK_INVALID" for p in problems)
    assert all(p.path.startswith("$.user.turns[0].when") for p in problems), [p.line() for p in problems]


def test_an_unknown_tool_or_service_in_a_trigger_is_a_static_error_naming_the_turn() -> None:
    [tool] = validate_static(multi_turn_dict(when={"after_tool": "tickets.escalate_everything"}))
    assert (tool.code, tool.path) == ("TOOL_UNKNOWN", "$.user.turns[0].when")
    [service] = validate_static(multi_turn_dict(when={"after_tool": "docs.edit_document"}))
    assert (service.code, service.path) == ("SERVICE_NOT_IN_TASK", "$.user.turns[0].when")
    assert validate_static(multi_turn_dict(when={"after_tool": "tickets.escalate_ticket", "count": 2})) == []


def test_an_error_in_a_users_edit_names_the_edit() -> None:
    data = multi_turn_dict()
    edit = data["user"]["turns"][0]["edits"][0]
    data["user"]["turns"][0]["edits"] = [
        {**edit, "tool": "tag_ticket"},
        {**edit, "arguments": {"ticket_id": "tkt_1", "priority": "whenever"}},
        {**edit, "arguments": {"ticket_id": {"$ref": "found.items.0.id"}, "add_tags": ["vip"]}},
    ]
    found = {(d.code, d.path) for d in validate_static(data)}
    assert found == {
        ("TOOL_UNKNOWN", "$.user.turns[0].edits[0].tool"),
        ("ARGUMENTS_INVALID", "$.user.turns[0].edits[1].arguments"),
        ("USER_EDIT_REF", "$.user.turns[0].edits[2].arguments.ticket_id"),
    }


def test_a_trigger_names_its_service_so_shared_tool_names_are_not_confused() -> None:
    data = multi_turn_dict(when={"after_tool": "chat.search_messages"})
    data["services"] = ["tickets", "email", "chat"]
    task = Task.model_validate(data)
    assert not [d for d in validate_static(task) if d.path.startswith("$.user")]
    script = user_script(task)
    assert script is not None
    assert script.after_tool_call(ToolStep(service="email", tool="search_messages"), True) is None
    assert script.after_tool_call(ToolStep(service="chat", tool="search_messages"), True) is not None
    harness_side = ScriptedUser(task).schedule
    assert harness_side.after_tool_call("email", "search_messages", ok=True) is None
    assert harness_side.after_tool_call("chat", "search_messages", ok=True) == 0


def test_the_task_schema_shows_the_typed_trigger() -> None:
    schema = task_json_schema()
    options = schema["$defs"]["UserTurn"]["properties"]["when"]["anyOf"][0]["oneOf"]
    assert [o["$ref"].rsplit("/", 1)[1] for o in options] == ["AfterTool", "AfterCalls", "AfterTurn", "OnFinish"]
    assert schema["$defs"]["AfterTool"]["required"] == ["after_tool"]


# ---------------------------------------------------------------------------------------------- the no-op
def test_validations_noop_says_what_the_harness_noop_agent_says() -> None:
    from coworkenv.harness.agents import builtin

    assert builtin.NOOP_TEXT is NOOP_TEXT
    assert noop_steps() == [SayStep(say=NOOP_TEXT)]


@pytest.mark.anyio
@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
async def test_validation_noop_fires_the_same_turns_as_the_harness_noop_agent(family: type[Family]) -> None:
    with anyio.fail_after(30):
        for task in (make(family, "hard", 8), Task.model_validate(multi_turn_dict())):
            bench = Workbench.of(task)
            trial = await run_steps(bench, noop_steps())
            episode = await run_episode(task, NoopAgent())
            assert sha256(canonical_json(trial.state).encode()).hexdigest() == episode.final_state_hash
            user_edits = [o.step for o in trial.outcomes if o.actor == "user"]
            harness_edits = [e.name for e in episode.user_events if e.kind == "edit" and not e.is_error]
            assert user_edits and harness_edits == [f"{s.service}__{s.tool}" for s in user_edits]  # type: ignore[union-attr]
            assert episode.grade is not None and grade_trial(bench, trial).score == episode.grade.score == 0.0


@pytest.mark.anyio
async def test_a_check_satisfied_by_the_users_own_edit_is_an_error() -> None:
    with anyio.fail_after(30):
        data = make(DocsReviseAfterFeedback, "easy", 4).model_dump(mode="json")
        gone = next(c for c in data["completion_checks"] if c["id"] == "old_total_gone")
        gone["requires"] = []  # the old total is gone once the user has replaced it: the agent did nothing
        task = Task.model_validate(data)
        report = await validate_task(task)
        [problem] = [d for d in report.diagnostics if d.code == "NOOP_PASSES_CHECK"]
        assert problem.check == "old_total_gone" and problem.severity == "error"
        assert "the user's own edit satisfies this check" in problem.message
        episode = await run_episode(task, NoopAgent())  # the harness's noop agent gets the same credit
        assert episode.grade is not None and report.execution is not None and report.execution.noop is not None
        assert episode.grade.completion == report.execution.noop.completion > 0
