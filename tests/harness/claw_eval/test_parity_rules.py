"""Parity's reading rules and call sequences, as pure functions: moved fixture dates read back in the task's time,
stamps of now, ids each side makes up, the first difference with both values; scripted and seeded random calls."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from coworkenv.harness.claw_eval.parity_calls import Pools, missing_id, random_sequences, scripted_sequence
from coworkenv.harness.claw_eval.parity_compare import (
    Reader,
    canonical,
    first_difference,
    mock_shifts,
    shift_arguments,
    shifted_times,
)
from coworkenv.harness.claw_eval.parity_ours import answer_of
from coworkenv.servers.kit.door import CallOutcome

INBOX = {"inbox.json": [{"message_id": "msg_001", "date": "2026-02-26T08:30:00Z"},
                        {"message_id": "msg_002", "date": "2026-02-27T17:45:00Z"}]}  # fmt: skip
EVENTS = {"events.json": [{"event_id": "evt_001", "start_time": "2026-03-02T09:00:00Z", "end_time": "2026-03-02T09:30:00Z"},
                          {"event_id": "evt_002", "start_time": "2026-03-04T14:00:00Z", "end_time": "2026-03-04T15:00:00Z"}]}  # fmt: skip
LOADED = datetime(2026, 12, 7, 7, 12, 33, 250_000, tzinfo=UTC)
WINDOW = (LOADED, LOADED + timedelta(seconds=5))
OURS_NOW = datetime(2026, 2, 28, 17, 45, tzinfo=UTC)


def test_the_gmail_shift_puts_the_newest_email_a_day_before_the_reset_and_reads_back_to_the_fixture() -> None:
    shifts = mock_shifts({"gmail": INBOX}, LOADED)
    moved = datetime(2026, 2, 27, 17, 45, tzinfo=UTC) + shifts["gmail"]
    assert moved == LOADED - timedelta(days=1)
    shown = moved.replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")  # the mock truncates to the second
    reader = Reader({"msg_001", "msg_002"}, shifted_times("gmail", INBOX), shifts)
    assert reader.read({"date": shown}, "gmail", WINDOW) == {"date": "2026-02-27T17:45:00Z"}


def test_the_calendar_shift_is_whole_days_and_date_arguments_move_with_it() -> None:
    shifts = mock_shifts({"calendar": EVENTS}, LOADED)
    assert shifts["calendar"] == timedelta(days=(LOADED.date() - datetime(2026, 3, 2).date()).days + 1)
    sent = shift_arguments(
        {"date": "2026-03-04", "start_time": "2026-03-04T14:00:00Z", "title": "x"}, shifts["calendar"]
    )
    reader = Reader(set(), shifted_times("calendar", EVENTS), shifts)
    assert reader.read(sent, "calendar", WINDOW) == {
        "date": "2026-03-04",
        "start_time": "2026-03-04T14:00:00Z",
        "title": "x",
    }
    assert shift_arguments({"date": "2026-03-04"}, None) == {"date": "2026-03-04"}


def test_a_stamp_of_now_reads_now_on_either_side_but_a_fixture_time_near_now_stays_itself() -> None:
    mock = Reader(set(), [])
    ours = Reader({"2026-02-28T17:45:00Z"}, [])
    assert mock.read({"timestamp": LOADED.isoformat()}, "todo", WINDOW) == {"timestamp": "<now>"}
    assert ours.read({"created_at": "2026-02-28T17:46:10Z"}, "todo", (OURS_NOW, OURS_NOW)) == {"created_at": "<now>"}
    assert ours.read("2026-02-28T17:45:00Z", "todo", (OURS_NOW, OURS_NOW)) == "2026-02-28T17:45:00Z"
    assert ours.read("2026-02-28", "todo", (OURS_NOW, OURS_NOW)) == "<today>"
    assert mock.read("2026-03-01T06:00:00+08:00", "todo", WINDOW) == "2026-02-28T22:00:00Z"


def test_ids_a_side_makes_up_read_by_order_of_appearance_and_fixture_ids_stay() -> None:
    mock, ours = Reader({"todo_001"}, []), Reader({"todo_001"}, [])
    made = mock.read({"task": {"task_id": "todo_012"}, "others": {"ids": ["todo_001"]}}, "todo", WINDOW)
    also = ours.read({"task": {"task_id": "TODO-7"}, "others": {"ids": ["todo_001"]}}, "todo", WINDOW)
    assert made == also == {"task": {"task_id": "<new-id:1>"}, "others": {"ids": ["todo_001"]}}
    assert mock.read({"task_ids": ["todo_012", "todo_013"]}, "todo", WINDOW) == {
        "task_ids": ["<new-id:1>", "<new-id:2>"]
    }


def test_the_first_difference_names_the_path_and_both_values_ignoring_key_order_and_int_float() -> None:
    assert first_difference({"a": 1, "b": [1, 2]}, {"b": [1.0, 2], "a": 1.0}) is None
    assert first_difference({"a": {"b": [1, "x"]}}, {"a": {"b": [1, "y"]}}) == ("$.a.b[1]", "x", "y")
    assert first_difference({"a": 1}, {"a": 1, "c": 2}) == ("$.c", "<absent>", 2)
    assert first_difference([1], [1, 2]) == ("$.length", 1, 2)
    assert first_difference({"ok": True}, {"ok": 1}) == ("$.ok", True, 1)


def test_our_errors_read_as_the_mock_s_http_answers() -> None:
    assert answer_of(CallOutcome("HTTP 404: Ticket TK-9 not found", True, "error")).body == {
        "detail": "Ticket TK-9 not found"
    }
    assert answer_of(CallOutcome("HTTP 404: Not Found", True, "error")).status == 404
    assert answer_of(CallOutcome("Invalid arguments for x: y", True, "invalid_arguments")).status == 422
    assert answer_of(CallOutcome("{}", False, "ok", {"total": 0})).body == {"total": 0}


TOOLS = [
    {"name": "todo_delete_task", "input_schema": {"properties": {"task_id": {"type": "string"}}, "required": ["task_id"]}},
    {"name": "todo_list_tasks", "input_schema": {"properties": {"status": {"type": "string",
        "description": "Filter by status (pending/completed/all)"}}, "required": []}},
    {"name": "todo_update_task", "input_schema": {"properties": {"task_id": {"type": "string"},
        "status": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}}, "required": ["task_id"]}},
    {"name": "todo_create_task", "input_schema": {"properties": {"title": {"type": "string"},
        "due_date": {"type": "string"}}, "required": ["title"]}},
]  # fmt: skip
FIXTURES = [
    [{"task_id": f"todo_00{n}", "title": f"Task {n}", "status": "pending", "tags": ["q1"]} for n in range(1, 6)]
]


def test_the_scripted_sequence_calls_every_tool_once_with_fixture_ids_destructive_last() -> None:
    play = scripted_sequence(TOOLS, Pools.of(FIXTURES))
    assert [c.tool for c in play.calls] == [
        "todo_list_tasks",
        "todo_update_task",
        "todo_create_task",
        "todo_delete_task",
    ]
    assert play.calls[1].arguments == {"task_id": "todo_001"} and play.calls[3].arguments == {"task_id": "todo_001"}
    assert play.calls[2].arguments == {"title": "Task 1"}


def test_random_sequences_repeat_with_their_seed_and_sometimes_name_a_missing_id() -> None:
    pools = Pools.of(FIXTURES)
    first, again = random_sequences(TOOLS, pools, 30, seed=3), random_sequences(TOOLS, pools, 30, seed=3)
    assert first == again and first != random_sequences(TOOLS, pools, 30, seed=4)
    ids = [c.arguments["task_id"] for p in first for c in p.calls if "task_id" in c.arguments]
    assert "todo_999" in ids and set(ids) <= {"todo_001", "todo_002", "todo_003", "todo_004", "todo_005", "todo_999"}
    statuses = {c.arguments.get("status") for p in first for c in p.calls if c.tool == "todo_list_tasks"}
    assert statuses - {None} == {"pending"}  # the fixtures' value of that key comes first
    assert all(2 <= len(p.calls) <= 6 for p in first)
    assert missing_id("todo_001", {"todo_999"}) == "todo_9999"


def _as_the_mock_shows(text: str, delta: timedelta) -> str:
    """What Claw-Eval's gmail and calendar mocks write for a fixture time moved by delta: the local wall time, 'Z'."""
    return (datetime.fromisoformat(text) + delta).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_a_zoned_inbox_reads_back_as_the_wall_time_our_profile_shows() -> None:
    inbox = {"inbox.json": [{"message_id": "msg_801", "date": "2026-03-24T10:00:00+08:00"},
                            {"message_id": "msg_804", "date": "2026-03-25T17:00:00+08:00"}]}  # fmt: skip
    delta = (LOADED - timedelta(days=1)) - datetime.fromisoformat("2026-03-25T17:00:00+08:00")
    shown = _as_the_mock_shows("2026-03-24T10:00:00+08:00", delta)
    reader = Reader(set(), shifted_times("gmail", inbox), mock_shifts({"gmail": inbox}, LOADED))
    assert reader.read({"date": shown}, "gmail", WINDOW) == {"date": "2026-03-24T10:00:00Z"}


