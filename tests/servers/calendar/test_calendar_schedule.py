"""The calendar service's time: recurring events expanded in a range (listing and free/busy, across a
daylight-saving change), cancelled occurrences, and find_free_slot with busy times, working hours and rooms."""

from __future__ import annotations

import pytest

from tests.servers.calendar.test_calendar import (
    DANA,
    KIM,
    LENA,
    OMAR,
    PRIYA,
    SEED,
    SERVICE,
    WEEK,
    an_event,
    busy_of,
    call,
    fail,
    service_client,
    small,
    starts,
)

pytestmark = pytest.mark.anyio


# ---------------------------------------------------------------------------------------------- recurrence
async def test_a_weekly_event_expands_into_its_occurrences_when_listing_a_range() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        week = await call(c, "list_events", **WEEK)
        assert starts(week) == [
            ("2026-03-02T09:30:00Z", "evt_support_standup"),
            ("2026-03-03T10:00:00Z", "evt_dana_focus"),
            ("2026-03-03T11:00:00Z", "evt_pipeline_sync"),
            ("2026-03-03T16:00:00Z", "evt_northwind_onboarding"),
            ("2026-03-04T09:30:00Z", "evt_support_standup"),
            ("2026-03-04T14:00:00Z", "evt_q1_review"),
            ("2026-03-05T12:00:00Z", "evt_lunch_learn"),
            ("2026-03-06T09:30:00Z", "evt_support_standup"),
        ]
        standup = week["items"][0]
        assert (
            standup["is_recurring"]
            and standup["end"] == "2026-03-02T09:45:00Z"
            and standup["your_response"] == "accepted"
        )
        assert week["items"][2]["your_response"] == "declined"  # a declined invitation still shows
        biweekly = await call(c, "list_events", time_min="2026-03-09T00:00:00Z", time_max="2026-04-07T00:00:00Z")
        assert [s for s, e in starts(biweekly) if e == "evt_dana_priya_1on1"] == [
            "2026-03-10T15:00:00Z",
            "2026-03-24T15:00:00Z",
        ]
        paged = await call(c, "list_events", page_size=3, **WEEK)
        assert paged["total"] == 8 and paged["next_page_token"] == "3"


async def test_a_recurring_event_keeps_its_local_time_across_a_daylight_saving_change() -> None:
    weekly = an_event(
        "evt_sync", "2026-03-02T14:30:00Z", "2026-03-02T15:00:00Z", timezone="America/New_York",
        recurrence={"frequency": "weekly"},
    )  # fmt: skip
    async with service_client(SERVICE, small([weekly])) as (c, _):
        page = await call(c, "list_events", time_max="2026-03-20T00:00:00Z")
        assert [s for s, _ in starts(page)] == ["2026-03-02T14:30:00Z", "2026-03-09T13:30:00Z", "2026-03-16T13:30:00Z"]


async def test_a_rule_stops_at_until_or_after_count() -> None:
    daily = an_event(
        "evt_daily", "2026-03-02T10:00:00Z", "2026-03-02T10:15:00Z", recurrence={"frequency": "daily", "count": 3}
    )
    until = an_event(
        "evt_until", "2026-03-02T12:00:00Z", "2026-03-02T12:30:00Z",
        recurrence={"frequency": "weekly", "by_day": ["MO", "TH"], "until": "2026-03-09T12:00:00Z"},
    )  # fmt: skip
    async with service_client(SERVICE, small([daily, until])) as (c, _):
        page = await call(c, "list_events", time_max="2026-04-01T00:00:00Z")
        assert starts(page) == [
            ("2026-03-02T10:00:00Z", "evt_daily"),
            ("2026-03-02T12:00:00Z", "evt_until"),
            ("2026-03-03T10:00:00Z", "evt_daily"),
            ("2026-03-04T10:00:00Z", "evt_daily"),
            ("2026-03-05T12:00:00Z", "evt_until"),
            ("2026-03-09T12:00:00Z", "evt_until"),
        ]


async def test_free_busy_counts_every_occurrence_but_not_declined_or_free_time() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        answer = await call(c, "query_free_busy", people=[KIM, DANA, "room_atlas", "jamie@northwind.com"], **WEEK)
        assert busy_of(answer, KIM) == [
            ("03-02T09:30", "09:45"),
            ("03-03T14:00", "15:30"),
            ("03-04T09:30", "09:45"),
            ("03-06T09:30", "09:45"),
            ("03-06T16:00", "16:15"),
        ]  # the lunch & learn shows as free
        assert ("03-03T11:00", "11:30") not in busy_of(answer, DANA)  # declined
        assert busy_of(answer, "room_atlas") == [("03-03T11:00", "11:30"), ("03-06T16:00", "16:15")]
        outsider = answer["calendars"][3]
        assert outsider["busy"] == [] and "availability unknown" in outsider["error"]
        assert "not a member" in await fail(c, "query_free_busy", people=["ghost@brightwave.io"])
        assert "366 days" in await fail(c, "query_free_busy", people=[KIM], time_max="2027-06-01T00:00:00Z")


