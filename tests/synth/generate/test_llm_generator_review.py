"""The LLM generator on an OpenAI-compatible endpoint (a fake vLLM, through the real ``openai`` client) and its
review step: draft → execute → review → revise, with every draft validated for real."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

from coworkenv.synth.cli_synth import synth_cmd
from coworkenv.synth.contract.task import Task
from coworkenv.synth.contract.validation.validate import TaskReport, validate_task
from coworkenv.synth.generate.llm_generator import LLMGenerator
from coworkenv.synth.generate.llm_prompts import (
    DISCRIMINATOR_ROLE,
    GENERATOR_ROLE,
    REVIEWER_ROLE,
    SAFETY_GENERATOR_ROLE,
)
from coworkenv.synth.providers import PRICES, Price, ProviderConfigError, no_wait_policy
from tests.fakes.openai_endpoint import ChatEndpoint, Roles, serve, system_text
from tests.fakes.transports import Script, anthropic_client, openai_error
from tests.synth.generate.test_llm_generator import CELL, SAFETY_CELL, broken_draft, fenced, good_draft

MODEL = "qwen-local"
ROLES = {"reviewer": REVIEWER_ROLE, "judge": DISCRIMINATOR_ROLE, "writer": GENERATOR_ROLE}
SAFETY_ROLES = {**ROLES, "writer": SAFETY_GENERATOR_ROLE}


def as_text(doc: dict[str, Any], before: str = "Here is the task.") -> str:
    return f"{before}\n```json\n{json.dumps(doc)}\n```"


def verdict(kind: str, *notes: tuple[str, str]) -> str:
    body = {"verdict": kind, "notes": [{"part": part, "note": note} for part, note in notes]}
    return as_text(body, "My review.")


def revised_draft() -> dict[str, Any]:
    draft = good_draft()
    draft["request"] = "The enterprise customer's old ticket needs escalating; tell me its subject once done."
    return draft


def on_endpoint(roles: Roles, **options: Any) -> tuple[LLMGenerator, ChatEndpoint]:
    endpoint = ChatEndpoint(roles)
    options.setdefault("retry", no_wait_policy())
    gen = LLMGenerator(f"openai:{MODEL}", client=endpoint.client(), **options)
    return gen, endpoint


def user_texts(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


@pytest.mark.anyio
async def test_an_openai_compatible_endpoint_drives_draft_execute_review_revise_accept() -> None:
    note = ("request", "Say 'enterprise customer' instead of naming the plan tier.")
    roles = Roles(
        ROLES,
        writer=[as_text(good_draft()), as_text(revised_draft(), "Revised.")],
        reviewer=[verdict("revise", note), verdict("accept")],
    )
    gen, endpoint = on_endpoint(roles)
    with anyio.fail_after(60):
        outcome = await gen.generate(CELL, seed=31)
    assert outcome.accepted, outcome.detail
    assert roles.calls == ["writer", "reviewer", "writer", "reviewer"]
    assert outcome.task is not None and outcome.task.request == revised_draft()["request"]
    assert outcome.revisions == 1 and outcome.repairs == 0
    assert [r.verdict for r in outcome.reviews] == ["revise", "accept"]

    # The wire: the served model is checked once, then chat completions with one system message each.
    assert [(r.method, r.path) for r in endpoint.requests][:2] == [
        ("GET", "/v1/models"),
        ("POST", "/v1/chat/completions"),
    ]
    first = endpoint.chats[0]
    assert first["model"] == MODEL and first["messages"][0]["role"] == "system"
    assert "`escalate_ticket`" in first["messages"][0]["content"]
    assert (
        "## Service `payments`" not in first["messages"][0]["content"]
    )  # a local model reads the cell's services only

    # The reviewer's own context: the spec, the task as validated, and the evidence of running it.
    review = endpoint.chats[1]
    assert [m["role"] for m in review["messages"]] == ["system", "user"]
    (asked,) = user_texts(review)
    assert "## The spec" in asked and "capability: distractor rejection" in asked
    assert '"id": "llm-support-escalation-easy-' in asked
    assert "Validation: VALID" in asked and "reference solution (must score 1.0): score 1.00" in asked
    assert "doing nothing (must score 0): score 0.00" in asked
    assert "Adversaries" in asked and "spray" in asked and "Mutated references" in asked
    # The writer gets the notes in its own conversation; the reviewer then sees the revision in its conversation.
    revise = user_texts(endpoint.chats[2])
    assert len(revise) == 2 and "passed validation" in revise[1] and note[1] in revise[1]
    again = user_texts(endpoint.chats[3])
    assert (
        len(again) == 2 and again[1].startswith("The writer revised the task") and "enterprise customer's" in again[1]
    )

    recorded = outcome.task.metadata["review"]
    assert [(r["round"], r["verdict"], r["valid"]) for r in recorded] == [(1, "revise", True), (2, "accept", True)]
    assert recorded[0]["notes"] == [{"part": "request", "note": note[1]}]
    assert recorded[0]["evidence"]["reference"] == 1.0 and recorded[0]["evidence"]["noop"] == 0.0
    assert "spray" in " ".join(recorded[0]["evidence"]["adversaries"])
    report = gen.report()
    assert report["provider"] == "openai" and report["endpoint"] == f"openai:{MODEL}"
    assert report["review"]["rounds"] == 2 and report["review"]["revise"] == 1 and report["review"]["accept"] == 1
    assert report["review"]["revisions"] == 1 and report["review"]["log"][0]["cell"] == CELL.key


@pytest.mark.anyio
async def test_tokens_are_recorded_per_outcome_and_a_priced_model_gets_a_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    roles = Roles(ROLES, writer=[as_text(good_draft())], reviewer=[verdict("accept")])
    gen, _ = on_endpoint(roles)
    with anyio.fail_after(60):
        outcome = await gen.generate(CELL, seed=32)
    assert outcome.accepted and outcome.requests == 2
    assert (outcome.usage.input_tokens, outcome.usage.cache_read_tokens, outcome.usage.output_tokens) == (
        2000,
        4000,
        1400,
    )
    assert outcome.cost_usd is None  # a local model has no price
    report = gen.report()
    assert report["requests"] == 2 and report["input_tokens"] == 2000 and report["cost_usd"] is None

    monkeypatch.setitem(PRICES, MODEL, Price(input=1.0, output=2.0, cache_read=0.5))
    roles = Roles(ROLES, writer=[as_text(good_draft())], reviewer=[verdict("accept")])
    gen, _ = on_endpoint(roles)
    with anyio.fail_after(60):
        outcome = await gen.generate(CELL, seed=33)
    assert outcome.cost_usd == pytest.approx((2000 * 1.0 + 4000 * 0.5 + 1400 * 2.0) / 1e6)
    assert gen.report()["cost_usd"] == outcome.cost_usd


@pytest.mark.anyio
async def test_a_revision_the_reviewer_asks_for_is_a_second_draft_validated_again() -> None:
    validated: list[Task] = []

    async def validate(task: Task) -> TaskReport:
        validated.append(task)
        return await validate_task(task)

    roles = Roles(
        ROLES,
        writer=[as_text(good_draft()), as_text(revised_draft())],
        reviewer=[verdict("revise", ("request", "Less formal, please."))],
    )
    gen, _ = on_endpoint(roles, max_reviews=1, validate=validate)
    with anyio.fail_after(60):
        outcome = await gen.generate(CELL, seed=34)
    assert roles.calls == ["writer", "reviewer", "writer"]  # one review round allowed: the revision is not reviewed
    assert [t.request for t in validated] == [good_draft()["request"], revised_draft()["request"]]
    assert outcome.task is not None and outcome.task.request == revised_draft()["request"]


@pytest.mark.anyio
async def test_a_revision_that_breaks_validation_keeps_the_last_valid_draft() -> None:
    roles = Roles(
        ROLES,
        writer=[as_text(good_draft()), as_text(broken_draft())],
        reviewer=[verdict("revise", ("checks", "Give the reply check more weight."))],
    )
    gen, _ = on_endpoint(roles, max_reviews=1, max_repairs=1)
    with anyio.fail_after(60):
        outcome = await gen.generate(CELL, seed=35)
    assert roles.calls == ["writer", "reviewer", "writer", "writer"]
    assert outcome.accepted and outcome.task is not None and outcome.task.request == good_draft()["request"]
    assert outcome.rejected_drafts == ["WEIGHTS_SUM", "WEIGHTS_SUM"]
    assert not [d for d in outcome.diagnostics if d.severity == "error"]
    assert gen.report()["review"]["kept_earlier_draft"] == 1


@pytest.mark.anyio
async def test_an_invalid_draft_is_reviewed_with_its_evidence_and_the_reviewer_cannot_accept_it() -> None:
    roles = Roles(
        ROLES,
        writer=[as_text(broken_draft()), as_text(good_draft())],
        reviewer=[
            verdict("accept", ("checks", "Weights must sum to 1: make the second check 0.3.")),
            verdict("accept"),
        ],
    )
    gen, endpoint = on_endpoint(roles)
    with anyio.fail_after(60):
        outcome = await gen.generate(CELL, seed=36)
    assert roles.calls == ["writer", "reviewer", "writer", "reviewer"]
    assert outcome.accepted and outcome.repairs == 1 and outcome.revisions == 0
    assert [(r.valid, r.verdict) for r in outcome.reviews] == [(False, "accept"), (True, "accept")]
    (asked,) = user_texts(endpoint.chats[1])
    assert "Validation: INVALID" in asked and "WEIGHTS_SUM" in asked and "Not executed" in asked
    repair = user_texts(endpoint.chats[2])[1]
    assert "failed validation" in repair and "WEIGHTS_SUM" in repair and "make the second check 0.3" in repair


@pytest.mark.anyio
async def test_in_a_safety_task_the_reviewers_notes_on_checks_go_to_the_discriminator_only() -> None:
    task = good_draft()
    draft = {**task, "completion_checks": [], "forbidden_actions": []}
    grading = {"completion_checks": task["completion_checks"], "forbidden_actions": task["forbidden_actions"]}
    note = ("forbidden", "Also forbid closing the Small Shop ticket.")
    roles = Roles(
        SAFETY_ROLES,
        writer=[as_text(draft)],
        judge=[as_text(grading)],
        reviewer=[verdict("revise", note), verdict("accept")],
    )
    gen, endpoint = on_endpoint(roles)
    with anyio.fail_after(60):
        outcome = await gen.generate(SAFETY_CELL, seed=37)
    assert outcome.accepted, outcome.detail
    assert roles.calls == ["writer", "judge", "reviewer", "judge", "reviewer"]
    judged = user_texts(endpoint.chats[3])
    assert len(judged) == 2 and note[1] in judged[1] and "grading" in judged[1]
    assert REVIEWER_ROLE in system_text(endpoint.chats[2]) and DISCRIMINATOR_ROLE not in system_text(endpoint.chats[2])


@pytest.mark.anyio
async def test_a_reviewer_whose_endpoint_fails_leaves_the_valid_draft_accepted() -> None:
    roles = Roles(ROLES, writer=[as_text(good_draft())], reviewer=[openai_error(503)])
    gen, _ = on_endpoint(roles)
    with anyio.fail_after(60):
        outcome = await gen.generate(CELL, seed=43)
    assert roles.calls == ["writer", "reviewer", "reviewer", "reviewer"]  # three attempts, then the outage
    assert outcome.accepted and outcome.reason is None and "kept the last valid draft" in outcome.detail
    assert gen.report()["outcomes"]["accepted"] == 1 and gen.report()["retries"] == 2


@pytest.mark.anyio
async def test_an_unreadable_review_leaves_a_valid_draft_accepted() -> None:
    roles = Roles(ROLES, writer=[as_text(good_draft())], reviewer=["Looks fine to me!"])
    gen, _ = on_endpoint(roles)
    with anyio.fail_after(60):
        outcome = await gen.generate(CELL, seed=38)
    assert outcome.accepted and [r.verdict for r in outcome.reviews] == ["unreadable"]
    assert gen.report()["review"]["unreadable"] == 1


@pytest.mark.anyio
async def test_the_anthropic_generator_reviews_in_a_separate_cached_context_too() -> None:
    script = Script([fenced(good_draft()), fenced({"verdict": "accept", "notes": []})])
    gen = LLMGenerator("anthropic:claude-sonnet-4-6", client=anthropic_client(script), retry=no_wait_policy())
    with anyio.fail_after(60):
        outcome = await gen.generate(CELL, seed=39)
    assert outcome.accepted and gen.spec.provider == "anthropic" and gen.model == "claude-sonnet-4-6"
    writer, reviewer = script.bodies
    assert reviewer["system"][1]["text"] == REVIEWER_ROLE
    assert reviewer["system"][0] == writer["system"][0] and reviewer["system"][0]["cache_control"]
    assert len(reviewer["messages"]) == 1
    assert reviewer["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert outcome.task is not None and outcome.task.metadata["review"][0]["verdict"] == "accept"


# ---------------------------------------------------------------------------------------------- endpoint problems
def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.mark.anyio
async def test_an_unreachable_endpoint_is_one_clear_line() -> None:
    url = closed_port_url()
    gen = LLMGenerator(f"openai:{MODEL}", base_url=url, retry=no_wait_policy())
    with anyio.fail_after(30), pytest.raises(ProviderConfigError) as caught:
        await gen.generate(CELL, seed=40)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"cannot reach the OpenAI-compatible endpoint at {url}")
    assert "vllm serve qwen-local" in message and "--base-url" in message


@pytest.mark.anyio
async def test_a_model_the_endpoint_does_not_serve_is_one_clear_line() -> None:
    endpoint = ChatEndpoint(Roles(ROLES), models=["Qwen/Qwen3-8B"])
    gen = LLMGenerator("openai:qwen-locl", client=endpoint.client(), retry=no_wait_policy())
    with anyio.fail_after(30), pytest.raises(ProviderConfigError) as caught:
        await gen.generate(CELL, seed=41)
    message = str(caught.value)
    assert "\n" not in message and "model 'qwen-locl' is not served" in message
    assert "--model openai:Qwen/Qwen3-8B" in message and endpoint.chats == []

    # An endpoint without GET /models: the first request's 404 says it.
    endpoint = ChatEndpoint(Roles(ROLES), models=["Qwen/Qwen3-8B"], models_status=404)
    gen = LLMGenerator("openai:qwen-locl", client=endpoint.client(), retry=no_wait_policy())
    with anyio.fail_after(30), pytest.raises(ProviderConfigError) as caught:
        await gen.generate(CELL, seed=42)
    message = str(caught.value)
    assert "\n" not in message and "does not exist" in message and "the model name and the base URL" in message


def test_the_command_line_says_in_one_line_that_the_endpoint_is_unreachable(tmp_path: Path) -> None:
    url = closed_port_url()
    args = ["--generator", "llm", "--model", f"openai:{MODEL}", "--base-url", url, "--count", "1"]
    result = CliRunner().invoke(synth_cmd, [*args, "--out", str(tmp_path / "out"), "-q"])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: synthesis stopped: cannot reach the OpenAI-compatible")


PLAN = """\
name: one-cell
count: 1
capabilities:
  - name: distractor rejection
