"""The judge Claw-Eval's graders ask: the real openai and anthropic clients on scripted transports, and the
stand-in that answers when no judge is configured."""

from __future__ import annotations

import json

import anthropic
import httpx2
import pytest

from coworkenv.harness.claw_eval.judge import (
    JUDGE_ENV,
    JUDGE_FAILED,
    NOT_JUDGED,
    JudgeLoop,
    JudgeSpecError,
    env_judge,
    judge_from_spec,
    stand_in,
    to_messages_api,
)
from coworkenv.synth.providers import ProviderConfigError, RetryPolicy
from tests.fakes.transports import Script, anthropic_error, anthropic_text, openai_completion, openai_error
from tests.harness.claw_eval.grading_helpers import openai_judge

QUESTION = [
    {"role": "system", "content": "You are an evaluation judge."},
    {"role": "user", "content": "Rate it."},
]


def ask(session: object, **extra: object) -> str:
    params = {"model": "judge-model", "messages": QUESTION, "temperature": 0.0, "max_tokens": 8192, **extra}
    response = session.client.chat.completions.create(**params)  # type: ignore[attr-defined]
    return str(response.choices[0].message.content)


def test_an_openai_compatible_judge_sends_the_graders_request_as_it_is_and_returns_the_models_text() -> None:
    script = Script([openai_completion('{"score": 0.8, "reasoning": "fine"}')])
    session = openai_judge(script).session()
    assert ask(session) == '{"score": 0.8, "reasoning": "fine"}'
    (request,) = script.requests
    assert request.path == "/v1/chat/completions"
    assert request.body == {"model": "judge-model", "messages": QUESTION, "temperature": 0.0, "max_tokens": 8192}
    assert session.not_judged == [] and session.asked == ["Rate it."]


def test_transient_failures_are_retried_with_backoff_without_reaching_the_graders_loop() -> None:
    waits: list[float] = []
    script = Script([openai_error(503), openai_error(429), openai_completion('{"score": 1}')])
    session = openai_judge(script, waits).session()
    assert ask(session) == '{"score": 1}'
    assert len(script.requests) == 3 and len(waits) == 2 and all(0 <= w <= 1.0 for w in waits)


def test_a_judge_that_keeps_failing_answers_not_judged_and_the_grade_says_why() -> None:
    script = Script([openai_error(503)], repeat_last=True)
    session = openai_judge(script, attempts=2).session()
    assert ask(session) == JUDGE_FAILED and json.loads(JUDGE_FAILED)["score"] == 0.0
    assert ask(session, temperature=0.5) == JUDGE_FAILED
    assert len(script.requests) == 2, "after a failure this grade's later questions are not sent"
    assert len(session.not_judged) == 1 and "failed after 2 attempts" in session.not_judged[0]


def test_a_refused_key_is_said_once_and_no_later_grade_sends_anything() -> None:
    script = Script([openai_error(401, "bad key")], repeat_last=True)
    judge = openai_judge(script)
    first, second = judge.session(), judge.session()
    assert ask(first) == JUDGE_FAILED and ask(second) == JUDGE_FAILED
    assert len(script.requests) == 1
    assert "check OPENAI_API_KEY" in first.not_judged[0] and second.not_judged == first.not_judged


def test_an_anthropic_judge_turns_the_chat_request_into_a_messages_api_request() -> None:
    script = Script([anthropic_text('{"score": 0.5, "reasoning": "half"}')])
    client = anthropic.Anthropic(
        api_key="test-key", max_retries=0, http_client=httpx2.Client(transport=script.transport())
    )
    session = judge_from_spec("anthropic:claude-judge", client=client).session()
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    visual = [QUESTION[0], {"role": "user", "content": [{"type": "text", "text": "Compare."}, image]}]
    response = session.client.chat.completions.create(model=session.model_id, messages=visual, max_tokens=100)
    assert response.choices[0].message.content == '{"score": 0.5, "reasoning": "half"}'
    (request,) = script.requests
    assert request.path == "/v1/messages"
    assert request.body == {
        "model": "claude-judge",
        "max_tokens": 100,
        "system": "You are an evaluation judge.",
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Compare."},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
                ],
            }
        ],
    }


