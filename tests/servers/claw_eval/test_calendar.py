"""Claw-Eval's calendar tools on our calendar service: the events seed with their ids at the times the mock shows,
the clock a day before the first, the tools answer as its mock does, creating and deleting change our events, and
``/audit`` is rebuilt from our audit log."""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from coworkenv.servers.claw_eval.calendar import ENDPOINTS, SERVICE, clock
from coworkenv.servers.claw_eval.common import http_status
from tests.servers.claw_eval.gmail_calendar_crm_fixtures import real_fixtures
from tests.servers.claw_eval.ops_parity import Mock, audit, call, claw_env, fixture_of, needs_claw_eval

EVENTS: list[dict[str, Any]] = [
    {
        "event_id": "evt_401",
        "title": "Product weekly",
        "organizer": "liming@company.com",
        "attendees": ["liming@company.com", "Wang Fang"],
        "start_time": "2026-03-04T09:00:00+08:00",
        "end_time": "2026-03-04T10:00:00+08:00",
        "location": "Room A",
        "status": "confirmed",
    },
    {
        "event_id": "evt_402",
        "title": "Tech talk",
        "organizer": "HR",
        "attendees": ["zhaolei@company.com"],
        "start_time": "2026-03-04T14:00:00+08:00",
        "end_time": "2026-03-04T15:00:00+08:00",
        "location": "Room B",
        "status": "free",
        "description": "Monthly",
    },
    {
        "event_id": "evt_403",
        "title": "Offsite",
        "attendees": ["all@company.com"],
        "start_time": "2026-03-06T20:00:00+08:00",
        "end_time": "2026-03-06T20:00:00+08:00",
        "location": "",
        "recurring": True,
    },
]
FIXTURES = {"events.json": EVENTS}
NOW = "2026-03-03T09:00:00Z"
SHOWN = {  # the mock shows each local wall time moved by the first event's offset (+08:00), with a Z
    "evt_401": ("2026-03-04T17:00:00Z", "2026-03-04T18:00:00Z"),
    "evt_402": ("2026-03-04T22:00:00Z", "2026-03-04T23:00:00Z"),
    "evt_403": ("2026-03-07T04:00:00Z", "2026-03-07T04:00:00Z"),
}


def shown(record: dict[str, Any]) -> dict[str, Any]:
    start, end = SHOWN[record["event_id"]]
    return {**record, "start_time": start, "end_time": end}


def ids(answer: dict[str, Any]) -> list[str]:
    return [e["event_id"] for e in answer["events"]]


def test_the_events_seed_with_their_ids_on_the_users_calendar_keeping_what_our_fields_cannot_hold() -> None:
    seed = SERVICE.seed(FIXTURES)
    assert [u["email"] for u in seed["users"]] == ["me@company.com", "liming@company.com"]
    assert seed["calendars"] == [{"id": "cal_me", "owner": "me@company.com", "summary": "Me", "is_primary": True}]
    rows = {e["id"]: e for e in seed["events"]}
    weekly, talk, offsite = rows["evt_401"], rows["evt_402"], rows["evt_403"]
    assert (weekly["start"], weekly["end"], weekly["organizer"]) == (*SHOWN["evt_401"], "liming@company.com")
    assert weekly["attendees"] == [{"email": "liming@company.com"}]
    assert weekly["custom_fields"] == {
        "organizer": "liming@company.com",
        "attendees": ["liming@company.com", "Wang Fang"],
        "status": "confirmed",
    }
    assert (talk["organizer"], talk["status"], talk["description"]) == ("me@company.com", "confirmed", "Monthly")
    assert talk["custom_fields"] == {"organizer": "HR", "status": "free", "description": "Monthly"}
    assert offsite["end"] == "2026-03-07T04:01:00Z"  # ours must end after it starts; the mock's end is kept
    assert offsite["custom_fields"] == {"end_time": "2026-03-07T04:00:00Z", "recurring": True}


