"""The docs service's writes, through the in-memory MCP client: creating, replacing, exact edits and the
revision history."""

from __future__ import annotations

from typing import Any

import pytest

from coworkenv.servers.docs import SERVICE
from tests.conftest import service_client
from tests.servers.docs.test_docs import DANA, KIM, LENA, SEED, a_doc, call, call_as, edit, edit_error, fail, small_seed

pytestmark = pytest.mark.anyio


# ---------------------------------------------------------------------------------------------- writing
async def test_create_document_stamps_the_clock_and_starts_the_history() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        doc = await call(c, "create_document", title="Agenda", content="# Agenda\n", folder_id="fld_meetings")
        assert doc["id"].startswith("doc_") and doc["revision"] == 1 and doc["owner"] == DANA
        assert (doc["created_at"], doc["updated_at"], doc["your_role"]) == ("2026-03-02T09:00:00Z",) * 2 + ("owner",)
        history = await call(c, "list_revisions", document_id=doc["id"])
        assert [(r["number"], r["summary"]) for r in history["items"]] == [(1, "Created the document")]
        assert {d["id"]: d["content"] for d in env.dump()["docs"]["documents"]}[doc["id"]] == "# Agenda\n"
        assert "list_folders" in await fail(c, "create_document", title="x", folder_id="fld_nope")
        assert "title" in await fail(c, "create_document", title="")


async def test_update_document_replaces_content_and_title_as_a_new_revision() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        doc = await call(c, "update_document", document_id="doc_q1_report", content="# Q1\n", base_revision=3)
        assert (doc["revision"], doc["content"], doc["last_modified_by"]) == (4, "# Q1\n", DANA)
        renamed = await call(c, "update_document", document_id="doc_q1_report", title="Q1 report (final)")
        assert renamed["revision"] == 5 and renamed["content"] == "# Q1\n"
        history = (await call(c, "list_revisions", document_id="doc_q1_report"))["items"]
        assert [r["summary"] for r in history[:2]] == ["Renamed to 'Q1 report (final)'", "Replaced the content"]
        same = await call(c, "update_document", document_id="doc_q1_report", content="# Q1\n")
        assert same["revision"] == 5  # nothing changed: no new revision
        assert "Nothing to update" in await fail(c, "update_document", document_id="doc_q1_report")


async def test_update_with_a_stale_base_revision_is_a_conflict_that_changes_nothing() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        before = env.state_hash()
        text = await fail(c, "update_document", document_id="doc_q1_report", content="mine", base_revision=2)
        assert "at revision 3, not 2" in text and "get_document" in text and "base_revision 3" in text
        text = await edit_error(c, "doc_q1_report", "append", "x", base_revision=1)
        assert "at revision 3, not 1" in text
        assert env.state_hash() == before


async def test_commenters_and_viewers_cannot_edit_and_are_told_what_to_do_instead() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        text = await fail(c, "update_document", document_id="doc_refunds", content="x")
        assert "is a commenter" in text and "add_comment" in text
        text = await edit_error(c, "doc_vendor_verification", "append", "x")
        assert "is a viewer" in text and "Ask the owner (lena.ortiz@brightwave.io) for editor access" in text
        assert "is a viewer" in await fail(c, "add_comment", document_id="doc_pricing_2026", body="hm")
        edited = call_as(env, LENA, "edit_document", document_id="doc_refunds", operation="append", text="x")
        assert edited["last_modified_by"] == LENA and edited["your_role"] == "owner"


async def test_edit_document_replaces_one_exact_occurrence() -> None:
    async with service_client(SERVICE, SEED) as (_, env):
        new, old = "Refunds over $1,000 need finance approval", "Refunds over $500 need finance approval"
        doc = call_as(env, LENA, "edit_document", document_id="doc_refunds", operation="replace", text=new, find=old)
        assert "Refunds over $1,000 need finance approval (Lena Ortiz)" in doc["content"] and doc["revision"] == 2
        original = SEED["documents"][1]["content"]
        assert doc["content"] == original.replace("Refunds over $500", "Refunds over $1,000")


async def test_edit_document_refuses_a_find_text_that_is_missing_or_ambiguous() -> None:
    async with service_client(SERVICE, small_seed(a_doc("doc_a", "one two one"))) as (c, env):
        before = env.state_hash()
        assert "does not occur" in await edit_error(c, "doc_a", "replace", "1", find="ONE")
        text = await edit_error(c, "doc_a", "replace", "1", find="one")
        assert "occurs 2 times" in text and "replace_all" in text
        assert "needs find" in await edit_error(c, "doc_a", "replace", "1")
        assert "find is empty" in await edit_error(c, "doc_a", "replace", "1", find="")
        assert env.state_hash() == before
        doc = await edit(c, "doc_a", "replace", "1", find="one", replace_all=True)
        assert doc["content"] == "1 two 1"
        history = await call(c, "list_revisions", document_id="doc_a")
        assert history["items"][0]["summary"] == "Replaced 2 occurrences of 'one'"
        deleted = await edit(c, "doc_a", "replace", "", find=" two")
        assert deleted["content"] == "1 1" and deleted["revision"] == 3