async def test_cancelling_one_occurrence_frees_that_time_only() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        event = await call(c, "cancel_event", event_id="evt_support_standup", occurrence_start="2026-03-04T09:30:00Z")
        assert event["status"] == "confirmed" and event["cancelled_occurrences"] == ["2026-03-04T09:30:00Z"]
        week = await call(c, "list_events", **WEEK)
        assert [s for s, e in starts(week) if e == "evt_support_standup"] == [
            "2026-03-02T09:30:00Z",
            "2026-03-06T09:30:00Z",
        ]
        answer = await call(c, "query_free_busy", people=[OMAR], **WEEK)
        assert ("03-04T09:30", "09:45") not in busy_of(answer, OMAR)
        before = env.state_hash()
        text = await fail(c, "cancel_event", event_id="evt_support_standup", occurrence_start="2026-03-05T09:30:00Z")
        assert "No occurrence" in text and "2026-03-06T09:30:00Z" in text
        assert "does not repeat" in await fail(
            c, "cancel_event", event_id="evt_dana_focus", occurrence_start="2026-03-03T10:00:00Z"
        )
        assert env.state_hash() == before


# ---------------------------------------------------------------------------------------------- free slots
async def test_find_free_slot_skips_the_attendees_busy_times() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        found = await call(
            c, "find_free_slot", attendees=[KIM], duration_minutes=30, time_min="2026-03-03T13:45:00Z", max_results=2
        )
        assert [(s["start"], s["end"]) for s in found["slots"]] == [
            ("2026-03-03T15:30:00Z", "2026-03-03T16:00:00Z"),  # after Kim's dentist, before her day ends
            ("2026-03-04T09:00:00Z", "2026-03-04T09:30:00Z"),  # Dana is busy at 16:00; next morning before the stand-up
        ]
        assert found["checked"] == [DANA, KIM] and found["not_checked"] == []
        assert "create_event" in found["note"]


async def test_find_free_slot_keeps_inside_everyones_working_hours_in_their_own_time_zone() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        inside = await call(c, "find_free_slot", attendees=[LENA, "usr_omar"], duration_minutes=60, max_results=1)
        assert inside["slots"][0]["start"] == "2026-03-03T12:00:00Z"  # Omar is off on Mondays, Dana focuses till 12
        late = await call(c, "find_free_slot", attendees=[LENA], duration_minutes=60, time_min="2026-03-04T15:30:00Z")
        assert late["slots"][0]["start"] == "2026-03-05T09:00:00Z"  # Lena's Berlin day ends at 16:00 UTC
        anytime = await call(
            c, "find_free_slot", attendees=[LENA, OMAR], duration_minutes=60, working_hours_only=False, max_results=1
        )
        assert anytime["slots"][0]["start"] == "2026-03-02T09:45:00Z"


async def test_find_free_slot_finds_a_free_room_big_enough() -> None:
    booked = an_event("evt_booked", "2026-03-03T10:00:00Z", "2026-03-03T11:00:00Z", organizer=PRIYA,
                      calendar_id="cal_priya", room_id="room_atlas", transparency="transparent")  # fmt: skip
    common = {"duration_minutes": 60, "time_min": "2026-03-03T09:30:00Z", "granularity_minutes": 30, "max_results": 1}
    async with service_client(SERVICE, small([booked])) as (c, _):
        in_atlas = await call(c, "find_free_slot", room_id="room_atlas", **common)
        assert in_atlas["slots"] == [
            {
                "start": "2026-03-03T11:00:00Z",
                "end": "2026-03-03T12:00:00Z",
                "room_id": "room_atlas",
                "room_name": "Atlas",
            }
        ]
        any_room = await call(c, "find_free_slot", attendees=[PRIYA], need_room=True, **common)
        assert (
            any_room["slots"][0]["room_id"] == "room_nook" and any_room["slots"][0]["start"] == "2026-03-03T09:30:00Z"
        )
        bigger = await call(c, "find_free_slot", need_room=True, min_capacity=3, **common)
        assert (bigger["slots"][0]["room_id"], bigger["slots"][0]["start"]) == ("room_atlas", "2026-03-03T11:00:00Z")
        text = await fail(c, "find_free_slot", attendees=[PRIYA, "jo@acme.example"], room_id="room_nook", **common)
        assert "seats 2, fewer than the 3 people" in text and "min_capacity=3" in text
        assert "No room seats 9" in await fail(c, "find_free_slot", need_room=True, min_capacity=9, **common)


async def test_find_free_slot_explains_what_it_cannot_do() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        outside = await call(c, "find_free_slot", attendees=["Jamie.Lee@northwind.com"], duration_minutes=30)
        assert outside["not_checked"] == ["jamie.lee@northwind.com"] and outside["slots"]
        none = await call(c, "find_free_slot", duration_minutes=600, time_max="2026-03-03T00:00:00Z")
        assert none["slots"] == [] and "working_hours_only false" in none["note"]
        assert "not a member" in await fail(c, "find_free_slot", attendees=["ghost@brightwave.io"], duration_minutes=30)
        assert "62 days" in await fail(c, "find_free_slot", duration_minutes=30, time_max="2026-06-01T00:00:00Z")
        text = await fail(c, "find_free_slot", duration_minutes=30, time_max="2026-03-01T00:00:00Z")
        assert "must be after time_min" in text
        assert "in the past" in await fail(
            c, "find_free_slot", duration_minutes=30, time_min="2026-02-01T00:00:00Z", time_max="2026-02-02T00:00:00Z"
        )
        assert "divide an hour" in await fail(c, "find_free_slot", duration_minutes=30, granularity_minutes=7)
        assert "duration_minutes" in await fail(c, "find_free_slot", duration_minutes=1)
