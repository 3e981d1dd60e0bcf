"""The scripted user: held-back facts only when asked, turns with workspace edits at their trigger, the end."""

from __future__ import annotations

import anyio
import pytest

from coworkenv.harness.agents.builtin import NoopAgent, ReplayAgent, ScriptedAgent
from coworkenv.harness.episode import run_episode
from coworkenv.harness.messages import Message
from coworkenv.harness.user_sim import GO_AHEAD, ScriptedUser, UserContext, keywords
from coworkenv.servers.kit import Environment
from coworkenv.synth.contract.task import Task
from coworkenv.synth.contract.turns import AfterTool, OnFinish
from tests.harness.conftest import FACT, multi_turn_dict


def context(task: Task) -> tuple[UserContext, Environment]:
    env = Environment.create(task.seeds(), now=task.now)
    return UserContext(task, env, [Message(role="user", content=task.request)], [], lambda: 0.0), env


@pytest.mark.anyio
async def test_a_held_back_fact_is_given_only_when_the_agent_asks_about_it(multi_turn_task: Task) -> None:
    user = ScriptedUser(multi_turn_task)
    ctx, env = context(multi_turn_task)
    with anyio.fail_after(5):
        assert user.asked_facts("I will escalate the ticket now.") == []  # not a question
        assert user.asked_facts("Which ticket do you mean?") == []  # a question about something else
        assert user.asked_facts("What escalation reason should I give?") == [FACT]
        assert user.asked_facts("Is there a contract SLA involved?") == [FACT]
        reply = await user.reply("What reason should I put on the escalation?", ctx)
    assert reply is not None and FACT in reply
    env.close()


def test_words_of_the_request_alone_do_not_unlock_a_fact(multi_turn_task: Task) -> None:
    user = ScriptedUser(multi_turn_task)
    assert user.asked_facts("Should I escalate the old enterprise ticket?") == []
    assert "ticket" in keywords("Tickets!") and "the" not in keywords("the")


def test_when_is_a_typed_trigger(multi_turn_task: Task) -> None:
    assert multi_turn_task.user is not None
    trigger = multi_turn_task.user.turns[0].when
    assert isinstance(trigger, AfterTool)
    assert (trigger.service, trigger.tool, trigger.count) == ("tickets", "escalate_ticket", 1)
    assert ScriptedUser(multi_turn_task).schedule.triggers == [trigger]
    untriggered = Task.model_validate(multi_turn_dict(when=None))
    assert ScriptedUser(untriggered).schedule.triggers == [OnFinish(on_finish=True)]


@pytest.mark.anyio
async def test_an_after_tool_trigger_fires_after_the_nth_successful_call_of_that_tool() -> None:
    task = Task.model_validate(multi_turn_dict(when={"after_tool": "tickets.escalate_ticket", "count": 2}))
    user = ScriptedUser(task)
    ctx, env = context(task)
    with anyio.fail_after(5):
        assert await user.after_tool_call("tickets__escalate_ticket", {}, False, ctx) is None  # the 1st
        assert await user.after_tool_call("tickets__escalate_ticket", {}, True, ctx) is None  # failed: not counted
        assert await user.after_tool_call("tickets__update_ticket", {}, False, ctx) is None  # another tool
        assert await user.after_tool_call("tickets__escalate_ticket", {}, False, ctx) is not None  # the 2nd
    assert user.exhausted
    env.close()


@pytest.mark.anyio
async def test_edits_are_made_as_the_user_right_after_the_triggering_tool_call(multi_turn_task: Task) -> None:
    with anyio.fail_after(20):
        result = await run_episode(multi_turn_task, ReplayAgent())
    assert result.grade is not None
    assert result.grade.score == 1.0, result.grade.report()
    edits = [e for e in result.user_events if e.kind == "edit"]
    assert len(edits) == 1 and edits[0].name == "tickets__update_ticket" and not edits[0].is_error
    roles = [(m.role, m.name) for m in result.messages]
    escalated = roles.index(("tool", "tickets__escalate_ticket"))
    assert result.messages[escalated + 1].role == "user"
    assert "urgent" in result.messages[escalated + 1].content
    # the anchor of the next call sees the user's edit
    assert result.steps[2].anchor != result.steps[1].anchor
    assert result.user_events[-1].kind == "end"


