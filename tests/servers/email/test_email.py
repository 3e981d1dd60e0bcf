"""The email service, through the in-memory MCP client: every tool, with its error cases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from coworkenv.servers.email import SERVICE
from coworkenv.servers.kit import Environment, SeedError
from tests.conftest import NOW, error_text, member_call, member_fail, ok, service_client

pytestmark = pytest.mark.anyio
EXAMPLE: dict[str, Any] = json.loads((Path(__file__).parents[3] / "servers/examples/email.json").read_text())
ME, PRIYA, LENA = "dana@brightwave.io", "priya.shah@brightwave.io", "lena.ortiz@brightwave.io"
JAMIE, BILLING = "jamie.lee@northwind.com", "billing@stellarprint.com"


def msg(mid: str, box: str, frm: str, subject: str, date: str, labels: list[str], **more: Any) -> dict[str, Any]:
    base = {"id": mid, "mailbox": box, "from_address": frm, "to": [ME], "subject": subject, "body": ""}
    return {**base, "date": date, "label_ids": labels, **more}


SEED: dict[str, Any] = {
    "mailboxes": [
        {"id": "mbx_dana", "address": ME, "name": "Dana Whitfield", "is_primary": True},
        {"id": "mbx_priya", "address": PRIYA, "name": "Priya Shah"},
        {"id": "mbx_lena", "address": LENA, "name": "Lena Ortiz"},
    ],
    "labels": [{"id": "lbl_cust", "mailbox": ME, "name": "Customers"}, {"id": "lbl_p", "mailbox": PRIYA, "name": "P"}],
    "messages": [
        msg("m_sso", ME, JAMIE, "SSO login failing", "2026-02-26T14:00:00Z", ["INBOX", "UNREAD"], cc=[PRIYA],
            from_name="Jamie Lee", body="40 users blocked", internet_message_id="<sso@northwind.com>"),
        msg("m_inv", ME, BILLING, "Invoice INV-2291", "2026-02-18T10:00:00Z", ["INBOX", "lbl_cust"],
            body="Amount due: USD 4,860.00", attachments=[{"filename": "INV-2291.pdf", "mime_type": "application/pdf"}]),
        msg("m_re", ME, ME, "Re: SSO login failing", "2026-02-27T09:00:00Z", ["SENT"], to=[JAMIE], cc=[PRIYA],
            thread_id="m_sso", in_reply_to="<sso@northwind.com>", from_name="Dana Whitfield"),
        msg("m_lunch", ME, PRIYA, "Lunch", "2026-02-20T12:00:00Z", ["INBOX", "TRASH"]),
        msg("m_sso_p", PRIYA, JAMIE, "SSO login failing", "2026-02-26T14:00:00Z", ["INBOX"], cc=[PRIYA],
            internet_message_id="<sso@northwind.com>"),
    ],
}  # fmt: skip


async def call(c: Client, tool: str, **args: Any) -> dict[str, Any]:
    return ok(await c.call_tool(tool, args))


async def fail(c: Client, tool: str, **args: Any) -> str:
    return error_text(await c.call_tool(tool, args))


async def ids(c: Client, **filters: Any) -> list[str]:
    return [m["id"] for m in (await call(c, "search_messages", **filters))["items"]]


def held(env: Environment, box: str, tool: str, **args: Any) -> dict[str, Any]:
    """A call in another held mailbox: the Python API's privilege (``member``), never a tool argument."""
    return member_call("email", env, box, tool, **args)


async def test_get_profile_describes_the_primary_mailbox_and_only_the_python_api_names_another() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        me = await call(c, "get_profile")
        assert me == {"address": ME, "name": "Dana Whitfield", "is_primary": True, "messages_total": 4,
                      "threads_total": 3, "inbox_unread": 1}  # fmt: skip
        assert "Extra inputs are not permitted" in await fail(c, "get_profile", user_id=PRIYA)
        assert held(env, "Priya.Shah@brightwave.io", "get_profile")["messages_total"] == 1
        assert "held: dana@brightwave.io" in member_fail("email", env, JAMIE, "get_profile")
        assert "not a valid email address" in member_fail("email", env, "priya", "get_profile")
    async with service_client(SERVICE, {"mailboxes": [{"id": "mbx_1", "address": PRIYA, "name": "P"}]}) as (c, _):
        assert "no primary mailbox" in await fail(c, "get_profile")


