"""The LLM generator grounded on a user's files, through the real ``anthropic`` client on a scripted transport:
the loaded records are in the writer's prompt, and the accepted task's seed holds them as loaded (a draft that
shortened or dropped one gets the original back), attached to the draft's own user."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from coworkenv.synth.generate.families import FAMILIES
from coworkenv.synth.generate.llm_generator import LLMGenerator
from coworkenv.synth.generate.plan import Cell
from coworkenv.synth.generate.resources import load_resources
from coworkenv.synth.providers import no_wait_policy
from tests.fakes.transports import Script, anthropic_client, anthropic_text, anthropic_usage
from tests.synth.generate.resources.files import write_folder

CELL = Cell(capability="reporting to the user", scenario="document-question", services=("docs",), difficulty="easy")


def fenced(doc: dict[str, Any]) -> dict[str, Any]:
    return anthropic_text(f"```json\n{json.dumps(doc)}\n```", usage=anthropic_usage(1000, 500))


@pytest.mark.anyio
async def test_the_writer_sees_the_loaded_records_and_the_task_keeps_them_whole(tmp_path: Path) -> None:
    rs = load_resources(write_folder(tmp_path))
    draft = FAMILIES["document-question"].make(("docs",), "easy", 5, rs).model_dump(mode="json")
    docs = draft["initial_records"]["docs"]["documents"]
    policy = next(d for d in docs if d["id"] == "doc_docs_travel_policy_md")
    policy["content"] = "# Travel policy\n\n(shortened by the model)"
    draft["initial_records"]["docs"]["documents"] = [d for d in docs if d["id"] != "doc_docs_notes_txt"]
    script = Script([fenced(draft)])
    gen = LLMGenerator(
        "claude-sonnet-4-6", client=anthropic_client(script), retry=no_wait_policy(), max_reviews=0, resources=rs
    )
    with anyio.fail_after(60):
        outcome = await gen.generate(CELL, seed=5)
    assert outcome.accepted, outcome.detail
    prompt = script.bodies[0]["messages"][0]["content"][0]["text"]
    assert "Ground this task on the user's own files" in prompt
    assert "Northstar Inns" in prompt and "doc_docs_notes_txt" in prompt
    task = outcome.task
    assert task is not None and task.metadata["grounded_on"] == rs.fingerprint()
    seeded = {d["id"]: d for d in task.initial_records["docs"]["documents"]}
    assert "Hotel chain: Northstar Inns" in seeded["doc_docs_travel_policy_md"]["content"]
    assert "Parking: level two" in seeded["doc_docs_notes_txt"]["content"]
    primary = next(u["email"] for u in task.initial_records["docs"]["users"] if u["is_primary"])
    assert {seeded[k]["owner"] for k in ("doc_docs_travel_policy_md", "doc_docs_notes_txt")} == {primary}


@pytest.mark.anyio
async def test_a_draft_without_a_mailbox_gets_the_owner_of_the_loaded_mail(tmp_path: Path) -> None:
    rs = load_resources(write_folder(tmp_path))
    draft = FAMILIES["invoice-mail-to-log"].make(("email", "files"), "easy", 5, rs).model_dump(mode="json")
    draft["initial_records"].pop("email")
    draft["reference_solution"] = [s for s in draft["reference_solution"] if s.get("service") != "email"]
    cell = Cell("cross-service lookup", "invoice-mail-to-log", ("email", "files"), "easy")
    script = Script([fenced(draft)], repeat_last=True)
    gen = LLMGenerator(
        "claude-sonnet-4-6",
        client=anthropic_client(script),
        retry=no_wait_policy(),
        max_reviews=0,
        max_repairs=0,
        resources=rs,
    )
    with anyio.fail_after(60):
        doc = gen.normalise(draft, cell, 5)
    boxes = doc["initial_records"]["email"]["mailboxes"]
    assert [b["address"] for b in boxes] == ["priya@ourco.example"]
    assert {m["mailbox"] for m in doc["initial_records"]["email"]["messages"]} == {"priya@ourco.example"}
    assert any(m["subject"] == "Invoice OL-7791 for May" for m in doc["initial_records"]["email"]["messages"])
