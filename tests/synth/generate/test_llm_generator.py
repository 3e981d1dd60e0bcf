"""The LLM task generator end to end, through the real ``anthropic`` client on a scripted transport:
drafts are validated for real (static and by execution), failures go back with their diagnostics."""

from __future__ import annotations

import copy
import json
from typing import Any

import anthropic
import anyio
import httpx2
import pytest

from coworkenv.synth.generate.llm_generator import LLMGenerator, extract_json
from coworkenv.synth.generate.llm_prompts import DISCRIMINATOR_ROLE, SAFETY_GENERATOR_ROLE
from coworkenv.synth.generate.plan import Cell
from coworkenv.synth.providers import ProviderConfigError, RetryPolicy, no_wait_policy
from tests.fakes.common import Sleeps
from tests.fakes.transports import Script, anthropic_client, anthropic_error, anthropic_text, anthropic_usage
from tests.synth.conftest import base_task

CELL = Cell(capability="distractor rejection", scenario="support-escalation", services=("tickets",), difficulty="easy")
SAFETY_CELL = Cell(
    capability="safety under suspicious instructions",
    scenario="ticket-closure-pressure",
    services=("tickets",),
    difficulty="easy",
)
MODEL = "claude-sonnet-4-6"


def fenced(doc: dict[str, Any], before: str = "Here is the task.") -> dict[str, Any]:
    return anthropic_text(f"{before}\n```json\n{json.dumps(doc)}\n```", usage=anthropic_usage(2000, 800, read=30000))


def good_draft() -> dict[str, Any]:
    draft = base_task()
    draft["id"] = "whatever-the-model-says"
    return draft


def broken_draft() -> dict[str, Any]:
    draft = good_draft()
    draft["completion_checks"][1]["weight"] = 0.2  # 0.6 + 0.2 + 0.1 = 0.9
    return draft


def generator(script: Script, **options: Any) -> LLMGenerator:
    options.setdefault("retry", no_wait_policy())
    options.setdefault("max_reviews", 0)  # the draft → validate → repair loop alone (the review step: _review tests)
    return LLMGenerator(MODEL, client=anthropic_client(script), **options)


@pytest.mark.anyio
async def test_a_good_draft_is_validated_and_accepted_with_its_cost() -> None:
    script = Script([fenced(good_draft())])
    gen = generator(script)
    with anyio.fail_after(30):
        outcome = await gen.generate(CELL, seed=7)
    assert outcome.accepted and outcome.repairs == 0, outcome.detail
    task = outcome.task
    assert task is not None
    assert task.id == "llm-support-escalation-easy-0000000007"
    assert task.services == ["tickets"] and task.difficulty == "easy"
    assert task.capabilities[0] == "distractor rejection"
    assert task.metadata["generator"] == "llm" and task.metadata["model"] == MODEL
    assert outcome.requests == 1 and outcome.usage.cache_read_tokens == 30000
    assert outcome.cost_usd is not None and outcome.cost_usd > 0
    report = gen.report()
    assert report["outcomes"]["accepted"] == 1 and report["requests"] == 1 and report["cost_usd"] == outcome.cost_usd

    (body,) = script.bodies
    catalog, role = body["system"]
    assert catalog["cache_control"] == {"type": "ephemeral"}
    assert "`escalate_ticket`" in catalog["text"] and "`search_messages`" in catalog["text"]
    assert "The task JSON Schema" in catalog["text"] and "completion_checks" in catalog["text"]
    assert "cache_control" not in role
    prompt = body["messages"][0]["content"][0]["text"]
    assert "support-escalation" in prompt and "exactly these): tickets" in prompt and "```json" in prompt


@pytest.mark.anyio
async def test_a_broken_draft_goes_back_with_its_diagnostics_and_the_repair_is_accepted() -> None:
    script = Script([fenced(broken_draft()), fenced(good_draft(), "Fixed the weights.")])
    gen = generator(script)
    with anyio.fail_after(30):
        outcome = await gen.generate(CELL, seed=8)
    assert outcome.accepted and outcome.repairs == 1
    assert gen.report()["outcomes"]["repaired"] == 1
    second = script.bodies[1]
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
    feedback = second["messages"][2]["content"][0]["text"]
    assert "WEIGHTS_SUM" in feedback and "0.9" in feedback
    assert second["messages"][2]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert second["system"] == script.bodies[0]["system"]  # the same cached catalog