@pytest.mark.anyio
async def test_the_users_edits_are_audited_with_the_actor_user(multi_turn_task: Task) -> None:
    user = ScriptedUser(multi_turn_task)
    ctx, env = context(multi_turn_task)
    with anyio.fail_after(5):
        assert await user.after_tool_call("tickets__search_tickets", {}, False, ctx) is None
        assert await user.after_tool_call("tickets__escalate_ticket", {}, True, ctx) is None  # a failed call
        message = await user.after_tool_call("tickets__escalate_ticket", {}, False, ctx)
    assert message is not None and "urgent" in message
    rows = env.audit()
    assert [(r.actor, r.tool) for r in rows] == [("user", "update_ticket")]
    assert "vip" in env.dump()["tickets"]["tickets"][0]["tags"]
    env.close()


@pytest.mark.anyio
async def test_a_turn_after_n_tool_calls_fires_after_the_nth_call() -> None:
    task = Task.model_validate(multi_turn_dict(when={"after_calls": 2}))
    user = ScriptedUser(task)
    ctx, env = context(task)
    with anyio.fail_after(5):
        ctx.tool_calls = 1
        assert await user.after_tool_call("tickets__search_tickets", {}, False, ctx) is None
        ctx.tool_calls = 2
        assert await user.after_tool_call("tickets__get_ticket", {}, False, ctx) is not None
    assert user.exhausted
    env.close()


@pytest.mark.anyio
async def test_a_turn_without_trigger_comes_when_the_agent_finishes_and_then_the_user_ends() -> None:
    task = Task.model_validate(multi_turn_dict(when=None))
    user = ScriptedUser(task)
    ctx, env = context(task)
    with anyio.fail_after(5):
        ctx.agent_turns = 1
        first = await user.reply("I escalated it.", ctx)
        ctx.agent_turns = 2
        second = await user.reply("Set to urgent.", ctx)
    assert first is not None and "urgent" in first
    assert second is None
    assert [e.kind for e in ctx.events] == ["edit"]
    env.close()


@pytest.mark.anyio
async def test_a_turn_for_a_later_agent_turn_waits_while_the_agent_asks_for_facts() -> None:
    task = Task.model_validate(multi_turn_dict(when={"after_turn": 2}))
    user = ScriptedUser(task)
    ctx, env = context(task)
    with anyio.fail_after(5):
        ctx.agent_turns = 1
        first = await user.reply("What escalation reason should I give?", ctx)
        ctx.agent_turns = 2
        second = await user.reply("Thanks, escalated.", ctx)
    assert first == FACT
    assert second is not None and "urgent" in second
    env.close()


@pytest.mark.anyio
async def test_a_question_without_a_matching_fact_gets_one_go_ahead_then_the_conversation_ends() -> None:
    task = Task.model_validate({**multi_turn_dict(), "user": {"held_back": [FACT]}})
    user = ScriptedUser(task)
    ctx, env = context(task)
    with anyio.fail_after(5):
        assert await user.reply("Which customer do you mean?", ctx) == GO_AHEAD
        assert await user.reply("Which customer do you mean?", ctx) is None
    env.close()


@pytest.mark.anyio
async def test_in_an_episode_the_model_agent_gets_the_fact_as_a_user_message(multi_turn_task: Task) -> None:
    agent = ScriptedAgent.from_turns([{"text": "What escalation reason should I give?"}, {"text": "Thanks."}])
    with anyio.fail_after(20):
        result = await run_episode(multi_turn_task, agent)
    users = [m.content for m in result.messages if m.role == "user"]
    assert users[0] == multi_turn_task.request
    assert FACT in users[1]
    assert result.status == "completed"


@pytest.mark.anyio
async def test_noop_gets_the_pending_turn_and_still_scores_zero(multi_turn_task: Task) -> None:
    with anyio.fail_after(20):
        result = await run_episode(multi_turn_task, NoopAgent())
    assert result.grade is not None and result.grade.score == 0.0
    assert [e.kind for e in result.user_events] == ["edit", "reply"]
