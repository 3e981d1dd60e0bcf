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
SEED: dict[str, Any] = json.loads((Path(__file__).parents[3] / "servers/examples/docs.json").read_text())
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