@pytest.mark.anyio
async def test_the_generator_gives_up_after_the_bounded_number_of_repairs() -> None:
    script = Script([fenced(broken_draft())], repeat_last=True)
    gen = generator(script, max_repairs=2)
    with anyio.fail_after(30):
        outcome = await gen.generate(CELL, seed=9)
    assert not outcome.accepted and outcome.reason == "invalid"
    assert outcome.repairs == 2 and len(script.requests) == 3
    assert any(d.code == "WEIGHTS_SUM" for d in outcome.diagnostics)
    assert "gave up after 2 repair(s)" in outcome.detail
    assert outcome.rejected_drafts == ["WEIGHTS_SUM"] * 3
    assert gen.report()["outcomes"]["invalid"] == 1


@pytest.mark.anyio
async def test_a_reply_without_json_is_asked_again() -> None:
    script = Script([anthropic_text("Sure! I will write a great task."), fenced(good_draft())])
    gen = generator(script)
    with anyio.fail_after(30):
        outcome = await gen.generate(CELL, seed=10)
    assert outcome.accepted and outcome.repairs == 1
    assert "DRAFT_NOT_JSON" in script.bodies[1]["messages"][2]["content"][0]["text"]


@pytest.mark.anyio
async def test_a_safety_scenario_gets_its_checks_and_forbidden_actions_from_a_separate_discriminator() -> None:
    task = good_draft()
    draft = {**task, "completion_checks": [], "forbidden_actions": []}
    grading = {"completion_checks": task["completion_checks"], "forbidden_actions": task["forbidden_actions"]}
    script = Script([fenced(draft), fenced(grading)])
    gen = generator(script)
    with anyio.fail_after(30):
        outcome = await gen.generate(SAFETY_CELL, seed=11)
    assert outcome.accepted, outcome.detail
    assert outcome.task is not None and outcome.task.safety is True
    assert [f.id for f in outcome.task.forbidden_actions] == ["closed_it"]
    writer, judge = script.bodies
    assert writer["system"][1]["text"] == SAFETY_GENERATOR_ROLE
    assert judge["system"][1]["text"] == DISCRIMINATOR_ROLE
    assert judge["system"][0] == writer["system"][0]  # one cached catalog for both contexts
    assert len(judge["messages"]) == 1  # a fresh context: it sees the situation, not the writer's conversation
    shown = extract_json(judge["messages"][0]["content"][0]["text"])
    assert isinstance(shown, dict) and "initial_records" in shown and "completion_checks" not in shown


@pytest.mark.anyio
async def test_a_grading_failure_of_a_safety_task_goes_back_to_the_discriminator_only() -> None:
    task = good_draft()
    draft = {**task, "completion_checks": [], "forbidden_actions": []}
    bad = copy.deepcopy(task["completion_checks"])
    bad[1]["weight"] = 0.2
    script = Script(
        [
            fenced(draft),
            fenced({"completion_checks": bad, "forbidden_actions": task["forbidden_actions"]}),
            fenced({"completion_checks": task["completion_checks"], "forbidden_actions": task["forbidden_actions"]}),
        ]
    )
    gen = generator(script)
    with anyio.fail_after(30):
        outcome = await gen.generate(SAFETY_CELL, seed=12)
    assert outcome.accepted and outcome.repairs == 1
    third = script.bodies[2]
    assert third["system"][1]["text"] == DISCRIMINATOR_ROLE
    assert "WEIGHTS_SUM" in third["messages"][-1]["content"][0]["text"]


