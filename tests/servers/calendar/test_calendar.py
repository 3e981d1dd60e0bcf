"""The calendar service, through the in-memory MCP client: recurrence, free/busy, free slots, invitations, both
doors, the real stdio and HTTP transports, and fuzzed arguments."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from coworkenv.servers.calendar import SERVICE
from coworkenv.servers.kit import Environment, SeedError, SensitiveContext, ServiceState
from tests.conftest import NOW, error_text, ok, service_client
from tests.servers.kit.test_fuzz import calls, run_batch
from tests.servers.kit.test_transports import serve_params

pytestmark = pytest.mark.anyio
EXAMPLE = Path(__file__).parents[3] / "servers/examples/calendar.json"
SEED: dict[str, Any] = json.loads(EXAMPLE.read_text())
DANA, PRIYA, LENA = "dana@brightwave.io", "priya.shah@brightwave.io", "lena.ortiz@brightwave.io"
KIM, OMAR = "kim.nguyen@brightwave.io", "omar.haddad@brightwave.io"
WEEK = {"time_max": "2026-03-09T00:00:00Z"}


async def call(c: Client, tool: str, **args: Any) -> dict[str, Any]:
    return ok(await c.call_tool(tool, args))


async def fail(c: Client, tool: str, **args: Any) -> str:
    return error_text(await c.call_tool(tool, args))


def starts(page: dict[str, Any]) -> list[tuple[str, str]]:
    return [(o["start"], o["event_id"]) for o in page["items"]]


def busy_of(answer: dict[str, Any], who: str) -> list[tuple[str, str]]:
    entry = next(c for c in answer["calendars"] if c["id"] == who)
    return [(b["start"][5:16], b["end"][11:16]) for b in entry["busy"]]


def small(events: list[dict[str, Any]] = (), dana_zone: str = "UTC") -> dict[str, Any]:  # type: ignore[assignment]
    """Dana (primary) and Priya, their calendars, two rooms, and the events given."""
    return {
        "users": [
            {"id": "usr_dana", "email": DANA, "name": "Dana", "is_primary": True, "timezone": dana_zone},
            {"id": "usr_priya", "email": PRIYA, "name": "Priya"},
        ],
        "calendars": [
            {"id": "cal_dana", "owner": DANA, "summary": "Dana", "is_primary": True, "timezone": dana_zone},
            {"id": "cal_priya", "owner": PRIYA, "summary": "Priya", "is_primary": True},
        ],
        "rooms": [
            {"id": "room_nook", "name": "Nook", "capacity": 2},
            {"id": "room_atlas", "name": "Atlas", "capacity": 4},
        ],
        "events": list(events),
    }


def an_event(event_id: str, start: str, end: str, **fields: Any) -> dict[str, Any]:
    base = {"calendar_id": "cal_dana", "summary": event_id, "organizer": DANA, "created_at": "2026-02-01T00:00:00Z"}
    return {"id": event_id, **base, "start": start, "end": end, **fields}


# ---------------------------------------------------------------------------------------------- seed and surface
def test_the_example_seed_loads_every_table() -> None:
    with Environment.create({"calendar": SEED}, registry={"calendar": SERVICE}) as env:
        dump = env.dump()["calendar"]
    assert {t: len(rows) for t, rows in dump.items()} == {"users": 6, "calendars": 8, "rooms": 4, "events": 12}
    standup = next(e for e in dump["events"] if e["id"] == "evt_support_standup")
    assert standup["recurrence"]["by_day"] == ["MO", "WE", "FR"] and standup["updated_at"] == standup["created_at"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s["events"][0].update(organizer="ghost@brightwave.io"), r"events\[0\] field 'organizer'"),
        (lambda s: s["users"][1].update(is_primary=True), "only one member can be the primary"),
        (lambda s: s["users"][1].update(email=DANA), "already a member"),
        (lambda s: s["calendars"][0].update(owner="x@y.io"), r"calendars\[0\] field 'owner'"),
        (lambda s: s["calendars"][6].update(is_primary=True), "has one already"),
        (lambda s: s["events"][2].update(end="2026-03-04T13:00:00Z"), "ends .* at or before it starts"),
        (lambda s: s["events"][2].update(end="2026-04-04T13:00:00Z"), "at most 14 days"),
        (lambda s: s["users"][0].update(timezone="Mars/Olympus"), "unknown time zone 'Mars/Olympus'"),
        (lambda s: s["events"][2]["attendees"].append(s["events"][2]["attendees"][0]), "listed twice"),
        (lambda s: s["events"][0]["recurrence"].update(count=3, until="2026-05-01T00:00:00Z"), "until or count"),
        (lambda s: s["events"][2].update(room_id="room_gone"), "'room_gone' is not the id of any rooms"),
        (lambda s: s["users"][4]["working_hours"].update(end="09:00"), "must be after start"),
    ],
)
def test_seed_rules_are_checked_with_one_line_errors(change: Any, message: str) -> None:
    bad = copy.deepcopy(SEED)
    change(bad)
    with pytest.raises(SeedError, match=message) as caught:
        Environment.create({"calendar": bad}, registry={"calendar": SERVICE})
    assert "\n" not in str(caught.value)


async def test_every_tool_describes_its_arguments_with_examples_and_is_annotated() -> None:
    async with service_client(SERVICE) as (c, _):
        tools = {t.name: t for t in (await c.list_tools()).tools}
    assert len(tools) == 12
    for name, t in tools.items():
        assert t.description and len(t.description) > 60, name
        for arg, schema in t.input_schema["properties"].items():
            assert "Example" in schema.get("description", ""), (name, arg)
    read_only = {n for n, t in tools.items() if t.annotations and t.annotations.read_only_hint}
    assert read_only == {n for n in tools if n.startswith(("get_", "list_", "search_", "query_", "find_"))}
    destructive = {n for n, t in tools.items() if t.annotations and t.annotations.destructive_hint}
    assert destructive == {"update_event", "cancel_event"}


# ---------------------------------------------------------------------------------------------- writing
async def test_create_event_invites_people_books_the_room_and_flags_conflicts() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        event = await call(
            c, "create_event", summary="Acme escalation", start="2026-03-03T14:00:00Z", end="2026-03-03T14:30:00Z",
            attendees=["usr_kim", "jamie.lee@northwind.com", DANA], room_id="room_atlas",
        )  # fmt: skip
        assert event["id"].startswith("evt_") and event["organizer"] == DANA and event["calendar_id"] == "cal_dana"
        assert [(a["email"], a["response_status"]) for a in event["attendees"]] == [
            (KIM, "needsAction"),
            ("jamie.lee@northwind.com", "needsAction"),
        ]
        assert event["conflicts"] == [KIM] and event["your_response"] == "accepted"
        assert event["created_at"] == NOW and event["timezone"] == "Europe/London"
        stored = next(e for e in env.dump()["calendar"]["events"] if e["id"] == event["id"])
        assert stored["room_id"] == "room_atlas" and "conflicts" not in stored
        series = await call(
            c, "create_event", summary="Office hours", start="2026-03-05T15:00:00Z", end="2026-03-05T15:30:00Z",
            recurrence={"frequency": "weekly", "count": 2},
        )  # fmt: skip
        assert series["next_occurrences"] == ["2026-03-05T15:00:00Z", "2026-03-12T15:00:00Z"]


async def test_create_event_refuses_what_cannot_be_booked_and_says_what_to_do() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        before = env.state_hash()
        slot = {"summary": "Sync", "start": "2026-03-04T14:00:00Z", "end": "2026-03-04T14:30:00Z"}
        text = await fail(c, "create_event", **slot, room_id="room_harbor")
        assert "Harbor is booked at 2026-03-04T14:00:00Z by 'Q1 refunds review'" in text and "find_free_slot" in text
        text = await fail(c, "create_event", **slot, room_id="room_nook", attendees=[PRIYA, KIM])
        assert "seats 2, fewer than the 3 people" in text
        assert "list_rooms" in await fail(c, "create_event", **slot, room_id="room_gone")
        assert "in the past" in await fail(c, "create_event", **slot | {"start": "2026-03-01T10:00:00Z"})
        assert "must be after start" in await fail(c, "create_event", **slot | {"end": "2026-03-04T13:00:00Z"})
        assert "not a member" in await fail(c, "create_event", **slot, attendees=["ghost@brightwave.io"])
        assert "own calendar" in await fail(c, "create_event", **slot, calendar_id="cal_finance_close")
        assert "unknown time zone" in await fail(c, "create_event", **slot, timezone="Nowhere/Else")
        text = await fail(c, "create_event", **slot, recurrence={"frequency": "daily", "by_day": ["MO"]})
        assert "weekly rules only" in text
        room_clash = {"frequency": "weekly", "count": 4}
        text = await fail(c, "create_event", **slot | {"start": "2026-03-06T16:00:00Z", "end": "2026-03-06T16:10:00Z"},
                          room_id="room_atlas", recurrence=room_clash)  # fmt: skip
        assert "'On-call hand-off'" in text
        assert env.state_hash() == before


async def test_moving_an_event_asks_the_attendees_again_and_other_edits_do_not() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        renamed = await call(c, "update_event", event_id="evt_dana_priya_1on1", summary="Dana / Priya weekly")
        assert renamed["attendees"][0]["response_status"] == "accepted" and renamed["sequence"] == 1
        moved = await call(
            c, "update_event", event_id="evt_dana_priya_1on1", start="2026-03-10T16:00:00Z", end="2026-03-10T16:30:00Z",
            add_attendees=[LENA], remove_attendees=["usr_priya"],
        )  # fmt: skip
        assert [(a["email"], a["response_status"]) for a in moved["attendees"]] == [(LENA, "needsAction")]
        assert moved["next_occurrences"][0] == "2026-03-10T16:00:00Z" and moved["sequence"] == 2
        same = await call(c, "update_event", event_id="evt_dana_priya_1on1", summary="Dana / Priya weekly")
        assert same["sequence"] == 2  # nothing changed
        text = await fail(c, "update_event", event_id="evt_dana_priya_1on1", remove_attendees=[KIM])
        assert f"{KIM} is not invited" in text and LENA in text


async def test_only_the_organizer_or_a_calendar_writer_changes_or_cancels_an_event() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        text = await fail(c, "update_event", event_id="evt_q1_review", summary="Mine now")
        assert "Only the organizer (lena.ortiz@brightwave.io)" in text and "respond_to_event" in text
        assert "Only the organizer" in await fail(c, "cancel_event", event_id="evt_q1_review")
        assert "list_events" in await fail(c, "get_event", event_id="evt_kim_dentist")  # Kim's own: not visible
        result = env.state("calendar").call_now(
            "update_event", {"event_id": "evt_oncall_handoff", "location": "Atlas"}, member=KIM
        )  # Kim writes to the on-call calendar
        assert not result.is_error, result.text


async def test_a_cancelled_event_stays_cancelled_and_cancelling_again_changes_nothing() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        event = await call(c, "cancel_event", event_id="evt_dana_focus")
        assert event["status"] == "cancelled" and event["next_occurrences"] == []
        again = await call(c, "cancel_event", event_id="evt_dana_focus")
        assert again == event and env.audit("calendar")[-1].state_changed is False
        assert "evt_dana_focus" not in {e for _, e in starts(await call(c, "list_events", **WEEK))}
        assert "create_event" in await fail(c, "update_event", event_id="evt_dana_focus", summary="x")


async def test_respond_to_event_records_the_answer_and_comment() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        event = await call(c, "respond_to_event", event_id="evt_q1_review", response="tentative", comment="5 min late")
        mine = next(a for a in event["attendees"] if a["email"] == DANA)
        assert (mine["response_status"], mine["comment"], event["your_response"]) == (
            "tentative",
            "5 min late",
            "tentative",
        )
        event = await call(c, "respond_to_event", event_id="evt_q1_review", response="accepted")
        assert next(a for a in event["attendees"] if a["email"] == DANA)["comment"] == "5 min late"
        assert "response" in await fail(c, "respond_to_event", event_id="evt_q1_review", response="maybe")


async def test_an_rsvp_by_someone_not_invited_is_an_error_that_says_what_to_do() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        before = env.state_hash()
        text = await fail(c, "respond_to_event", event_id="evt_month_end", response="accepted")
        assert "You (dana@brightwave.io) are not invited to event evt_month_end" in text
        assert "ask the organizer (lena.ortiz@brightwave.io) to invite you" in text
        text = await fail(c, "respond_to_event", event_id="evt_oncall_handoff", response="declined")
        assert "You organize event evt_oncall_handoff" in text and "update_event" in text
        text = await fail(c, "respond_to_event", event_id="evt_stellar_call", response="accepted")
        assert "is cancelled; there is nothing to answer" in text
        assert env.state_hash() == before


# ---------------------------------------------------------------------------------------------- reading
async def test_calendars_list_with_roles_and_unshared_ones_show_only_free_busy() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        cals = await call(c, "list_calendars")
        assert [(x["id"], x["your_role"]) for x in cals["items"]] == [
            ("cal_dana", "owner"),
            ("cal_finance_close", "reader"),
            ("cal_support_oncall", "owner"),
        ]
        text = await fail(c, "list_events", calendar_id=PRIYA)
        assert "see only its free/busy" in text and "query_free_busy" in text
        close = await call(c, "list_events", calendar_id="cal_finance_close", **WEEK)
        assert starts(close) == [("2026-03-02T08:00:00Z", "evt_month_end")]  # started before now, still running
        assert "list_calendars" in await fail(c, "list_events", calendar_id="cal_nope")


async def test_search_events_finds_by_text_attendee_and_time() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        assert [e["id"] for e in (await call(c, "search_events", query="NORTHWIND"))["items"]] == [
            "evt_northwind_onboarding"
        ]
        with_kim = await call(c, "search_events", attendee=KIM)
        assert [e["id"] for e in with_kim["items"]] == [
            "evt_support_standup",
            "evt_oncall_handoff",
            "evt_retro",
            "evt_lunch_learn",
        ]
        assert with_kim["items"][0]["next_occurrences"][:2] == ["2026-03-02T09:30:00Z", "2026-03-04T09:30:00Z"]
        today = await call(c, "search_events", attendee=KIM, time_min=NOW, time_max="2026-03-03T00:00:00Z")
        assert [e["id"] for e in today["items"]] == ["evt_support_standup"]
        cancelled = await call(c, "search_events", query="stellar", include_cancelled=True)
        assert cancelled["total"] == 1 and (await call(c, "search_events", query="stellar"))["total"] == 0


async def test_rooms_and_people_are_listed_for_the_agent_to_pick_from() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        rooms = await call(c, "list_rooms", min_capacity=4, query="video")
        assert [r["id"] for r in rooms["items"]] == ["room_atlas", "room_harbor", "room_summit"]
        people = await call(c, "list_users", query="support agent")
        assert [p["email"] for p in people["items"]] == [KIM, OMAR]
        assert people["items"][1]["working_hours"]["days"] == ["TU", "WE", "TH", "FR"]


async def test_a_room_search_matches_feature_values_never_the_json_they_are_stored_as() -> None:
    seed = copy.deepcopy(SEED)
    seed["rooms"][0]["features"] = ["Vidéo wall", 'quote"mark']
    async with service_client(SERVICE, seed) as (c, _):
        for syntax in ("[", "]", '", "', ",", "[]", '["'):
            assert (await call(c, "list_rooms", query=syntax))["total"] == 0, syntax
        assert [r["id"] for r in (await call(c, "list_rooms", query="VIDÉO W"))["items"]] == ["room_nook"]
        assert [r["id"] for r in (await call(c, "list_rooms", query='e"m'))["items"]] == ["room_nook"]
        by_name = await call(c, "list_rooms", query="atlas")
        assert [r["id"] for r in by_name["items"]] == ["room_atlas"]


# ---------------------------------------------------------------------------------------------- sensitive
async def hits_of(calls_made: list[tuple[str, dict[str, Any]]]) -> set[str]:
    with Environment.create({"calendar": SEED}, now=NOW, registry={"calendar": SERVICE}) as env:
        before = env.dump()["calendar"]
        for tool, args in calls_made:
            assert not (await env.call("calendar", tool, args)).is_error
        after = env.dump()["calendar"]
    ctx = SensitiveContext(before, after)
    return {f"{h.kind} {h.key}" for ch in SERVICE.diff(before, after) for h in SERVICE.sensitive_hits(ch, ctx)}


async def test_inviting_someone_outside_the_company_is_sensitive_and_a_colleague_is_not() -> None:
    add = {"event_id": "evt_dana_priya_1on1", "add_attendees": ["jo@acme.example"]}
    assert await hits_of([("update_event", add)]) == {
        "external_invite external_invite:evt_dana_priya_1on1:jo@acme.example"
    }
    assert await hits_of([("update_event", add | {"add_attendees": [KIM]})]) == set()


async def test_cancelling_an_event_or_one_occurrence_is_sensitive_and_answering_is_not() -> None:
    assert await hits_of([("cancel_event", {"event_id": "evt_dana_focus"})]) == {"cancel cancel:evt_dana_focus"}
    one = {"event_id": "evt_support_standup", "occurrence_start": "2026-03-06T09:30:00Z"}
    assert await hits_of([("cancel_event", one)]) == {"cancel cancel:evt_support_standup"}
    assert await hits_of([("respond_to_event", {"event_id": "evt_q1_review", "response": "declined"})]) == set()


# ---------------------------------------------------------------------------------------------- doors and transports
async def test_both_doors_give_the_same_results_and_audit_rows() -> None:
    calls_made: list[tuple[str, dict[str, Any]]] = [
        ("find_free_slot", {"attendees": [KIM], "duration_minutes": 30}),
        ("respond_to_event", {"event_id": "evt_q1_review", "response": "accepted"}),
        ("respond_to_event", {"event_id": "evt_month_end", "response": "accepted"}),
        ("list_events", {"surprise": 1}),
    ]
    keep = ("tool", "arguments", "outcome", "result", "error", "state_changed", "actor")
    with (
        anyio.fail_after(10),
        Environment.create({"calendar": SEED}, now=NOW) as direct,
        Environment.create({"calendar": SEED}, now=NOW) as over_mcp,
    ):
        results = [await direct.call("calendar", tool, args) for tool, args in calls_made]
        async with Client(over_mcp.server("calendar")) as client:
            answers = [await client.call_tool(tool, args) for tool, args in calls_made]
        assert [r.data for r in results] == [a.structured_content if not a.is_error else None for a in answers]
        rows_d = [{k: r.to_dict()[k] for k in keep} for r in direct.audit()]
        rows_m = [{k: r.to_dict()[k] for k in keep} for r in over_mcp.audit()]
        assert rows_d == rows_m and [r["outcome"] for r in rows_d] == ["ok", "ok", "error", "invalid_arguments"]
        assert direct.state_hash() == over_mcp.state_hash()


async def test_the_service_answers_a_real_client_over_stdio(tmp_path: Path) -> None:
    db = tmp_path / "calendar.db"
    with anyio.fail_after(30):
        async with Client(serve_params("calendar", db, "--seed", str(EXAMPLE), "--now", NOW)) as client:
            assert len((await client.list_tools()).tools) == len(SERVICE.tools)
            page = await client.call_tool("list_events", WEEK)
            assert page.structured_content is not None and page.structured_content["total"] == 8
            rsvp = await client.call_tool("respond_to_event", {"event_id": "evt_month_end", "response": "accepted"})
            assert rsvp.is_error
    state = ServiceState.open(SERVICE, path=db)
    try:
        assert [(r.tool, r.outcome) for r in state.audit()] == [("list_events", "ok"), ("respond_to_event", "error")]
    finally:
        state.close()


async def test_the_service_answers_a_real_client_over_streamable_http(tmp_path: Path) -> None:
    db = tmp_path / "calendar.db"
    cmd = [sys.executable, "-m", "coworkenv.servers", "serve", "calendar", "--db", str(db), "--seed", str(EXAMPLE)]
    proc = subprocess.Popen(
        [*cmd, "--now", NOW, "--transport", "http", "--port", "0"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stderr is not None
        with anyio.fail_after(30):
            line = await anyio.to_thread.run_sync(proc.stderr.readline)
            assert "http://127.0.0.1:" in line, line
            async with Client(line.strip().rsplit(" ", 1)[-1]) as client:
                made = await client.call_tool(
                    "create_event",
                    {
                        "summary": "Sync",
                        "start": "2026-03-05T10:00:00Z",
                        "end": "2026-03-05T10:30:00Z",
                        "attendees": [KIM],
                    },
                )
                assert not made.is_error and made.structured_content is not None
                assert made.structured_content["attendees"][0]["email"] == KIM
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    state = ServiceState.open(SERVICE, path=db)
    try:
        assert [(r.tool, r.outcome, r.state_changed) for r in state.audit()] == [("create_event", "ok", True)]
    finally:
        state.close()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(calls(["calendar"]), min_size=1, max_size=6))
def test_fuzzed_arguments_never_crash_nor_change_state_unaudited(batch: list[tuple[str, str, dict[str, Any]]]) -> None:
    run_batch(batch)
