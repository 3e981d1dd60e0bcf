"""The Anthropic backend, through the real ``anthropic`` client on a scripted HTTP transport."""

from __future__ import annotations

import anyio
import pytest

from coworkenv.harness.agents.anthropic_agent import AnthropicAgent
from coworkenv.harness.agents.base import InfrastructureError
from coworkenv.harness.messages import Message, ToolCall, Usage
from coworkenv.synth.providers import ProviderConfigError, RetryPolicy, estimate_cost
from tests.fakes.common import Sleeps, opening, ticket_tools
from tests.fakes.transports import (
    Script,
    anthropic_client,
    anthropic_error,
    anthropic_text,
    anthropic_tool_use,
    anthropic_usage,
)

MODEL = "claude-sonnet-4-6"


def agent_on(script: Script, attempts: int = 4) -> tuple[AnthropicAgent, Sleeps]:
    sleeps = Sleeps()
    policy = RetryPolicy(max_attempts=attempts, base_delay=1.0, max_delay=8.0, sleep=sleeps)
    return AnthropicAgent(MODEL, client=anthropic_client(script), retry=policy), sleeps


@pytest.mark.anyio
async def test_a_tool_use_reply_becomes_qualified_tool_calls_with_token_use() -> None:
    usage = anthropic_usage(input_tokens=120, output_tokens=30, read=900, write=50)
    script = Script(
        [anthropic_tool_use([("toolu_1", "tickets__search_tickets", {"status": ["open"]})], "Looking.", usage)]
    )
    agent, _ = agent_on(script)
    with anyio.fail_after(10):
        turn = await agent.complete(opening(), ticket_tools())
    assert turn.text == "Looking."
    assert turn.tool_calls == [ToolCall(id="toolu_1", name="tickets__search_tickets", arguments={"status": ["open"]})]
    assert turn.stop_reason == "tool_use"
    assert turn.usage == Usage(input_tokens=120, output_tokens=30, cache_read_tokens=900, cache_write_tokens=50)
    assert agent.accounting.requests == 1
    assert agent.accounting.cost_usd == pytest.approx(estimate_cost(MODEL, turn.usage))


@pytest.mark.anyio
async def test_the_request_caches_tools_and_system_prompt_and_sends_the_conversation_as_blocks() -> None:
    script = Script([anthropic_text("Done: I escalated 'Outage at Big'.")])
    agent, _ = agent_on(script)
    conversation = [
        *opening(),
        Message(
            role="assistant",
            content="Let me look.",
            tool_calls=[
                ToolCall(id="toolu_1", name="tickets__search_tickets", arguments={}),
                ToolCall(id="toolu_2", name="tickets__get_ticket", arguments={"ticket_id": "nope"}),
            ],
        ),
        Message(role="tool", tool_call_id="toolu_1", name="tickets__search_tickets", content='{"items": []}'),
        Message(role="tool", tool_call_id="toolu_2", name="tickets__get_ticket", content="No ticket", is_error=True),
    ]
    with anyio.fail_after(10):
        turn = await agent.complete(conversation, ticket_tools())
    assert turn.tool_calls == [] and turn.text.startswith("Done")
    (body,) = script.bodies
    assert body["model"] == MODEL
    assert body["system"] == [
        {"type": "text", "text": "You are an AI coworker.", "cache_control": {"type": "ephemeral"}}
    ]
    assert [t["name"] for t in body["tools"]] == [t.name for t in ticket_tools()]
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert all("cache_control" not in t for t in body["tools"][:-1])
    user, assistant, results = body["messages"]
    assert user == {"role": "user", "content": [{"type": "text", "text": "Escalate the old Big Corp ticket."}]}
    assert assistant["role"] == "assistant"
    assert [b["type"] for b in assistant["content"]] == ["text", "tool_use", "tool_use"]
    assert assistant["content"][2] == {
        "type": "tool_use",
        "id": "toolu_2",
        "name": "tickets__get_ticket",
        "input": {"ticket_id": "nope"},
    }
    assert results["role"] == "user"
    first, second = results["content"]
    assert first == {"type": "tool_result", "tool_use_id": "toolu_1", "content": '{"items": []}'}
    assert second["is_error"] is True and second["tool_use_id"] == "toolu_2"
    assert second["cache_control"] == {"type": "ephemeral"}  # the newest turn is a cache breakpoint too