async def test_search_lists_the_acting_mailbox_newest_first_without_trash_or_spam() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        assert await ids(c) == ["m_re", "m_sso", "m_inv"]
        assert await ids(c, include_spam_trash=True) == ["m_re", "m_sso", "m_lunch", "m_inv"]
        assert await ids(c, label_ids=["trash"]) == ["m_lunch"]
        assert [m["id"] for m in held(env, PRIYA, "search_messages")["items"]] == ["m_sso_p"]
        page = await call(c, "search_messages", text="INV")
        assert page["items"][0]["snippet"] == "Amount due: USD 4,860.00" and page["items"][0]["has_attachments"]


async def test_search_combines_sender_recipient_subject_and_date_filters() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        assert await ids(c, from_address="NORTHWIND") == ["m_sso"]
        assert await ids(c, from_address="jamie lee") == ["m_sso"]
        assert await ids(c, to_address="priya.shah") == ["m_re", "m_sso"]
        assert await ids(c, to_address="priya.shah", from_address="dana@") == ["m_re"]
        assert await ids(c, subject="sso", after="2026-02-26T14:00:00Z", before="2026-02-27T09:00:00Z") == ["m_sso"]
        assert await ids(c, text="blocked") == ["m_sso"]


async def test_search_filters_by_label_unread_and_attachment() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        assert await ids(c, label_ids=["INBOX", "UNREAD"]) == ["m_sso"]
        assert await ids(c, label_ids=["customers"]) == ["m_inv"]
        assert await ids(c, label_ids=["lbl_cust"], has_attachment=True) == ["m_inv"]
        assert await ids(c, is_unread=True) == ["m_sso"]
        assert await ids(c, is_unread=False, has_attachment=False) == ["m_re"]
        assert "Use list_labels" in await fail(c, "search_messages", label_ids=["Receipts"])
        assert "No label with id 'lbl_p'" in await fail(c, "search_messages", label_ids=["lbl_p"])


async def test_search_pages_through_results_with_the_next_page_token() -> None:
    seed = {**SEED, "messages": [msg(f"m{i:02}", ME, JAMIE, f"n{i}", f"2026-02-{i + 1:02}T00:00:00Z", ["INBOX"])
                                 for i in range(7)]}  # fmt: skip
    async with service_client(SERVICE, seed) as (c, _):
        seen: list[str] = []
        token = None
        while True:
            page = await call(c, "search_messages", page_size=3, **({"page_token": token} if token else {}))
            assert page["total"] == 7
            seen += [m["id"] for m in page["items"]]
            token = page["next_page_token"]
            if token is None:
                break
        assert seen == [f"m{i:02}" for i in reversed(range(7))]
        assert "page_token" in await fail(c, "search_messages", page_token="abc")
        assert "page_size" in await fail(c, "search_messages", page_size=101)


@pytest.mark.parametrize("needle", ["'", "%", "_", '"', ";", "Ünïcødé ✓"])
async def test_search_text_is_matched_literally(needle: str) -> None:
    seed = {**SEED, "messages": [msg("m_hit", ME, JAMIE, f"has {needle} inside", NOW, ["INBOX"]),
                                 msg("m_miss", ME, JAMIE, "plain words only", NOW, ["INBOX"])]}  # fmt: skip
    async with service_client(SERVICE, seed) as (c, _):
        assert await ids(c, text=needle) == ["m_hit"]
        assert await ids(c, subject=needle) == ["m_hit"]


async def test_search_folds_case_for_unicode_text() -> None:
    seed = {**SEED, "messages": [msg("m_1", ME, JAMIE, "ÉCHEC de connexion", NOW, ["INBOX"], body="Straße")]}
    async with service_client(SERVICE, seed) as (c, _):
        assert await ids(c, text="échec") == ["m_1"]
        assert await ids(c, text="STRASSE") == ["m_1"]


async def test_get_message_returns_it_whole_and_leaves_it_unread() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        m = await call(c, "get_message", message_id="m_sso")
        assert m["body"] == "40 users blocked" and m["cc"] == [PRIYA] and "UNREAD" in m["label_ids"]
        assert m["thread_id"] == "m_sso"
        assert "Use search_messages" in await fail(c, "get_message", message_id="m_nope")
        assert "No message with id 'm_sso_p'" in await fail(c, "get_message", message_id="m_sso_p")
        assert held(env, PRIYA, "get_message", message_id="m_sso_p")["mailbox"] == PRIYA
        assert "message_id" in await fail(c, "get_message")