async def test_edit_document_appends_and_inserts_under_headings_exactly() -> None:
    content = "# Notes\n\n## Decisions\n- a\n\n## Action items\n- Omar: logs\n\n### Later\n- c\n"
    async with service_client(SERVICE, small_seed(a_doc("doc_n", content), a_doc("doc_t", "no newline"))) as (c, _):
        doc = await edit(c, "doc_n", "append_to_section", "- b", heading="Decisions")
        assert doc["content"] == content.replace("- a\n", "- a\n- b\n")
        doc = await edit(c, "doc_n", "insert_after_heading", "- Kim: macro", heading="## Action items")
        assert "## Action items\n- Kim: macro\n- Omar: logs\n" in doc["content"]
        doc = await edit(c, "doc_n", "append_to_section", "- Dana", heading="Action items")
        assert doc["content"].endswith("### Later\n- c\n- Dana\n")  # subsections belong to the section
        tail = await edit(c, "doc_t", "append", "more")
        assert tail["content"] == "no newline\nmore"
        assert (await call(c, "list_revisions", document_id="doc_n"))["current_revision"] == 4


async def test_edit_document_refuses_unknown_or_repeated_headings_and_empty_text() -> None:
    content = "# A\nx\n# B\ny\n# B\nz\n"
    async with service_client(SERVICE, small_seed(a_doc("doc_h", content))) as (c, _):
        args: dict[str, Any] = {"document_id": "doc_h", "operation": "insert_after_heading", "text": "t"}
        text = await fail(c, "edit_document", **args, heading="C")
        assert "No heading 'C'" in text and "'A', 'B', 'B'" in text
        assert "occurs 2 times" in await fail(c, "edit_document", **args, heading="B")
        assert "needs heading" in await fail(c, "edit_document", **args)
        assert "non-empty text" in await fail(c, "edit_document", **{**args, "text": ""}, heading="A")
        assert "operation" in await fail(c, "edit_document", **{**args, "operation": "rewrite"})


# ---------------------------------------------------------------------------------------------- revisions
async def test_revision_history_keeps_every_version_with_author_and_time() -> None:
    async with service_client(SERVICE, SEED, now="2026-03-02T10:00:00Z") as (c, env):
        history = await call(c, "list_revisions", document_id="doc_q1_report")
        assert [(r["number"], r["author"]) for r in history["items"]] == [(3, DANA), (2, KIM), (1, DANA)]
        first = await call(c, "get_revision", document_id="doc_q1_report", revision=1)
        assert first["content"].endswith("TODO\n") and first["is_current"] is False
        call_as(
            env, LENA, "edit_document", document_id="doc_q1_report", operation="replace", text="$3,990", find="$3,190"
        )
        env.clock.advance(60)
        await edit(c, "doc_q1_report", "append", "Signed off.")
        history = await call(c, "list_revisions", document_id="doc_q1_report", page_size=2)
        assert [(r["number"], r["author"], r["created_at"]) for r in history["items"]] == [
            (5, DANA, "2026-03-02T10:01:00Z"),
            (4, LENA, "2026-03-02T10:00:00Z"),
        ]
        assert history["total"] == 5 and history["next_page_token"] == "2"
        rest = await call(c, "list_revisions", document_id="doc_q1_report", page_token="2")
        assert [r["number"] for r in rest["items"]] == [3, 2, 1]
        four = await call(c, "get_revision", document_id="doc_q1_report", revision=4)
        assert "Refunds issued: $3,990" in four["content"] and "Signed off." not in four["content"]
        assert "has no revision 9" in await fail(c, "get_revision", document_id="doc_q1_report", revision=9)


async def test_a_seeded_document_without_stored_history_keeps_its_revision_when_first_edited() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        before = await call(c, "list_revisions", document_id="doc_northwind_onboarding")
        assert [(r["number"], r["is_current"]) for r in before["items"]] == [(2, True)]
        original = (await call(c, "get_document", document_id="doc_northwind_onboarding"))["content"]
        await edit(c, "doc_northwind_onboarding", "append", "- Staffing.")
        after = await call(c, "list_revisions", document_id="doc_northwind_onboarding")
        assert [r["number"] for r in after["items"]] == [3, 2]
        kept = await call(c, "get_revision", document_id="doc_northwind_onboarding", revision=2)
        assert kept["content"] == original and kept["author"] == "priya.shah@brightwave.io"
        assert "has no revision 1" in await fail(c, "get_revision", document_id="doc_northwind_onboarding", revision=1)
        assert "revision" in await fail(c, "get_revision", document_id="doc_northwind_onboarding", revision=0)