def test_an_event_reads_back_as_the_mock_shows_it_and_the_clock_is_a_day_before_the_first() -> None:
    assert clock(FIXTURES) == datetime(2026, 3, 3, 9, 0, tzinfo=UTC)
    assert clock({"events.json": []}) is None
    with claw_env(SERVICE, FIXTURES, NOW) as env:
        for record in EVENTS:
            assert call(env, SERVICE, "calendar_get_event", {"event_id": record["event_id"]}) == shown(record)
        assert call(env, SERVICE, "calendar_get_event", {"event_id": "evt_9"}) == {"error": "Event evt_9 not found"}


def test_events_list_by_day_and_by_attendee_as_the_mock_lists_them() -> None:
    with claw_env(SERVICE, FIXTURES, NOW) as env:
        day = call(env, SERVICE, "calendar_list_events", {"date": "2026-03-04"})
        assert day == {"events": [shown(EVENTS[0]), shown(EVENTS[1])], "total": 2}
        assert ids(call(env, SERVICE, "calendar_list_events", {"date": "2026-03-04", "days": 4})) == [
            "evt_401",
            "evt_402",
            "evt_403",
        ]
        assert ids(call(env, SERVICE, "calendar_list_events", {"date": "2026-03-07"})) == ["evt_403"]
        assert ids(call(env, SERVICE, "calendar_list_events", {"date": "2026-03-05", "days": -1})) == []
        bad = call(env, SERVICE, "calendar_list_events", {"date": "March 4"})
        assert bad == {"error": "Invalid date format: March 4"}
        wang = call(env, SERVICE, "calendar_get_user_events", {"user": "Wang", "date": "2026-03-04"})
        assert ids(wang) == ["evt_401"] and wang["user"] == "Wang"
        domain = call(env, SERVICE, "calendar_get_user_events", {"user": "company.com", "date": "2026-03-04"})
        assert ids(domain) == ["evt_401", "evt_402"]


def test_creating_and_deleting_change_our_events_and_the_audit_the_graders_read() -> None:
    with claw_env(SERVICE, FIXTURES, NOW) as env:
        args = {
            "title": "Sync",
            "start_time": "2026-03-04T10:00:00+08:00",
            "end_time": "2026-03-04T11:00:00+08:00",
            "attendees": ["Li Ming", "zhaolei@company.com"],
        }
        created = call(env, SERVICE, "calendar_create_event", args)
        event = {**args, "event_id": "evt_004", "location": "", "recurring": False}
        assert created == {"status": "created", "event": event}
        ours = env.state("calendar").tables["events"].get("evt_004")
        assert ours is not None and (ours["start"], ours["end"]) == ("2026-03-04T02:00:00Z", "2026-03-04T03:00:00Z")
        assert ours["attendees"] == [
            {"email": "zhaolei@company.com", "response_status": "needsAction", "optional": False, "comment": ""}
        ]
        assert call(env, SERVICE, "calendar_get_event", {"event_id": "evt_004"}) == event
        assert ids(call(env, SERVICE, "calendar_list_events", {"date": "2026-03-04"})) == [
            "evt_004",
            "evt_401",
            "evt_402",
        ]
        deleted = call(env, SERVICE, "calendar_delete_event", {"event_id": "evt_401"})
        assert deleted == {"status": "deleted", "event": shown(EVENTS[0])}
        assert env.state("calendar").tables["events"].get("evt_401") is None
        assert call(env, SERVICE, "calendar_delete_event", {"event_id": "evt_401"}) == {
            "error": "Event evt_401 not found"
        }
        again = call(env, SERVICE, "calendar_create_event", {"title": "", "start_time": "x", "end_time": "y"})
        assert again["event"]["event_id"] == "evt_005"  # the mock would hand out evt_004 again; our ids stay unique
        found = audit(env, SERVICE)
        assert found["created_events"] == [event, again["event"]] and found["deleted"] == [shown(EVENTS[0])]
        assert [c["endpoint"] for c in found["calls"]][:3] == [
            "/calendar/events/create",
            "/calendar/events/get",
            "/calendar/events",
        ]
        assert found["calls"][0]["request_body"] == {**args, "location": ""}