def test_zoned_events_read_back_at_the_time_of_day_the_mock_shows_on_their_own_dates() -> None:
    events = {"events.json": [{"event_id": "evt_201", "start_time": "2026-03-27T09:00:00+08:00", "end_time": "2026-03-27T10:30:00+08:00"}]}  # fmt: skip
    earliest = datetime.fromisoformat("2026-03-27T09:00:00+08:00")
    target = (LOADED + timedelta(days=1)).replace(hour=9, minute=0, second=0, microsecond=0)
    shown = _as_the_mock_shows("2026-03-27T10:30:00+08:00", target - earliest)
    assert shown.endswith("T18:30:00Z")
    reader = Reader(set(), shifted_times("calendar", events), mock_shifts({"calendar": events}, LOADED))
    assert reader.read({"end_time": shown}, "calendar", WINDOW) == {"end_time": "2026-03-27T18:30:00Z"}


def test_an_answer_echoing_a_moved_argument_reads_as_the_sequence_wrote_it() -> None:
    reader = Reader(set(), [], {"calendar": timedelta(days=280)}, aliases={"2026-12-03T06:00:00Z": "2026-02-27T14:00:00+08:00"})  # fmt: skip
    assert reader.read({"error": "Invalid date format: 2026-12-03T06:00:00Z"}, "calendar", WINDOW) == {
        "error": "Invalid date format: 2026-02-27T14:00:00+08:00"
    }
    assert reader.read({"start_time": "2026-12-03T06:00:00Z"}, "calendar", WINDOW) == {
        "start_time": "2026-02-27T06:00:00Z"
    }


def test_a_list_the_mock_builds_from_a_set_compares_as_a_set() -> None:
    reader = Reader(set(), [])
    first = reader.read({"feeds": [{"categories": ["软件", "SaaS", "增长"]}]}, "rss", WINDOW)
    second = reader.read({"feeds": [{"categories": ["增长", "软件", "SaaS"]}]}, "rss", WINDOW)
    assert first == second
    assert reader.read({"labels": ["b", "a"]}, "gmail", WINDOW) == {"labels": ["b", "a"]}, "other lists keep order"


def test_a_stamp_of_now_reads_now_even_where_moving_it_back_lands_on_a_fixture_time() -> None:
    fixture_time = OURS_NOW - timedelta(days=1)
    ours = Reader(set(), [fixture_time], {"calendar": timedelta(days=1)})  # our import moved calendar a day
    assert ours.read({"timestamp": "2026-02-28T17:45:00Z"}, "calendar", (OURS_NOW, OURS_NOW)) == {"timestamp": "<now>"}
    assert ours.read("2026-02-28T17:45:00Z", "calendar", (LOADED, LOADED)) == canonical(fixture_time)