def test_an_anthropic_overload_is_retried_then_answered() -> None:
    waits: list[float] = []
    script = Script([anthropic_error(529, "overloaded_error"), anthropic_text('{"score": 1}')])
    client = anthropic.Anthropic(
        api_key="test-key", max_retries=0, http_client=httpx2.Client(transport=script.transport())
    )
    judge = judge_from_spec(
        "anthropic:claude-judge", client=client, retry=RetryPolicy(max_attempts=3), sleep=waits.append
    )
    assert ask(judge.session()) == '{"score": 1}' and len(waits) == 1


def test_consecutive_turns_of_one_role_are_merged_and_empty_ones_dropped() -> None:
    system, turns = to_messages_api(
        [{"role": "user", "content": "a"}, {"role": "user", "content": ""}, {"role": "user", "content": "b"}]
    )
    assert system == "" and turns == [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    ]
    assert to_messages_api([])[1] == [{"role": "user", "content": [{"type": "text", "text": "(no message)"}]}]


def test_the_stand_in_answers_parseable_not_judged_at_once_and_records_each_question() -> None:
    session = stand_in().session()
    assert ask(session) == NOT_JUDGED and json.loads(NOT_JUDGED) == {
        "score": 0.0,
        "reasoning": "not judged: no judge is configured",
    }
    assert session.not_judged == ["no judge configured; the grader asked: Rate it."]


def test_a_grader_asking_the_stand_in_the_same_question_a_third_time_is_stopped_through_its_retry_loop() -> None:
    session = stand_in().session()
    ask(session)
    ask(session)
    with pytest.raises(JudgeLoop):
        try:
            ask(session)
        except Exception:  # what their retry loops catch: JudgeLoop goes through
            pytest.fail("JudgeLoop must not be an Exception")


def test_judge_specs_name_a_provider_and_a_model_and_a_missing_key_is_one_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for bad in ("gpt-4o", "openai:", "anthropic: ", "vertex:gemini"):
        with pytest.raises(JudgeSpecError, match="openai:MODEL"):
            judge_from_spec(bad)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    with pytest.raises(ProviderConfigError, match="OPENAI_API_KEY"):
        judge_from_spec("openai:gpt-4o")
    with pytest.raises(ProviderConfigError, match="ANTHROPIC_API_KEY"):
        judge_from_spec("anthropic:claude-judge")
    local = judge_from_spec("openai:qwen@http://127.0.0.1:8000/v1")
    assert local.real and local.model_id == "qwen" and local.name == "openai:qwen@http://127.0.0.1:8000/v1"


def test_the_judge_named_in_the_environment_is_built_once_and_one_that_cannot_be_used_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(JUDGE_ENV, raising=False)
    assert env_judge() is None
    monkeypatch.setenv(JUDGE_ENV, "openai:qwen@http://127.0.0.1:8000/v1")
    judge = env_judge()
    assert judge is not None and judge.real and env_judge() is judge
    monkeypatch.setenv(JUDGE_ENV, "gpt-4o")
    unusable = env_judge()
    assert unusable is not None and not unusable.real
    session = unusable.session()
    ask(session)
    assert session.not_judged[0].startswith(f"{JUDGE_ENV}=gpt-4o cannot be used (judge 'gpt-4o': write openai:MODEL")


class _SamplingMessages:
    """A Messages API client that still takes a temperature (older anthropic clients)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, object]] = []

    def create(
        self, *, model: str, max_tokens: int, messages: object, temperature: float = 1.0, **rest: object
    ) -> object:
        self.requests.append({"model": model, "temperature": temperature, **rest})
        block = type("Block", (), {"type": "text", "text": '{"score": 1}'})()
        return type("Response", (), {"content": [block]})()


def test_the_graders_temperature_goes_to_an_anthropic_client_that_takes_one() -> None:
    messages = _SamplingMessages()
    client = type("Client", (), {"messages": messages})()
    assert ask(judge_from_spec("anthropic:claude-judge", client=client).session()) == '{"score": 1}'
    assert messages.requests == [{"model": "judge-model", "temperature": 0.0, "system": "You are an evaluation judge."}]