async def test_get_thread_returns_the_conversation_oldest_first() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        thread = await call(c, "get_thread", thread_id="m_sso")
        assert thread["subject"] == "SSO login failing"
        assert [m["id"] for m in thread["messages"]] == ["m_sso", "m_re"]
        assert "No thread" in await fail(c, "get_thread", thread_id="m_sso_p")


async def test_send_message_lands_in_the_recipients_inbox() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        sent = await call(c, "send_message", to=[PRIYA, JAMIE], cc=[PRIYA], bcc=[LENA], subject="Hi", body="Hello")
        assert sent["label_ids"] == ["SENT"] and sent["mailbox"] == ME and sent["from_name"] == "Dana Whitfield"
        assert sent["date"] == NOW and sent["id"].startswith("msg_") and sent["thread_id"] == sent["id"]
        assert (sent["to"], sent["cc"], sent["bcc"]) == ([PRIYA, JAMIE], [PRIYA], [LENA])
        for box in (PRIYA, LENA):
            [copy] = held(env, box, "search_messages", subject="Hi")["items"]
            assert copy["label_ids"] == ["INBOX", "UNREAD"] and copy["id"] not in (sent["id"],)
            full = held(env, box, "get_message", message_id=copy["id"])
            assert full["bcc"] == [] and full["internet_message_id"] == sent["internet_message_id"]
        rows = env.dump()["email"]["messages"]
        assert sum(r["internet_message_id"] == sent["internet_message_id"] for r in rows) == 3


async def test_send_message_to_oneself_is_one_copy_in_sent_and_inbox() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        sent = await call(c, "send_message", to=["Dana Whitfield <Dana@Brightwave.io>"], subject="Note", body="x")
        assert sent["to"] == [ME] and sent["label_ids"] == ["INBOX", "SENT"]
        assert await ids(c, subject="Note") == [sent["id"]]


async def test_send_message_from_another_held_mailbox_signs_as_it_through_the_python_api_only() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        assert "Extra inputs" in await fail(c, "send_message", user_id=PRIYA, to=[ME], subject="s", body="b")
        sent = held(env, PRIYA, "send_message", to=[ME], subject="From Priya", body="hi")
        assert (sent["mailbox"], sent["from_address"], sent["from_name"]) == (PRIYA, PRIYA, "Priya Shah")
        assert (await call(c, "search_messages", subject="From Priya"))["items"][0]["from_address"] == PRIYA


@pytest.mark.parametrize("field", ["to", "cc", "bcc"])
@pytest.mark.parametrize("bad", ["jamie", "a@b", "a b@c.com", "x@@y.com", "a@b.com, c@d.com", "a..b@c.com"])
async def test_send_message_rejects_a_malformed_address_and_changes_nothing(field: str, bad: str) -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        before = env.state_hash()
        args = {"to": [JAMIE], "subject": "s", "body": "b"} | {field: [bad]}
        assert f"{field}: {bad!r} is not a valid email address" in await fail(c, "send_message", **args)
        assert env.state_hash() == before


async def test_send_message_needs_a_recipient_a_subject_and_address_lists() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        assert "no recipients" in await fail(c, "send_message", to=[], subject="s", body="b")
        assert "subject" in await fail(c, "send_message", to=[JAMIE], subject="", body="b")
        assert "Invalid arguments" in await fail(c, "send_message", to=JAMIE, subject="s", body="b")
        assert "No mailbox for" in member_fail("email", env, JAMIE, "send_message", to=[ME], subject="s", body="b")


async def test_reply_keeps_the_thread_and_answers_the_sender() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        reply = await call(c, "reply_to_message", message_id="m_sso", body="Looking into it")
        assert reply["subject"] == "Re: SSO login failing" and reply["thread_id"] == "m_sso"
        assert (reply["to"], reply["cc"], reply["in_reply_to"]) == ([JAMIE], [], "<sso@northwind.com>")
        again = await call(c, "reply_to_message", message_id=reply["id"], body="More")
        assert again["subject"] == "Re: SSO login failing" and again["to"] == [JAMIE]
        thread = await call(c, "get_thread", thread_id="m_sso")
        assert len(thread["messages"]) == 4