def test_an_event_created_at_a_time_the_mock_cannot_compare_breaks_its_lists_as_it_breaks_the_mocks() -> None:
    with claw_env(SERVICE, FIXTURES, NOW) as env:
        state = env.state("calendar")
        naive = {"title": "Lunch", "start_time": "2026-03-04T12:00:00", "end_time": "2026-03-04T13:00:00"}
        assert state.call_now("calendar_create_event", naive).outcome == "ok"
        assert state.call_now("calendar_list_events", {"date": "2026-03-04"}).text == "HTTP 500: Internal Server Error"
        assert state.call_now("calendar_list_events", {}).outcome == "invalid_arguments"
        assert [c["endpoint"] for c in audit(env, SERVICE)["calls"]] == ["/calendar/events/create"]


@pytest.mark.parametrize(
    ("records", "says"),
    [
        ([{**EVENTS[0], "start_time": "2026-03-04T09:00:00"}], "events.json: record 0 ('evt_401'): field 'start_time'"),
        ([EVENTS[0], {**EVENTS[1], "end_time": "soon"}], "events.json: record 1 ('evt_402'): field 'end_time'"),
        ([EVENTS[0], {**EVENTS[1], "attendees": "all"}], "events.json: record 1 ('evt_402'): field 'attendees' must"),
        ([EVENTS[0], {**EVENTS[1], "event_id": "evt_401"}], "events.json: record 1 ('evt_401'): event_id 'evt_401' is"),
        ({"events": EVENTS}, "events.json: expected a JSON list of records, got dict"),
    ],
)
def test_a_bad_fixture_is_one_error_naming_the_file_and_the_record(records: Any, says: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(says)):
        SERVICE.seed({"events.json": records})


# ---------------------------------------------------------------------------------------------- the real mock
_WHEN = re.compile(r"^(\d{4}-\d\d-\d\d)(T.*)?$")


def _back(value: Any, days: int) -> Any:
    """The mock's answer moved back ``days`` whole days, its wall-clock stamps left out."""
    if isinstance(value, dict):
        return {k: "<stamp>" if k == "timestamp" else _back(v, days) for k, v in value.items()}
    if isinstance(value, list):
        return [_back(v, days) for v in value]
    if isinstance(value, str) and (found := _WHEN.match(value)):
        return (date.fromisoformat(found.group(1)) - timedelta(days=days)).isoformat() + (found.group(2) or "")
    return value


def _replay(mock: Mock, env: Any, days: int, calls: list[tuple[str, dict[str, Any]]]) -> None:
    """Each call gives the same answer on the mock (its dates ``days`` later) and on ours; then the same /audit."""
    state = env.state("calendar")
    for tool, args in calls:
        theirs_args = {k: _back(v, -days) if k in ("date", "start_time", "end_time") else v for k, v in args.items()}
        answer = mock.client.post(ENDPOINTS[tool], json=theirs_args)
        status = answer.status_code
        ours = state.call_now(tool, args)
        where = f"{tool}({json.dumps(args, ensure_ascii=False)})"
        if status != 200:
            assert http_status(ours.outcome, ours.text) == status, f"{where}: {status} {ours.text}"
            continue
        assert ours.outcome == "ok", f"{where}: {ours.text}"
        assert _back(ours.data, 0) == _back(answer.json(), days), where
    assert _back(audit(env, SERVICE), 0) == _back(mock.audit(), days)


def _mock(path: Path, monkeypatch: pytest.MonkeyPatch) -> Mock:
    """The real mock, answering 500 where its route raises (as served)."""
    from fastapi.testclient import TestClient

    mock = Mock("calendar", path, monkeypatch)
    mock.client = TestClient(mock.client.app, raise_server_exceptions=False)
    return mock


