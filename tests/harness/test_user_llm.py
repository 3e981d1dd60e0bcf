"""The LLM-driven user simulator, through the real ``anthropic`` client on a scripted transport."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from coworkenv.harness.agents.builtin import ScriptedAgent
from coworkenv.harness.episode import run_episode
from coworkenv.harness.user_llm import END_TOKEN, LLMUser, from_spec, llm_user_factory, user_system_prompt
from coworkenv.harness.user_sim import UserContext
from coworkenv.servers.kit import Environment
from coworkenv.synth.contract.task import Task
from coworkenv.synth.providers import no_wait_policy
from tests.fakes.transports import Script, anthropic_client, anthropic_text
from tests.synth.conftest import base_task

FACT = "The enterprise customer is Big Corp, domain big.com."


def task_with_user(turns: list[dict[str, Any]] | None = None) -> Task:
    data = base_task()
    data["user"] = {"persona": "Kim Nguyen, support lead at Brightwave", "held_back": [FACT], "turns": turns or []}
    return Task.model_validate(data)


def context(task: Task, env: Environment) -> UserContext:
    return UserContext(task, env, [], [], lambda: 0.0)


def user_on(script: Script, task: Task) -> LLMUser:
    return LLMUser(task, model="claude-haiku-4-5", client=anthropic_client(script), retry=no_wait_policy())


def test_the_simulator_is_told_its_persona_request_held_back_facts_and_end_token() -> None:
    prompt = user_system_prompt(task_with_user())
    assert "Kim Nguyen, support lead" in prompt
    assert base_task()["request"] in prompt
    assert FACT in prompt and "ONLY when the assistant asks" in prompt
    assert END_TOKEN in prompt


@pytest.mark.anyio
async def test_a_question_from_the_agent_gets_the_models_answer_in_character() -> None:
    task = task_with_user()
    script = Script([anthropic_text("It's Big Corp - big.com.")])
    user = user_on(script, task)
    with Environment.create(task.seeds(), now=task.now) as env, anyio.fail_after(10):
        reply = await user.reply("Which customer do you mean by enterprise?", context(task, env))
    assert reply == "It's Big Corp - big.com."
    (body,) = script.bodies
    assert body["model"] == "claude-haiku-4-5"
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert FACT in body["system"][0]["text"]
    assert body["messages"][-1]["content"][0]["text"] == "Which customer do you mean by enterprise?"
    assert "tools" not in body


@pytest.mark.anyio
async def test_the_end_token_ends_the_conversation() -> None:
    task = task_with_user()
    script = Script([anthropic_text("Can you check the other one too?"), anthropic_text(f"Great, thanks! {END_TOKEN}")])
    user = user_on(script, task)
    with Environment.create(task.seeds(), now=task.now) as env, anyio.fail_after(10):
        ctx = context(task, env)
        assert await user.reply("Done with the first ticket.", ctx) == "Can you check the other one too?"
        assert await user.reply("Both are handled.", ctx) is None
    second = script.bodies[1]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]


@pytest.mark.anyio
async def test_scripted_turns_keep_their_words_and_edits_without_asking_the_model() -> None:
    edit = {"service": "tickets", "tool": "update_ticket", "arguments": {"ticket_id": "tkt_2", "priority": "low"}}
    task = task_with_user([{"message": "I lowered the small shop's ticket; leave it.", "edits": [edit]}])
    script = Script([])
    user = user_on(script, task)
    with Environment.create(task.seeds(), now=task.now) as env, anyio.fail_after(10):
        reply = await user.reply("Escalated tkt_1.", context(task, env))
        assert reply == "I lowered the small shop's ticket; leave it."
        (row,) = env.audit("tickets")
        assert row.actor == "user" and row.tool == "update_ticket" and row.ok
    assert script.requests == []


@pytest.mark.anyio
async def test_an_episode_with_the_llm_user_answers_then_ends_when_satisfied() -> None:
    task = task_with_user()
    agent = ScriptedAgent.from_turns(
        [
            {"text": "Which customer is the enterprise one?"},
            {
                "tool_calls": [
                    {
                        "name": "tickets__escalate_ticket",
                        "arguments": {"ticket_id": "tkt_1", "reason": "Big Corp waiting"},
                    }
                ]
            },
            {"text": "I escalated 'Outage at Big'."},
        ]
    )
    script = Script([anthropic_text("Big Corp."), anthropic_text(END_TOKEN)])
    factory = llm_user_factory("claude-haiku-4-5", client=anthropic_client(script), retry=no_wait_policy())
    with anyio.fail_after(30):
        record = await run_episode(task, agent, user=factory)
    assert record.status == "completed", record.error
    assert [e.kind for e in record.user_events] == ["reply", "end"]
    assert record.user_events[0].text == "Big Corp."
    assert record.grade is not None and record.grade.completion > 0.5


def test_user_specs_name_the_model_of_the_simulator() -> None:
    task = task_with_user()
    assert from_spec("anthropic:claude-sonnet-4-6")(task).model == "claude-sonnet-4-6"
    assert from_spec("llm")(task).model == "claude-haiku-4-5"
    with pytest.raises(ValueError, match="unknown user simulator"):
        from_spec("gpt:whatever")