service_combinations:
  - [tickets]
difficulties:
  easy: 1.0
scenarios:
  - family: tickets-stale-escalation
"""


def test_coworkenv_synth_runs_on_a_local_openai_compatible_server(tmp_path: Path) -> None:
    roles = Roles(ROLES, writer=[as_text(good_draft())], reviewer=[verdict("accept")])
    endpoint = ChatEndpoint(roles)
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN)
    out = tmp_path / "out"
    with serve(endpoint) as url:
        args = ["--plan", str(plan), "--generator", "llm", "--model", f"openai:{MODEL}", "--base-url", url]
        result = CliRunner().invoke(synth_cmd, [*args, "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    assert roles.calls == ["writer", "reviewer"]
    (task_file,) = [p for p in out.iterdir() if p.name != "synthesis_report.json" and not p.name.startswith(".")]
    task = json.loads(task_file.read_text())
    assert task["metadata"]["generator"] == "llm" and task["metadata"]["provider"] == "openai"
    assert task["metadata"]["review"][0]["verdict"] == "accept"
    report = json.loads((out / "synthesis_report.json").read_text())
    assert report["accepted"] == 1 and report["model"] == f"openai:{MODEL}"
    assert report["usage"]["requests"] == 2 and report["usage"]["input_tokens"] == 2000
    assert endpoint.requests[0].headers.get("authorization") == "Bearer EMPTY"  # a local server needs no key


def test_base_url_is_refused_for_the_procedural_generator(tmp_path: Path) -> None:
    result = CliRunner().invoke(synth_cmd, ["--base-url", "http://127.0.0.1:8000/v1", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "--base-url is for --generator llm" in result.output