@pytest.mark.anyio
async def test_rate_limits_are_retried_and_an_outage_is_reported_not_raised() -> None:
    sleeps = Sleeps()
    script = Script([anthropic_error(429, "rate_limit_error"), fenced(good_draft())])
    gen = generator(script, retry=RetryPolicy(max_attempts=3, sleep=sleeps))
    with anyio.fail_after(30):
        outcome = await gen.generate(CELL, seed=13)
    assert outcome.accepted and len(sleeps.delays) == 1 and gen.report()["retries"] == 1

    down = Script([anthropic_error(529, "overloaded_error")], repeat_last=True)
    gen = generator(down, retry=RetryPolicy(max_attempts=3, sleep=Sleeps()))
    with anyio.fail_after(30):
        outcome = await gen.generate(CELL, seed=14)
    assert outcome.reason == "infrastructure" and "after 3 attempts" in outcome.detail
    assert gen.report()["outcomes"]["infrastructure"] == 1


@pytest.mark.anyio
async def test_a_missing_or_bad_api_key_stops_the_run() -> None:
    script = Script([anthropic_error(401, "authentication_error", "invalid x-api-key")])
    with anyio.fail_after(30), pytest.raises(ProviderConfigError):
        await generator(script).generate(CELL, seed=15)


@pytest.mark.anyio
async def test_concurrent_cells_share_a_bounded_number_of_requests_in_flight() -> None:
    script = Script([lambda _: fenced(good_draft())], repeat_last=True)
    state = {"now": 0, "max": 0}

    async def handler(request: httpx2.Request) -> httpx2.Response:
        state["now"] += 1
        state["max"] = max(state["max"], state["now"])
        for _ in range(5):
            await anyio.lowlevel.checkpoint()
        state["now"] -= 1
        return script.handle(request)

    client_http = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    client = anthropic.AsyncAnthropic(api_key="test-key", max_retries=0, http_client=client_http)
    gen = LLMGenerator(MODEL, client=client, retry=no_wait_policy(), concurrency=2, max_reviews=0)
    outcomes = []

    async def one(seed: int) -> None:
        outcomes.append(await gen.generate(CELL, seed=seed))

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            for seed in range(5):
                tg.start_soon(one, seed)
    assert all(o.accepted for o in outcomes) and len(outcomes) == 5
    assert state["max"] == 2
    assert len({o.task.id for o in outcomes if o.task}) == 5


def test_json_is_found_in_a_fence_or_between_braces_and_problems_are_named() -> None:
    assert extract_json('x ```json\n{"a": 1}\n``` y') == {"a": 1}
    assert extract_json('text {"a": [1, 2]} more') == {"a": [1, 2]}
    assert extract_json("no json here") == "the reply holds no JSON object"
    problem = extract_json('```json\n{"a": }\n```')
    assert isinstance(problem, str) and problem.startswith("the JSON does not parse")


@pytest.mark.anyio
async def test_a_procedural_family_lends_its_own_task_as_the_example_and_its_scenario() -> None:
    from coworkenv.synth.generate.families import FAMILIES

    cell = Cell(
        capability="distractor rejection",
        scenario="tickets-stale-escalation",
        services=("tickets",),
        difficulty="medium",
    )
    script = Script([fenced(good_draft())])
    gen = generator(script)
    with anyio.fail_after(30):
        outcome = await gen.generate(cell, seed=21)
    assert outcome.accepted, outcome.detail
    assert outcome.task is not None and outcome.task.scenario == FAMILIES["tickets-stale-escalation"].scenario
    prompt = script.bodies[0]["messages"][0]["content"][0]["text"]
    assert '"generator": "procedural"' in prompt and '"family": "tickets-stale-escalation"' in prompt
    assert gen.is_safety(Cell("distractor rejection", "bank-change-lookalike", ("email", "payments"), "easy"))
    assert not gen.is_safety(cell)


def test_the_llm_generator_is_what_make_generator_gives_for_llm() -> None:
    from coworkenv.synth.generate.generator import TaskGenerator, make_generator

    gen = make_generator("llm", model="claude-haiku-4-5", workers=3)
    assert isinstance(gen, LLMGenerator) and isinstance(gen, TaskGenerator)
    assert gen.model == "claude-haiku-4-5" and gen.limiter.total_tokens == 3
    report = gen.report()
    for key in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "requests", "cost_usd"):
        assert key in report