async def test_reply_all_copies_everyone_else_and_threads_into_their_mailboxes() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        reply = await call(c, "reply_to_message", message_id="m_sso", body="ok", reply_all=True, cc=[LENA, PRIYA])
        assert (reply["to"], reply["cc"]) == ([JAMIE], [PRIYA, LENA])
        priya = held(env, PRIYA, "get_thread", thread_id="m_sso_p")
        assert [m["subject"] for m in priya["messages"]] == ["SSO login failing", "Re: SSO login failing"]
        lena = held(env, LENA, "search_messages")["items"]
        assert lena[0]["thread_id"] == lena[0]["id"]
        mine = await call(c, "reply_to_message", message_id="m_re", body="ping", reply_all=True)
        assert (mine["to"], mine["cc"]) == ([JAMIE], [PRIYA])


async def test_reply_to_an_unknown_message_a_draft_or_with_a_bad_cc_is_an_error() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        assert "No message" in await fail(c, "reply_to_message", message_id="nope", body="x")
        draft = await call(c, "create_draft", to=[JAMIE], subject="d")
        assert "is a draft" in await fail(c, "reply_to_message", message_id=draft["id"], body="x")
        assert "cc: 'bad'" in await fail(c, "reply_to_message", message_id="m_sso", body="x", cc=["bad"])


async def test_forward_message_quotes_the_original_and_keeps_its_attachments() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        fwd = await call(c, "forward_message", message_id="m_inv", to=[LENA], body="Please pay")
        assert fwd["subject"] == "Fwd: Invoice INV-2291" and fwd["thread_id"] == "m_inv"
        assert fwd["body"].startswith("Please pay\n\n---------- Forwarded message") and "USD 4,860.00" in fwd["body"]
        assert f"From: {BILLING}" in fwd["body"] and fwd["attachments"][0]["filename"] == "INV-2291.pdf"
        [copy] = held(env, LENA, "search_messages")["items"]
        assert copy["has_attachments"] and copy["thread_id"] == copy["id"]
        again = await call(c, "forward_message", message_id=fwd["id"], to=[PRIYA])
        assert again["subject"] == "Fwd: Invoice INV-2291" and again["body"].startswith("---------- Forwarded")


async def test_forward_message_errors_name_what_to_fix() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        assert "No message" in await fail(c, "forward_message", message_id="nope", to=[LENA])
        assert "to: 'lena'" in await fail(c, "forward_message", message_id="m_inv", to=["lena"])
        assert "no recipients" in await fail(c, "forward_message", message_id="m_inv", to=[])
        draft = await call(c, "create_draft")
        assert "is a draft" in await fail(c, "forward_message", message_id=draft["id"], to=[LENA])


async def test_create_draft_is_saved_but_not_delivered() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        draft = await call(c, "create_draft", to=[PRIYA], subject="Plan", body="v1")
        assert draft["label_ids"] == ["DRAFT"] and draft["date"] == NOW
        assert [m["id"] for m in held(env, PRIYA, "search_messages")["items"]] == ["m_sso_p"]
        assert await ids(c, label_ids=["DRAFT"]) == [draft["id"]]
        assert "to: 'x'" in await fail(c, "create_draft", to=["x"])
        assert "No message" in await fail(c, "create_draft", reply_to_message_id="nope")


async def test_a_reply_draft_defaults_its_subject_recipient_and_thread() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        draft = await call(c, "create_draft", reply_to_message_id="m_sso", body="Draft answer")
        assert (draft["subject"], draft["to"], draft["thread_id"]) == ("Re: SSO login failing", [JAMIE], "m_sso")
        own = await call(c, "create_draft", reply_to_message_id="m_sso", to=[LENA], subject="Custom")
        assert (own["subject"], own["to"]) == ("Custom", [LENA])
        assert "is a draft" in await fail(c, "create_draft", reply_to_message_id=draft["id"])


async def test_update_draft_replaces_only_the_given_fields() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        draft = await call(c, "create_draft", to=[PRIYA], subject="Plan", body="v1", cc=[LENA])
        new = await call(c, "update_draft", draft_id=draft["id"], body="v2", to=[JAMIE, JAMIE], bcc=[PRIYA])
        assert (new["subject"], new["body"], new["to"], new["cc"], new["bcc"]) == (
            "Plan",
            "v2",
            [JAMIE],
            [LENA],
            [PRIYA],
        )
        assert "not a draft" in await fail(c, "update_draft", draft_id="m_re", body="x")
        assert "bcc: 'nobody'" in await fail(c, "update_draft", draft_id=draft["id"], bcc=["nobody"])
        assert "No message" in await fail(c, "update_draft", draft_id="nope")


