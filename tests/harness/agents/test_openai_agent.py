"""The OpenAI-compatible backend (a vLLM-served student), through the real ``openai`` client on a scripted transport."""

from __future__ import annotations

import json

import anyio
import pytest

from coworkenv.harness.agents.base import InfrastructureError
from coworkenv.harness.agents.openai_agent import OpenAIAgent
from coworkenv.harness.messages import Message, ToolCall, Usage
from coworkenv.servers.kit import Environment
from coworkenv.synth.providers import INVALID_ARGUMENTS_KEY, ProviderConfigError, RetryPolicy, invalid_arguments
from tests.fakes.common import Sleeps, opening, ticket_tools
from tests.fakes.transports import Script, openai_client, openai_completion, openai_error

BASE_URL = "http://127.0.0.1:8000/v1"


def agent_on(script: Script, attempts: int = 3) -> tuple[OpenAIAgent, Sleeps]:
    sleeps = Sleeps()
    policy = RetryPolicy(max_attempts=attempts, base_delay=0.5, sleep=sleeps)
    return OpenAIAgent("student", BASE_URL, client=openai_client(script, BASE_URL), retry=policy), sleeps


@pytest.mark.anyio
async def test_tool_calls_come_back_with_their_json_arguments_parsed() -> None:
    script = Script([openai_completion(None, [("call_1", "tickets__get_ticket", '{"ticket_id": "tkt_1"}')])])
    agent, _ = agent_on(script)
    with anyio.fail_after(10):
        turn = await agent.complete(opening(), ticket_tools())
    assert turn.tool_calls == [ToolCall(id="call_1", name="tickets__get_ticket", arguments={"ticket_id": "tkt_1"})]
    assert turn.text == "" and turn.stop_reason == "tool_calls"
    assert turn.usage == Usage(input_tokens=50, output_tokens=10)
    (request,) = script.requests
    assert request.path == "/v1/chat/completions"
    assert request.body["tools"][0]["type"] == "function"
    assert request.body["tools"][0]["function"]["name"] == ticket_tools()[0].name
    assert request.body["messages"][0] == {"role": "system", "content": "You are an AI coworker."}


@pytest.mark.anyio
async def test_the_conversation_goes_out_with_json_string_arguments_and_tool_messages() -> None:
    script = Script([openai_completion("It is escalated.")])
    agent, _ = agent_on(script)
    conversation = [
        *opening(),
        Message(
            role="assistant",
            tool_calls=[ToolCall(id="c1", name="tickets__get_ticket", arguments={"ticket_id": "tkt_1"})],
        ),
        Message(role="tool", tool_call_id="c1", content="No ticket tkt_1", is_error=True),
    ]
    with anyio.fail_after(10):
        turn = await agent.complete(conversation, ticket_tools())
    assert turn.text == "It is escalated." and turn.tool_calls == []
    messages = script.bodies[0]["messages"]
    assert messages[2]["tool_calls"][0]["function"] == {
        "name": "tickets__get_ticket",
        "arguments": '{"ticket_id": "tkt_1"}',
    }
    assert messages[3] == {"role": "tool", "tool_call_id": "c1", "content": "Error: No ticket tkt_1"}


@pytest.mark.anyio
async def test_malformed_json_arguments_become_a_tool_error_the_model_sees_not_a_crash() -> None:
    broken = '{"ticket_id": "tkt_1"'
    script = Script(
        [
            openai_completion(None, [("call_1", "tickets__get_ticket", broken)]),
            openai_completion(None, [("call_2", "tickets__get_ticket", '{"ticket_id": "tkt_1"}')]),
        ]
    )
    agent, _ = agent_on(script)
    with anyio.fail_after(10):
        turn = await agent.complete(opening(), ticket_tools())
    (call,) = turn.tool_calls
    bad = invalid_arguments(call.arguments)
    assert bad is not None and bad["raw"] == broken and "not valid JSON" in bad["error"]

    # The harness runs the call like any other: the service refuses it (no tool takes that key) and audits it.
    env = Environment.create({"tickets": {}}, now="2026-03-02T09:00:00Z")
    try:
        result = await env.call("tickets", "get_ticket", call.arguments)
        assert result.is_error and result.outcome == "invalid_arguments"
        assert INVALID_ARGUMENTS_KEY in json.dumps(env.audit()[0].arguments)
    finally:
        env.close()

    conversation = [
        *opening(),
        Message(role="assistant", tool_calls=[call]),
        Message(role="tool", tool_call_id=call.id, content=result.text, is_error=True),
    ]
    with anyio.fail_after(10):
        retry = await agent.complete(conversation, ticket_tools())
    assert retry.tool_calls[0].arguments == {"ticket_id": "tkt_1"}
    sent = script.bodies[1]["messages"]
    assert sent[2]["tool_calls"][0]["function"]["arguments"] == broken  # the model's own text, as it wrote it
    assert sent[3]["content"].startswith("Error: the call was not made: its arguments are not valid JSON")


@pytest.mark.anyio
async def test_tool_calls_a_server_left_as_qwen_style_text_are_parsed() -> None:
    text = 'Checking.\n<tool_call>\n{"name": "tickets__get_ticket", "arguments": {"ticket_id": "tkt_2"}}\n</tool_call>'
    script = Script([openai_completion(text)])
    agent, _ = agent_on(script)
    with anyio.fail_after(10):
        turn = await agent.complete(opening(), ticket_tools())
    assert turn.text == "Checking."
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [("tickets__get_ticket", {"ticket_id": "tkt_2"})]


@pytest.mark.anyio
async def test_cached_prompt_tokens_are_counted_as_cache_reads() -> None:
    usage = {
        "prompt_tokens": 500,
        "completion_tokens": 7,
        "total_tokens": 507,
        "prompt_tokens_details": {"cached_tokens": 400},
    }
    script = Script([openai_completion("ok", usage=usage)])
    agent, _ = agent_on(script)
    with anyio.fail_after(10):
        turn = await agent.complete(opening(), [])
    assert turn.usage == Usage(input_tokens=100, output_tokens=7, cache_read_tokens=400)
    assert "tools" not in script.bodies[0]


@pytest.mark.anyio
async def test_a_rate_limit_then_a_server_error_are_retried_and_then_it_answers() -> None:
    script = Script([openai_error(429), openai_error(502), openai_completion("hi")])
    agent, sleeps = agent_on(script)
    with anyio.fail_after(10):
        turn = await agent.complete(opening(), [])
    assert turn.text == "hi" and len(sleeps.delays) == 2 and agent.accounting.retries == 2


@pytest.mark.anyio
async def test_a_server_that_stays_down_is_an_infrastructure_error() -> None:
    script = Script([openai_error(503)], repeat_last=True)
    agent, _ = agent_on(script, attempts=3)
    with anyio.fail_after(10), pytest.raises(InfrastructureError, match="after 3 attempts"):
        await agent.complete(opening(), [])
    assert len(script.requests) == 3


def test_a_local_server_needs_no_key_but_the_real_api_does(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    local = OpenAIAgent("student", BASE_URL)
    assert local.name == f"openai:student@{BASE_URL}"
    assert local.client.api_key == "EMPTY" and local.client.max_retries == 0
    with pytest.raises(ProviderConfigError, match="OPENAI_API_KEY"):
        _ = OpenAIAgent("gpt-4o").client