@pytest.mark.anyio
async def test_a_user_reply_after_tool_results_joins_their_turn_after_them() -> None:
    script = Script([anthropic_text("ok")])
    agent, _ = agent_on(script)
    conversation = [
        *opening(),
        Message(role="assistant", tool_calls=[ToolCall(id="toolu_9", name="tickets__search_tickets")]),
        Message(role="tool", tool_call_id="toolu_9", content="[]"),
        Message(role="user", content="Also check the small shop."),
    ]
    with anyio.fail_after(10):
        await agent.complete(conversation, [])
    body = script.bodies[0]
    assert "tools" not in body
    last = body["messages"][-1]
    assert [b["type"] for b in last["content"]] == ["tool_result", "text"]


@pytest.mark.anyio
async def test_a_rate_limit_is_retried_after_the_wait_the_server_asks_for() -> None:
    script = Script(
        [anthropic_error(429, "rate_limit_error", "slow down", **{"retry-after": "3"}), anthropic_text("hi")]
    )
    agent, sleeps = agent_on(script)
    with anyio.fail_after(10):
        turn = await agent.complete(opening(), [])
    assert turn.text == "hi"
    assert len(script.requests) == 2
    assert sleeps.delays == [3.0]
    assert agent.accounting.retries == 1


@pytest.mark.anyio
async def test_overloaded_and_connection_failures_back_off_exponentially_with_jitter() -> None:
    script = Script([anthropic_error(529, "overloaded_error"), anthropic_error(503), anthropic_text("hi")])
    agent, sleeps = agent_on(script)
    with anyio.fail_after(10):
        await agent.complete(opening(), [])
    assert len(sleeps.delays) == 2
    assert 0 <= sleeps.delays[0] <= 1.0 and 0 <= sleeps.delays[1] <= 2.0


@pytest.mark.anyio
async def test_a_server_error_that_never_ends_becomes_an_infrastructure_error_after_the_bound() -> None:
    script = Script([anthropic_error(500, "api_error", "internal")], repeat_last=True)
    agent, sleeps = agent_on(script, attempts=4)
    with anyio.fail_after(10), pytest.raises(InfrastructureError, match="after 4 attempts"):
        await agent.complete(opening(), [])
    assert len(script.requests) == 4
    assert len(sleeps.delays) == 3


@pytest.mark.anyio
async def test_a_bad_key_is_a_configuration_error_at_once_and_its_message_holds_no_key() -> None:
    script = Script([anthropic_error(401, "authentication_error", "invalid x-api-key: sk-ant-api03-abcdefghijklmnop")])
    agent, sleeps = agent_on(script)
    with anyio.fail_after(10), pytest.raises(ProviderConfigError) as caught:
        await agent.complete(opening(), [])
    assert len(script.requests) == 1 and sleeps.delays == []
    assert "sk-ant-api03" not in str(caught.value)
    assert "ANTHROPIC_API_KEY" in str(caught.value)


def test_without_a_client_the_agent_uses_the_key_from_the_environment_and_leaves_retries_to_us(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    agent = AnthropicAgent(MODEL)
    assert agent.name == f"anthropic:{MODEL}"
    assert agent.client.api_key == "sk-ant-test-0123456789"
    assert agent.client.max_retries == 0


def test_costs_come_from_the_price_table_by_model_prefix() -> None:
    usage = Usage(
        input_tokens=1_000_000, output_tokens=1_000_000, cache_read_tokens=1_000_000, cache_write_tokens=1_000_000
    )
    assert estimate_cost("claude-sonnet-4-5-20250929", usage) == pytest.approx(3 + 15 + 0.3 + 3.75)
    assert estimate_cost("claude-haiku-4-5", Usage(input_tokens=2_000_000)) == pytest.approx(2.0)
    assert estimate_cost("my-local-model", usage) is None