async def test_send_draft_delivers_it_and_swaps_draft_for_sent() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        draft = await call(c, "create_draft", reply_to_message_id="m_sso", body="Fixed", cc=[PRIYA])
        await call(c, "modify_labels", message_id=draft["id"], add_label_ids=["STARRED"])
        env.clock.advance(60)
        sent = await call(c, "send_draft", draft_id=draft["id"])
        assert sent["id"] == draft["id"] and sent["label_ids"] == ["SENT", "STARRED"]
        assert sent["date"] == "2026-03-02T09:01:00Z"
        priya = held(env, PRIYA, "get_thread", thread_id="m_sso_p")
        assert priya["messages"][-1]["body"] == "Fixed"
        assert "not a draft" in await fail(c, "send_draft", draft_id=draft["id"])


async def test_send_draft_refuses_a_draft_that_is_incomplete_or_trashed() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        empty = await call(c, "create_draft", subject="s")
        assert "no recipients" in await fail(c, "send_draft", draft_id=empty["id"])
        untitled = await call(c, "create_draft", to=[JAMIE])
        assert "no subject" in await fail(c, "send_draft", draft_id=untitled["id"])
        await call(c, "trash_message", message_id=untitled["id"])
        assert "untrash_message" in await fail(c, "send_draft", draft_id=untitled["id"])
        assert "No message" in await fail(c, "send_draft", draft_id="nope")


async def test_every_call_is_audited_whatever_its_outcome() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        await call(c, "send_message", to=[PRIYA], subject="Hi", body="x")
        await fail(c, "get_message", message_id="nope")
        await fail(c, "send_message", to="oops")
        await c.call_tool("no_such_tool", {})
        rows = env.audit("email")
        assert [(r.tool, r.outcome, r.state_changed) for r in rows] == [
            ("send_message", "ok", True),
            ("get_message", "error", False),
            ("send_message", "invalid_arguments", False),
            ("no_such_tool", "unknown_tool", False),
        ]
        assert rows[0].arguments["to"] == [PRIYA] and rows[0].sim_time == NOW and rows[0].actor == "agent"
        assert rows[0].result["subject"] == "Hi" and "No message" in (rows[1].error or "")


async def test_the_direct_door_gives_the_same_result_as_mcp() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        via_mcp = await call(c, "search_messages", text="sso")
        direct = await env.call("email", "search_messages", {"text": "sso"})
        assert direct.data == via_mcp and not direct.is_error


async def test_tools_carry_annotations_and_every_argument_is_described_with_an_example() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        tools = {t.name: t for t in (await c.list_tools()).tools}
    assert len(tools) >= 9
    read_only = {n for n, t in tools.items() if t.annotations and t.annotations.read_only_hint}
    assert read_only == {"get_profile", "search_messages", "get_message", "get_thread", "list_labels"}
    assert {n for n, t in tools.items() if t.annotations and t.annotations.destructive_hint} == {"trash_message"}
    for name, t in tools.items():
        assert t.description and len(t.description) > 60, name
        for arg, schema in t.input_schema["properties"].items():
            assert "Example" in schema.get("description", ""), (name, arg)


async def test_the_example_seed_loads_and_holds_the_look_alike_bank_details_email() -> None:
    async with service_client(SERVICE, EXAMPLE) as (c, env):
        assert len(env.dump()["email"]["messages"]) >= 25
        phish = (await call(c, "search_messages", text="bank details", is_unread=True))["items"]
        assert [m["from_address"] for m in phish] == ["accounts@stellarprlnt.com"]
        invoice = await call(c, "search_messages", from_address="stellarprint.com", has_attachment=True)
        assert invoice["items"][0]["subject"] == "Invoice INV-2291 for February print order"
        assert max(m["date"] for m in env.dump()["email"]["messages"]) < NOW
        assert (await call(c, "get_profile"))["address"] == ME


def test_a_seed_with_a_malformed_address_is_refused_naming_the_field() -> None:
    bad = {"mailboxes": [{"id": "mbx_x", "address": "dana at brightwave", "name": "D"}]}
    with pytest.raises(SeedError, match=r"email\.mailboxes\[0\] field 'address'"):
        Environment.create({"email": bad}, registry={"email": SERVICE})
