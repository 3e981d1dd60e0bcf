"""What the provider backends share: retries, secret scrubbing, argument parsing; and the spec strings that
reach each backend through the agent registry."""

from __future__ import annotations

import random

import anyio
import pytest

from coworkenv.harness.agents.anthropic_agent import AnthropicAgent
from coworkenv.harness.agents.base import InfrastructureError
from coworkenv.harness.agents.claude_code import ClaudeCodeAgent
from coworkenv.harness.agents.hf_agent import HFAgent
from coworkenv.harness.agents.openai_agent import OpenAIAgent
from coworkenv.harness.agents.registry import make_agent
from coworkenv.synth.providers import (
    REDACTED,
    ErrorClass,
    RetryPolicy,
    arguments_or_invalid,
    classify_http_error,
    invalid_arguments,
    parse_arguments,
    scrub,
    with_retries,
)
from tests.fakes.common import Sleeps


def test_scrub_removes_api_keys_bearer_tokens_and_secret_environment_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-1234567890abcdef")
    text = (
        "key sk-ant-api03-AAAAbbbbCCCCdddd, openai sk-proj-abcdefghijklmnopqrstuv, "
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload, x-api-key: secretvalue123, env tok-1234567890abcdef"
    )
    cleaned = scrub(text)
    for secret in ("sk-ant-api03", "sk-proj-abc", "eyJhbGci", "secretvalue123", "tok-1234567890abcdef"):
        assert secret not in cleaned
    assert cleaned.count(REDACTED) >= 5
    assert scrub("nothing secret here: tkt_1 escalated") == "nothing secret here: tkt_1 escalated"


def test_backoff_grows_exponentially_within_its_cap_and_honours_retry_after() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=10.0, rng=random.Random(0))
    for attempt in range(8):
        assert 0 <= policy.delay(attempt) <= min(10.0, 2**attempt)
    assert policy.delay(0, retry_after=4.0) == 4.0
    assert policy.delay(0, retry_after=600.0) == 10.0


@pytest.mark.anyio
async def test_a_bug_of_ours_is_not_mistaken_for_a_provider_failure() -> None:
    async def broken() -> None:
        raise KeyError("missing")

    with anyio.fail_after(5), pytest.raises(KeyError):
        await with_retries(broken, RetryPolicy(sleep=Sleeps()), what="test")
    assert classify_http_error(KeyError("x")) == ErrorClass("other")


@pytest.mark.anyio
async def test_connection_errors_are_retried_then_reported_as_infrastructure() -> None:
    class APIConnectionError(Exception):
        pass

    calls = []

    async def flaky() -> str:
        calls.append(1)
        raise APIConnectionError("connection reset")

    sleeps = Sleeps()
    with anyio.fail_after(5), pytest.raises(InfrastructureError, match="connection reset"):
        await with_retries(flaky, RetryPolicy(max_attempts=3, sleep=sleeps), what="test")
    assert len(calls) == 3 and len(sleeps.delays) == 2


def test_tool_arguments_parse_or_carry_their_error() -> None:
    assert parse_arguments('{"a": 1}') == ({"a": 1}, None)
    assert parse_arguments("") == ({}, None)
    assert parse_arguments("[1]")[1] == "arguments must be a JSON object, got list"
    bad = arguments_or_invalid('{"a": ')
    record = invalid_arguments(bad)
    assert record is not None and record["raw"] == '{"a": ' and "not valid JSON" in record["error"]
    assert invalid_arguments({"a": 1}) is None


def test_spec_strings_reach_each_backend_without_loading_anything() -> None:
    anthropic_agent = make_agent("anthropic:claude-sonnet-4-6")
    assert isinstance(anthropic_agent, AnthropicAgent) and anthropic_agent.model == "claude-sonnet-4-6"
    openai_agent = make_agent("openai:qwen3-8b@http://127.0.0.1:8000/v1")
    assert isinstance(openai_agent, OpenAIAgent)
    assert (openai_agent.model, openai_agent.base_url) == ("qwen3-8b", "http://127.0.0.1:8000/v1")
    hf_agent = make_agent("hf:/models/tiny")
    assert isinstance(hf_agent, HFAgent) and hf_agent.path == "/models/tiny"
    claude = make_agent("claude-code")
    assert isinstance(claude, ClaudeCodeAgent) and claude.model is None
    pinned = make_agent("claude-code:claude-opus-4-6")
    assert isinstance(pinned, ClaudeCodeAgent) and pinned.model == "claude-opus-4-6"
