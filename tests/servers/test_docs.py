"""The docs service, through the in-memory MCP client: every tool, its error cases, revisions and access."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from coworkenv.servers.docs import SERVICE
from coworkenv.servers.kit import Environment, SeedError
from tests.conftest import error_text, member_call, member_fail, ok, service_client

pytestmark = pytest.mark.anyio
SEED: dict[str, Any] = json.loads((Path(__file__).parents[2] / "servers/examples/docs.json").read_text())
DANA, LENA, KIM = "dana@brightwave.io", "lena.ortiz@brightwave.io", "kim.nguyen@brightwave.io"


async def call(c: Client, tool: str, **args: Any) -> dict[str, Any]:
    return ok(await c.call_tool(tool, args))


async def fail(c: Client, tool: str, **args: Any) -> str:
    return error_text(await c.call_tool(tool, args))


async def edit(c: Client, document_id: str, operation: str, text: str, **args: Any) -> dict[str, Any]:
    return await call(c, "edit_document", document_id=document_id, operation=operation, text=text, **args)


async def edit_error(c: Client, document_id: str, operation: str, text: str, **args: Any) -> str:
    return await fail(c, "edit_document", document_id=document_id, operation=operation, text=text, **args)


call_as = partial(member_call, "docs")
fail_as = partial(member_fail, "docs")


def ids(page: dict[str, Any]) -> list[str]:
    return [item["id"] for item in page["items"]]


def small_seed(*docs: dict[str, Any]) -> dict[str, Any]:
    users = [
        {"id": "usr_dana", "email": DANA, "name": "Dana", "is_primary": True},
        {"id": "usr_lena", "email": LENA, "name": "Lena"},
    ]
    return {"users": users, "documents": list(docs)}


def a_doc(doc_id: str, content: str, title: str = "Notes") -> dict[str, Any]:
    return {"id": doc_id, "title": title, "content": content, "owner": DANA, "created_at": "2026-02-01T09:00:00Z"}


# ---------------------------------------------------------------------------------------------- seed and surface
def test_the_example_seed_loads_every_table_before_the_clock() -> None:
    with Environment.create({"docs": SEED}, registry={"docs": SERVICE}) as env:
        dump = env.dump()["docs"]
    counts = {table: len(rows) for table, rows in dump.items()}
    assert counts == {"users": 6, "folders": 5, "documents": 12, "revisions": 3, "comments": 6}
    assert max(d["updated_at"] for d in dump["documents"]) < "2026-03-02T09:00:00Z"
    refund = next(d for d in dump["documents"] if d["id"] == "doc_refunds")
    assert "Refunds over $500 need finance approval" in refund["content"] and "60 days" in refund["content"]


@pytest.mark.parametrize(
    ("table", "index", "field", "value"),
    [("documents", 0, "folder_id", "fld_gone"), ("comments", 0, "document_id", "doc_gone")],
)
def test_a_seed_with_a_dangling_reference_is_refused(table: str, index: int, field: str, value: str) -> None:
    bad = json.loads(json.dumps(SEED))
    bad[table][index][field] = value
    with pytest.raises(SeedError, match=rf"docs\.{table}\[{index}\] field '{field}': '{value}' is not the id"):
        Environment.create({"docs": bad}, registry={"docs": SERVICE})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s["documents"][0].update(owner="stranger@example.com"), "is not a member"),
        (lambda s: s["users"][1].update(is_primary=True), "only one member can be the primary"),
        (lambda s: s["users"][1].update(email=DANA), "already a member"),
        (lambda s: s["revisions"][1].update(number=1), "already has a revision 1"),
        (lambda s: s["revisions"][2].update(number=9), "past the document's current revision"),
        (lambda s: s["revisions"][2].update(content="other"), "must equal the document's"),
    ],
)
def test_seed_rules_across_records_are_checked(change: Any, message: str) -> None:
    bad = json.loads(json.dumps(SEED))
    change(bad)
    with pytest.raises(SeedError, match=message):
        Environment.create({"docs": bad}, registry={"docs": SERVICE})


async def test_every_tool_describes_its_arguments_with_examples_and_is_annotated() -> None:
    async with service_client(SERVICE) as (c, _):
        tools = {t.name: t for t in (await c.list_tools()).tools}
    assert len(tools) >= 11
    for name, t in tools.items():
        assert t.description and len(t.description) > 60, name
        for arg, schema in t.input_schema["properties"].items():
            assert "Example" in schema.get("description", ""), (name, arg)
    read_only = {n for n, t in tools.items() if t.annotations and t.annotations.read_only_hint}
    assert read_only == {n for n in tools if n.startswith(("get_", "list_", "search_"))}
    destructive = {n for n, t in tools.items() if t.annotations and t.annotations.destructive_hint}
    assert destructive == {"update_document", "edit_document", "resolve_comment", "share_document", "unshare_document"}


# ---------------------------------------------------------------------------------------------- search and read
async def test_search_finds_visible_documents_by_text_owner_folder_and_edit_time() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        refund = await call(c, "search_documents", query="REFUND")
        assert set(ids(refund)) == {"doc_refunds", "doc_q1_report", "doc_escalation"}
        mine = await call(c, "search_documents", owner="me")
        assert set(ids(mine)) == {"doc_escalation", "doc_weekly_0223", "doc_q1_report", "doc_dana_kim_1on1"}
        assert (await call(c, "search_documents", owner=LENA.upper()))["total"] == 2  # the salary bands stay hidden
        policies = await call(c, "search_documents", folder_id="fld_policies")
        assert ids(policies) == ["doc_refunds", "doc_escalation"]  # most recent first
        window = await call(
            c, "search_documents", modified_after="2026-02-24T00:00:00Z", modified_before="2026-02-27T00:00:00Z"
        )
        assert ids(window) == ["doc_globex_review", "doc_oncall_march", "doc_northwind_onboarding"]
        assert window["items"][0]["your_role"] == "editor" and window["items"][0]["snippet"].startswith("# Account")


async def test_search_hides_private_documents_from_members_without_access() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        assert (await call(c, "search_documents", query="salary"))["total"] == 0
        assert (call_as(env, LENA, "search_documents", query="salary"))["total"] == 1
        assert (call_as(env, "usr_kim", "search_documents", query="1:1 notes"))["total"] == 1
        assert (call_as(env, LENA, "search_documents", query="1:1 notes"))["total"] == 0


async def test_search_pages_through_results_with_the_next_page_token() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        seen: list[str] = []
        token = None
        while True:
            page = await call(c, "search_documents", page_size=4, **({"page_token": token} if token else {}))
            assert page["total"] == 11
            seen += ids(page)
            token = page["next_page_token"]
            if token is None:
                break
        assert len(seen) == 11 == len(set(seen))
        assert "page_token" in await fail(c, "search_documents", page_token="abc")
        assert "page_size" in await fail(c, "search_documents", page_size=101)


@pytest.mark.parametrize("needle", ["'", "%", "_", '"', ";", "Ünïcødé ✓"])
async def test_search_text_is_matched_literally(needle: str) -> None:
    seed = small_seed(a_doc("doc_hit", f"has {needle} inside"), a_doc("doc_miss", "plain words only"))
    async with service_client(SERVICE, seed) as (c, _):
        assert ids(await call(c, "search_documents", query=needle)) == ["doc_hit"]


async def test_search_folds_case_for_unicode_titles() -> None:
    async with service_client(SERVICE, small_seed(a_doc("doc_1", "x", title="ÉTUDE de cas"))) as (c, _):
        assert (await call(c, "search_documents", query="étude"))["total"] == 1


async def test_get_document_returns_content_sharing_and_the_acting_users_role() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        doc = await call(c, "get_document", document_id="doc_northwind_onboarding")
        assert doc["revision"] == 2 and doc["owner"] == "priya.shah@brightwave.io" and doc["your_role"] == "editor"
        assert doc["shares"] == [{"email": "jamie.lee@northwind.com", "role": "commenter"}]
        assert (await call(c, "get_document", document_id="doc_refunds"))["your_role"] == "commenter"
        assert (call_as(env, LENA, "get_document", document_id="doc_refunds"))["your_role"] == "owner"


async def test_get_document_errors_name_what_to_do() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        assert "search_documents" in await fail(c, "get_document", document_id="doc_nope")
        assert "Ask its owner (lena.ortiz@brightwave.io)" in await fail(
            c, "get_document", document_id="doc_salary_bands"
        )
        assert "Members are:" in fail_as(env, "jamie@northwind.com", "get_document", document_id="doc_refunds")
    async with service_client(SERVICE, {"users": [{"id": "usr_x", "email": "x@brightwave.io", "name": "X"}]}) as (c, _):
        assert "no primary user" in await fail(c, "search_documents")


async def test_list_folders_lists_by_name_and_by_parent() -> None:
    seed = {"folders": [{"id": "fld_a", "name": "Archive"}, {"id": "fld_b", "name": "Old", "parent_id": "fld_a"}]}
    async with service_client(SERVICE, seed) as (c, _):
        assert ids(await call(c, "list_folders")) == ["fld_a", "fld_b"]
        assert ids(await call(c, "list_folders", parent_id="fld_a")) == ["fld_b"]
    async with service_client(SERVICE, SEED) as (c, _):
        names = [f["name"] for f in (await call(c, "list_folders"))["items"]]
        assert names == sorted(names) and len(names) == 5


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


# ---------------------------------------------------------------------------------------------- comments and sharing
async def test_comments_can_quote_a_passage_be_listed_and_resolved() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        quote = "No refunds after 60 days"
        comment = await call(c, "add_comment", document_id="doc_refunds", body="Per month?", quoted_text=quote)
        assert comment["id"].startswith("cmt_") and comment["author"] == DANA and comment["resolved"] is False
        open_only = await call(c, "list_comments", document_id="doc_refunds", include_resolved=False)
        assert ids(open_only) == ["cmt_refund_threshold", comment["id"]]
        assert (await call(c, "list_comments", document_id="doc_q1_report"))["total"] == 2
        done = await call(c, "resolve_comment", comment_id=comment["id"])
        assert (done["resolved"], done["resolved_by"], done["resolved_at"]) == (True, DANA, "2026-03-02T09:00:00Z")
        again = call_as(env, LENA, "resolve_comment", comment_id=comment["id"])
        assert again["resolved_by"] == DANA  # already resolved: unchanged


async def test_comment_errors_say_what_to_do() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        text = await fail(c, "add_comment", document_id="doc_refunds", body="x", quoted_text="refunds up to $5000")
        assert "does not occur" in text and "get_document" in text
        assert "body" in await fail(c, "add_comment", document_id="doc_refunds", body="")
        assert "list_comments" in await fail(c, "resolve_comment", comment_id="cmt_nope")
        text = fail_as(env, "marco.rossi@brightwave.io", "resolve_comment", comment_id="cmt_refund_threshold")
        assert "cannot edit" in text  # only the author or an editor may resolve
        assert "no access" in await fail(c, "list_comments", document_id="doc_salary_bands")
        assert len(env.dump()["docs"]["comments"]) == 6


async def test_share_and_unshare_give_and_take_away_a_role() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        doc = await call(
            c, "share_document", document_id="doc_q1_report", email="Lena.Ortiz@brightwave.io", role="viewer"
        )
        assert doc["shares"] == [{"email": LENA, "role": "viewer"}]
        doc = await call(c, "share_document", document_id="doc_q1_report", email=LENA, role="commenter")
        assert doc["shares"] == [{"email": LENA, "role": "commenter"}]
        same = await call(c, "share_document", document_id="doc_q1_report", email=LENA, role="commenter")
        assert same["shares"] == doc["shares"]
        ext = await call(
            c, "share_document", document_id="doc_dana_kim_1on1", email="jamie@northwind.com", role="viewer"
        )
        assert len(ext["shares"]) == 2
        doc = await call(c, "unshare_document", document_id="doc_q1_report", email=LENA)
        assert doc["shares"] == []
        lena_view = call_as(env, LENA, "get_document", document_id="doc_q1_report")
        assert lena_view["your_role"] == "editor"  # the workspace role remains


async def test_sharing_errors_say_what_to_do() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        before = env.state_hash()
        q1: dict[str, Any] = {"document_id": "doc_q1_report"}
        assert "already has full access" in await fail(c, "share_document", **q1, email=DANA, role="viewer")
        assert "not an email address" in await fail(c, "share_document", **q1, email="lena", role="viewer")
        assert "role" in await fail(c, "share_document", **q1, email=LENA, role="owner")
        assert "is a commenter" in await fail(c, "share_document", document_id="doc_refunds", email=KIM, role="editor")
        text = await fail(c, "unshare_document", **q1, email=KIM)
        assert "not shared with kim.nguyen@brightwave.io" in text and "nobody" in text
        text = fail_as(env, KIM, "unshare_document", document_id="doc_dana_kim_1on1", email=KIM)
        assert "your own access" in text
        assert env.state_hash() == before


# ---------------------------------------------------------------------------------------------- audit
async def test_every_call_leaves_one_audit_row_with_actor_outcome_and_change() -> None:
    seed = small_seed(a_doc("doc_a", "alpha"))
    with Environment.create({"docs": seed}, registry={"docs": SERVICE}) as env, anyio.fail_after(10):
        async with Client(env.server("docs", actor="user")) as c:  # the user simulator's door
            await edit(c, "doc_a", "append", "beta")
            await edit_error(c, "doc_a", "replace", "y", find="zzz")
            await c.call_tool("get_document", {"document_id": "doc_a", "surprise": 1})
        await env.call("docs", "get_document", {"document_id": "doc_a"})
        rows = env.audit("docs")
        assert [(r.actor, r.tool, r.outcome, r.state_changed) for r in rows] == [
            ("user", "edit_document", "ok", True),
            ("user", "edit_document", "error", False),
            ("user", "get_document", "invalid_arguments", False),
            ("agent", "get_document", "ok", False),
        ]
        assert rows[0].result["content"] == "alpha\nbeta" and rows[0].result["last_modified_by"] == DANA
        assert rows[3].result["revision"] == 2