def _offset(mock: Mock, env: Any, event_id: str) -> int:
    """How many whole days later the mock shows the events than we do."""
    _, theirs = mock.post(ENDPOINTS["calendar_get_event"], {"event_id": event_id})
    ours = call(env, SERVICE, "calendar_get_event", {"event_id": event_id})
    gap = datetime.fromisoformat(theirs["start_time"]) - datetime.fromisoformat(ours["start_time"])
    assert gap.seconds == 0 and gap.microseconds == 0, (theirs["start_time"], ours["start_time"])
    return gap.days


@needs_claw_eval
def test_the_tools_answer_as_the_real_mock_a_whole_number_of_days_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixture = tmp_path / "events.json"
    fixture.write_text(json.dumps(EVENTS))
    mock = _mock(fixture, monkeypatch)
    with claw_env(SERVICE, fixture_of(fixture), NOW) as env:
        days = _offset(mock, env, "evt_401")
    mock.client.post("/calendar/reset")
    create = {"title": "Sync", "start_time": "2026-03-04T10:00:00+08:00", "end_time": "2026-03-04T11:00:00Z"}
    calls: list[tuple[str, dict[str, Any]]] = [
        ("calendar_list_events", {"date": "2026-03-04"}),
        ("calendar_list_events", {"date": "2026-03-04", "days": 4}),
        ("calendar_list_events", {"date": "2026/03/04"}),
        ("calendar_get_event", {"event_id": "evt_403"}),
        ("calendar_get_event", {"event_id": "nope"}),
        ("calendar_get_user_events", {"user": "Wang", "date": "2026-03-04"}),
        ("calendar_get_user_events", {"user": "all@", "date": "2026-03-07"}),
        ("calendar_create_event", {**create, "attendees": ["Li Ming"], "location": "Room C"}),
        ("calendar_list_events", {"date": "2026-03-04"}),
        ("calendar_create_event", {"title": "Later", "start_time": "2026-03-05T12:00:00"}),
        ("calendar_create_event", {"title": "Later", "start_time": "2026-03-05T12:00:00", "end_time": "soon"}),
        ("calendar_delete_event", {"event_id": "evt_402"}),  # after the creations: the mock reuses ids after one
        ("calendar_delete_event", {"event_id": "evt_402"}),
        ("calendar_list_events", {"date": "2026-03-05"}),
    ]
    with claw_env(SERVICE, fixture_of(fixture), NOW) as env:
        _replay(mock, env, days, calls)


@needs_claw_eval
def test_every_real_calendar_seeds_and_lists_and_reads_as_the_real_mock(monkeypatch: pytest.MonkeyPatch) -> None:
    found = real_fixtures("calendar")
    assert len(found) >= 18
    for task, path in found:
        fixtures = fixture_of(path)
        records = fixtures[path.name]
        now = clock(fixtures)
        with claw_env(SERVICE, fixtures, now.isoformat() if now else NOW) as env:
            if not records:
                assert call(env, SERVICE, "calendar_list_events", {"date": "2026-03-02", "days": 30})["total"] == 0
                continue
            mock = _mock(path, monkeypatch)
            days = _offset(mock, env, records[0]["event_id"])
            starts = sorted(e["start"][:10] for e in env.state("calendar").dump()["events"])
        mock.client.post("/calendar/reset")
        first = date.fromisoformat(starts[0]) - timedelta(days=1)
        span = (date.fromisoformat(starts[-1]) - first).days + 2
        every_day = [first + timedelta(days=n) for n in range(span)]
        calls = [("calendar_list_events", {"date": d.isoformat()}) for d in every_day]
        calls.append(("calendar_list_events", {"date": first.isoformat(), "days": span}))
        calls += [("calendar_get_event", {"event_id": r["event_id"]}) for r in records]
        people = sorted({a for r in records for a in r["attendees"]})[:6]
        calls += [("calendar_get_user_events", {"user": p, "date": s}) for p in people for s in sorted(set(starts))]
        with claw_env(SERVICE, fixtures, now.isoformat() if now else NOW) as env:
            try:
                _replay(mock, env, days, calls)
            except AssertionError as exc:
                raise AssertionError(f"{task}: {exc}") from None
