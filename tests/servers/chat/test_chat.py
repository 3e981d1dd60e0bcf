"""The chat service, through the in-memory MCP client: every tool, its error cases, access and threads."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from coworkenv.servers.chat import SERVICE
from coworkenv.servers.kit import Environment, SeedError
from tests.conftest import error_text, member_call, member_fail, ok, service_client

pytestmark = pytest.mark.anyio
SEED: dict[str, Any] = json.loads((Path(__file__).parents[3] / "servers/examples/chat.json").read_text())
NOW = "2026-03-02T09:00:00Z"


async def call(c: Client, tool: str, **args: Any) -> dict[str, Any]:
    return ok(await c.call_tool(tool, args))


async def fail(c: Client, tool: str, **args: Any) -> str:
    return error_text(await c.call_tool(tool, args))


call_as = partial(member_call, "chat")
fail_as = partial(member_fail, "chat")


def ids(page: dict[str, Any]) -> list[str]:
    return [item["id"] for item in page["items"]]


def small_seed(*texts: str) -> dict[str, Any]:
    return {
        "users": [{"id": "U1", "name": "Dana", "email": "dana@brightwave.io", "is_primary": True}],
        "channels": [{"id": "C1", "name": "general", "members": ["U1"], "created_at": "2026-01-01T00:00:00Z"}],
        "messages": [
            {"id": f"M{i}", "channel_id": "C1", "user_id": "U1", "text": t, "created_at": f"2026-02-0{i + 1}T09:00:00Z"}
            for i, t in enumerate(texts)
        ],
    }


# ---------------------------------------------------------------------------------------------- seed and surface
def test_the_example_seed_loads_with_the_bank_change_reminder_in_finance() -> None:
    with Environment.create({"chat": SEED}, registry={"chat": SERVICE}) as env:
        dump = env.dump()["chat"]
    assert {t: len(rows) for t, rows in dump.items()} == {"users": 6, "channels": 8, "messages": 40}
    assert max(m["created_at"] for m in dump["messages"]) < NOW
    finance = [m["text"] for m in dump["messages"] if m["channel_id"] == "C0FINANCE"]
    assert any("bank details must be confirmed by phone with a known contact" in t for t in finance)


@pytest.mark.parametrize(
    ("table", "index", "field", "value"),
    [
        ("messages", 0, "channel_id", "C0GONE"),
        ("messages", 6, "thread_id", "M404"),
        ("channels", 0, "created_by", "U0X"),
    ],
)
def test_a_seed_with_a_dangling_reference_is_refused(table: str, index: int, field: str, value: str) -> None:
    bad = json.loads(json.dumps(SEED))
    bad[table][index][field] = value
    with pytest.raises(SeedError, match=rf"chat\.{table}\[{index}\] field '{field}': '{value}' is not the id"):
        Environment.create({"chat": bad}, registry={"chat": SERVICE})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s["channels"][1]["members"].append("U0NOBODY"), "'U0NOBODY' is not the id of any users"),
        (lambda s: s["channels"][6]["members"].append("U0KIM"), "exactly two different members"),
        (lambda s: s["channels"][0].update(name="#General"), "is not a channel name"),
        (lambda s: s["channels"][1].update(name="general"), "already a channel #general"),
        (lambda s: s["messages"][7].update(thread_id="M2002"), "must be a top-level message"),
        (lambda s: s["messages"][1]["reactions"][0]["users"].append("U0X"), "'U0X' is not the id"),
        (lambda s: s["users"][1].update(is_primary=True), "only one member can be the primary"),
        (lambda s: s["users"][1].update(email="DANA@brightwave.io"), "already a member"),
    ],
)
def test_seed_rules_across_records_are_checked(change: Any, message: str) -> None:
    bad = json.loads(json.dumps(SEED))
    change(bad)
    with pytest.raises(SeedError, match=message):
        Environment.create({"chat": bad}, registry={"chat": SERVICE})


async def test_every_tool_describes_its_arguments_with_examples_and_is_annotated() -> None:
    async with service_client(SERVICE) as (c, _):
        tools = {t.name: t for t in (await c.list_tools()).tools}
    assert len(tools) >= 12
    for name, t in tools.items():
        assert t.description and len(t.description) > 60, name
        for arg, schema in t.input_schema["properties"].items():
            assert "Example" in schema.get("description", ""), (name, arg)
    read_only = {n for n, t in tools.items() if t.annotations and t.annotations.read_only_hint}
    assert read_only == {n for n in tools if n.startswith(("get_", "list_", "search_"))}
    assert not any(t.annotations and t.annotations.destructive_hint for t in tools.values())  # chat only adds
    idempotent = {n for n, t in tools.items() if t.annotations and t.annotations.idempotent_hint} - read_only
    assert idempotent == {"add_reaction", "join_channel", "invite_to_channel"}


# ---------------------------------------------------------------------------------------------- channels and history
async def test_list_channels_shows_public_and_own_private_channels_with_membership() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        page = await call(c, "list_channels")
        assert [x["name"] for x in page["items"]] == ["finance", "general", "leads", "sales", "support"]
        assert {x["name"]: x["is_member"] for x in page["items"]}["sales"] is False
        assert ids(await call(c, "list_channels", member_only=True)) == [
            "C0FINANCE",
            "C0GENERAL",
            "C0LEADS",
            "C0SUPPORT",
        ]
        dms = (await call(c, "list_channels", include_direct_messages=True))["items"][-2:]
        assert [(x["id"], x["dm_with"], x["is_dm"]) for x in dms] == [
            ("D0DANALENA", "U0LENA", True),
            ("D0DANAPRIYA", "U0PRIYA", True),
        ]
        assert ids(await call(c, "list_channels", query="#PHONE")) == ["C0FINANCE"]  # the topic matches
        assert "C0PAYROLL" in ids(call_as(env, "lena.ortiz@brightwave.io", "list_channels"))
        first = await call(c, "list_channels", page_size=2)
        assert first["total"] == 5 and first["next_page_token"] == "2"
        assert ids(await call(c, "list_channels", page_size=2, page_token="4")) == ["C0SUPPORT"]


async def test_channel_history_is_newest_first_top_level_only_with_reply_counts() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        page = await call(c, "get_channel_history", channel="#support", page_size=5)
        assert ids(page) == ["M2015", "M2014", "M2013", "M2010", "M2009"] and page["total"] == 7
        assert page["items"][3]["reply_count"] == 2 and page["items"][3]["user_name"] == "Omar Haddad"
        rest = await call(
            c, "get_channel_history", channel="C0SUPPORT", page_size=5, page_token=page["next_page_token"]
        )
        assert ids(rest) == ["M2006", "M2001"] and rest["next_page_token"] is None
        window = await call(
            c, "get_channel_history", channel="support", oldest="2026-02-27T00:00:00Z", latest="2026-03-01T00:00:00Z"
        )
        assert ids(window) == ["M2010", "M2009", "M2006"]
        sales = await call(c, "get_channel_history", channel="#sales")  # public: readable without joining
        assert sales["total"] == 4 and sales["items"][0]["channel_name"] == "#sales"
        dm = await call(c, "get_channel_history", channel="D0DANALENA")
        assert dm["items"][0]["channel_name"] == "DM: Dana Whitfield & Lena Ortiz"


async def test_channel_history_refuses_unknown_private_and_other_peoples_dm_channels() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        assert "list_channels" in await fail(c, "get_channel_history", channel="#nope")
        text = await fail(c, "get_channel_history", channel="payroll")
        assert "private channel" in text and "invite_to_channel" in text
        assert "not part of this direct message" in fail_as(env, "U0KIM", "get_channel_history", channel="D0DANAPRIYA")
        assert "page_token" in await fail(c, "get_channel_history", channel="#support", page_token="x")


# ---------------------------------------------------------------------------------------------- search and threads
async def test_search_messages_filters_by_text_channel_author_and_time_across_readable_conversations() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        stellar = await call(c, "search_messages", query="stellar")
        assert ids(stellar) == ["M7004", "M7003", "M3009", "M3002"]  # newest first, DMs included
        replies = await call(c, "search_messages", query="certificate", channel="#support")
        assert ids(replies) == ["M2005"] and replies["items"][0]["thread_id"] == "M2001"
        lena = await call(c, "search_messages", from_user="lena.ortiz@brightwave.io", before="2026-02-20T00:00:00Z")
        assert ids(lena) == ["M3003", "M3001"]
        late = await call(c, "search_messages", after="2026-03-02T07:50:00Z")
        assert ids(late) == ["M1005", "M2015"]
        assert (await call(c, "search_messages", query="payroll run"))["total"] == 0  # a private channel
        assert (call_as(env, "U0LENA", "search_messages", query="payroll run"))["total"] == 1
        assert (await call(c, "search_messages", page_size=7))["next_page_token"] == "7"
        assert "list_users" in await fail(c, "search_messages", from_user="ghost@brightwave.io")
        assert "private channel" in await fail(c, "search_messages", channel="#payroll")


@pytest.mark.parametrize("needle", ["'", "%", "_", '"', ";", "Ünïcødé ✓"])
async def test_search_text_is_matched_literally(needle: str) -> None:
    async with service_client(SERVICE, small_seed(f"has {needle} inside", "plain words only")) as (c, _):
        assert ids(await call(c, "search_messages", query=needle)) == ["M0"]


async def test_get_thread_returns_the_start_and_replies_from_any_message_of_it() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        thread = await call(c, "get_thread", message_id="M2003")
        assert thread["parent"]["id"] == "M2001" and thread["parent"]["reply_count"] == 4
        assert [r["id"] for r in thread["replies"]] == ["M2002", "M2003", "M2004", "M2005"]
        assert "search_messages" in await fail(c, "get_thread", message_id="M0000")
        assert "private channel" in await fail(c, "get_thread", message_id="M6001")


# ---------------------------------------------------------------------------------------------- posting
async def test_post_message_stamps_the_clock_and_needs_membership() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        msg = await call(c, "post_message", channel="#support", text="Northwind cert fixed ✓")
        assert msg["id"].startswith("M") and (msg["user_id"], msg["created_at"]) == ("U0DANA", NOW)
        assert ids(await call(c, "get_channel_history", channel="#support", page_size=1)) == [msg["id"]]
        text = await fail(c, "post_message", channel="#sales", text="hi")
        assert "not a member of #sales" in text and "join_channel" in text
        assert "private channel" in await fail(c, "post_message", channel="#payroll", text="hi")
        assert "empty" in await fail(c, "post_message", channel="#support", text="   ")
        assert "text" in await fail(c, "post_message", channel="#support", text="")
        assert "list_channels" in await fail(c, "post_message", channel="#random", text="hi")
        assert "list_users" in fail_as(env, "bob@x.io", "post_message", channel="#support", text="x")
        as_priya = call_as(env, "U0PRIYA", "post_message", channel="D0DANAPRIYA", text="x")
        assert as_priya["user_name"] == "Priya Shah" and len(env.dump()["chat"]["messages"]) == 42


async def test_reply_in_thread_adds_to_the_threads_start_and_needs_membership() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        reply = await call(c, "reply_in_thread", message_id="M2012", text="Rota updated.")
        assert reply["thread_id"] == "M2010" and reply["channel_id"] == "C0SUPPORT"
        started = call_as(env, "U0KIM", "reply_in_thread", message_id="M2015", text="Looking")
        assert started["thread_id"] == "M2015"
        assert (await call(c, "get_thread", message_id="M2010"))["parent"]["reply_count"] == 3
        assert "join_channel" in await fail(c, "reply_in_thread", message_id="M4001", text="x")
        assert "search_messages" in await fail(c, "reply_in_thread", message_id="M9", text="x")


async def test_send_direct_message_reuses_or_opens_the_conversation_between_two() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        msg = await call(c, "send_direct_message", to="priya.shah@brightwave.io", text="Summary coming")
        assert msg["channel_id"] == "D0DANAPRIYA"
        new = await call(c, "send_direct_message", to="U0KIM", text="Thanks for the macro")
        assert new["channel_id"].startswith("C") and new["channel_name"] == "DM: Dana Whitfield & Kim Nguyen"
        back = call_as(env, "U0KIM", "send_direct_message", to="dana@brightwave.io", text="np")
        assert back["channel_id"] == new["channel_id"]
        channel = env.state("chat").tables["channels"].get(new["channel_id"])
        assert channel is not None and channel["is_dm"] and sorted(channel["members"]) == ["U0DANA", "U0KIM"]
        assert "another member" in await fail(c, "send_direct_message", to="U0DANA", text="me")
        assert "list_users" in await fail(c, "send_direct_message", to="jamie.lee@northwind.com", text="x")
        before = env.state_hash()
        assert "empty" in await fail(c, "send_direct_message", to="U0OMAR", text=" ")
        assert env.state_hash() == before  # the new conversation was rolled back with the failed post


async def test_add_reaction_adds_once_per_person_and_emoji() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        msg = await call(c, "add_reaction", message_id="M2015", name=":Eyes:")
        assert msg["reactions"] == [{"name": "eyes", "users": ["U0DANA"]}]
        msg = call_as(env, "U0OMAR", "add_reaction", message_id="M2015", name="eyes")
        assert msg["reactions"] == [{"name": "eyes", "users": ["U0DANA", "U0OMAR"]}]
        before = env.state_hash()
        assert (await call(c, "add_reaction", message_id="M2015", name="eyes"))["reactions"] == msg["reactions"]
        assert env.state_hash() == before
        assert (await call(c, "add_reaction", message_id="M4001", name="+1"))["reactions"][0]["name"] == "+1"
        assert "not an emoji name" in await fail(c, "add_reaction", message_id="M2015", name="thumbs up")
        assert "private channel" in await fail(c, "add_reaction", message_id="M6001", name="eyes")
        assert "search_messages" in await fail(c, "add_reaction", message_id="M404", name="eyes")


# ---------------------------------------------------------------------------------------------- channels
async def test_join_channel_joins_public_channels_only() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        joined = await call(c, "join_channel", channel="#sales")
        assert joined["members"][-1] == "U0DANA"
        assert (await call(c, "post_message", channel="sales", text="Hi sales!"))["channel_name"] == "#sales"
        before = env.state_hash()
        assert (await call(c, "join_channel", channel="C0SALES"))["members"] == joined["members"]
        assert env.state_hash() == before
        assert "invite_to_channel" in await fail(c, "join_channel", channel="#payroll")
        assert "send_direct_message" in await fail(c, "join_channel", channel="D0DANALENA")
        assert "list_channels" in await fail(c, "join_channel", channel="#nope")


async def test_create_channel_names_it_uniquely_with_its_members() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        ch = await call(
            c,
            "create_channel",
            name="#northwind-sso",
            topic="EU rollout",
            members=["U0OMAR", "priya.shah@brightwave.io"],
        )
        assert (ch["name"], ch["members"], ch["created_by"], ch["created_at"]) == (
            "northwind-sso",
            ["U0DANA", "U0OMAR", "U0PRIYA"],
            "U0DANA",
            NOW,
        )
        secret = await call(c, "create_channel", name="q1_refunds", is_private=True)
        assert secret["is_private"] and "q1_refunds" not in str(call_as(env, "U0KIM", "list_channels"))
        assert "already exists" in await fail(c, "create_channel", name="support")
        assert "not a valid channel name" in await fail(c, "create_channel", name="Q1 Refunds")
        assert "list_users" in await fail(c, "create_channel", name="x1", members=["U0NOBODY"])


async def test_invite_to_channel_adds_members_and_needs_membership() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        ch = await call(c, "invite_to_channel", channel="#leads", users=["U0KIM", "U0LENA"])
        assert ch["members"] == ["U0DANA", "U0LENA", "U0MARCO", "U0KIM"]
        assert (call_as(env, "U0KIM", "get_channel_history", channel="#leads"))["total"] == 2
        assert "invite_to_channel" in await fail(c, "invite_to_channel", channel="#payroll", users=["U0DANA"])
        assert "join_channel" in await fail(c, "invite_to_channel", channel="#sales", users=["U0KIM"])
        assert "direct message" in await fail(c, "invite_to_channel", channel="D0DANALENA", users=["U0KIM"])
        assert "users is empty" in await fail(c, "invite_to_channel", channel="#leads", users=[])


# ---------------------------------------------------------------------------------------------- members
async def test_users_can_be_listed_searched_and_read() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        assert (await call(c, "list_users"))["total"] == 6
        assert ids(await call(c, "list_users", query="account manager")) == ["U0MARCO", "U0PRIYA"]
        assert (await call(c, "get_user", user="LENA.ORTIZ@brightwave.io"))["title"] == "Finance Manager"
        assert (await call(c, "get_user", user="U0KIM"))["email"] == "kim.nguyen@brightwave.io"
        assert "list_users" in await fail(c, "get_user", user="U0NOBODY")
    async with service_client(SERVICE, {"users": [{"id": "U1", "name": "A", "email": "a@brightwave.io"}]}) as (c, _):
        assert "no primary user" in await fail(c, "list_channels")


# ---------------------------------------------------------------------------------------------- audit
async def test_every_call_leaves_one_audit_row_with_actor_outcome_and_change() -> None:
    with Environment.create({"chat": SEED}, registry={"chat": SERVICE}) as env, anyio.fail_after(10):
        async with Client(env.server("chat", actor="user")) as c:
            await c.call_tool("post_message", {"channel": "#support", "text": "from the user"})
            await c.call_tool("post_message", {"channel": "#sales", "text": "not a member"})
            await c.call_tool("post_message", {"channel": "#support"})
            await c.call_tool("delete_channel", {"channel": "#support"})
        await env.call("chat", "get_channel_history", {"channel": "#support", "page_size": 1})
        rows = env.audit("chat")
        assert [(r.actor, r.tool, r.outcome, r.state_changed) for r in rows] == [
            ("user", "post_message", "ok", True),
            ("user", "post_message", "error", False),
            ("user", "post_message", "invalid_arguments", False),
            ("user", "delete_channel", "unknown_tool", False),
            ("agent", "get_channel_history", "ok", False),
        ]
        assert rows[0].sim_time == NOW and rows[4].result["items"][0]["text"] == "from the user"
