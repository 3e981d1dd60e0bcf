"""Claw-Eval's gmail tools on our email service: the inbox seeds with its ids, dates keep their age against the clock,
the tools answer as its mock does, a sent message and a draft are messages of our mailbox, and ``/audit`` is rebuilt
from our audit log."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from coworkenv.servers.claw_eval.gmail import ENDPOINTS, SERVICE, clock
from coworkenv.servers.kit import parse_time
from tests.servers.claw_eval.gmail_calendar_crm_fixtures import real_fixtures
from tests.servers.claw_eval.ops_parity import Mock, audit, call, claw_env, fixture_of, needs_claw_eval, normal, replay

INBOX: list[dict[str, Any]] = [
    {
        "message_id": "msg_101",
        "from": "Dana Whitfield <dana@northwind.com>",
        "to": "me@brightwave.io",
        "subject": "Renewal terms",
        "body": "Can we talk about the renewal on Monday?",
        "date": "2026-02-27T09:15:00+08:00",
        "labels": ["inbox", "important"],
        "is_read": False,
    },
    {
        "message_id": "msg_102",
        "from": "billing@vendor.io",
        "to": "me@brightwave.io, finance@brightwave.io",
        "subject": "Invoice INV-2291",
        "body": "Your invoice is attached.",
        "date": "2026-02-26T08:00:00Z",
        "labels": ["INBOX"],
        "is_read": True,
    },
    {
        "message_id": "pb_003",
        "from": "HR Department",
        "to": "all-staff",
        "subject": "Benefits enrolment",
        "body": "Enrolment closes on Friday.",
        "date": "2026-02-20T10:00:00Z",
        "labels": ["INBOX", "通知"],
        "is_read": True,
    },
]
FIXTURES = {"inbox.json": INBOX}
NOW = "2026-02-28T01:15:01Z"
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("gmail_list_messages", {}),
    ("gmail_list_messages", {"days_back": 1}),
    ("gmail_list_messages", {"days_back": 2, "max_results": 1}),
    ("gmail_list_messages", {"days_back": 30, "max_results": -1}),
    ("gmail_list_messages", {"days_back": "8"}),
    ("gmail_get_message", {"message_id": "msg_101"}),
    ("gmail_get_message", {"message_id": "pb_003"}),
    ("gmail_get_message", {"message_id": "msg_999"}),
    ("gmail_get_message", {}),
    ("gmail_send_message", {"to": "dana@northwind.com", "subject": "Re: Renewal terms", "body": "Monday works."}),
    ("gmail_send_message", {"to": "Dana", "subject": "x"}),
    (
        "gmail_save_draft",
        {"to": "dana@northwind.com", "subject": "Re: Renewal", "body": "Draft", "reply_to_message_id": "msg_101"},
    ),
    ("gmail_save_draft", {"to": "billing@vendor.io", "subject": "Invoice", "body": "Thanks"}),
    ("gmail_list_messages", {"days_back": 30}),
]


def ids(answer: dict[str, Any]) -> list[str]:
    return [m["message_id"] for m in answer["messages"]]


def test_the_inbox_seeds_with_its_ids_and_keeps_what_our_fields_cannot_hold() -> None:
    seed = SERVICE.seed(FIXTURES)
    assert seed["mailboxes"] == [{"id": "mbx_me", "address": "me@brightwave.io", "name": "Me", "is_primary": True}]
    rows = {m["id"]: m for m in seed["messages"]}
    assert list(rows) == ["msg_101", "msg_102", "pb_003"]
    dana, invoice, hr = rows["msg_101"], rows["msg_102"], rows["pb_003"]
    assert (dana["from_address"], dana["from_name"], dana["date"]) == (
        "dana@northwind.com",
        "Dana Whitfield",
        "2026-02-27T09:15:00Z",
    )
    assert dana["label_ids"] == ["INBOX", "IMPORTANT", "UNREAD"] and dana["custom_fields"] == {
        "labels": ["inbox", "important"]
    }
    assert invoice["to"] == ["me@brightwave.io", "finance@brightwave.io"] and invoice["custom_fields"] == {}
    assert hr["custom_fields"] == {"from": "HR Department", "to": "all-staff"} and hr["to"] == []


def test_a_message_reads_back_exactly_as_the_fixture_holds_it_with_its_wall_time() -> None:
    with claw_env(SERVICE, FIXTURES, NOW) as env:
        for record in INBOX:
            expected = {**record, "date": record["date"][:19] + "Z"}
            assert call(env, SERVICE, "gmail_get_message", {"message_id": record["message_id"]}) == expected
        assert call(env, SERVICE, "gmail_get_message", {"message_id": "msg_9"}) == {"error": "Message msg_9 not found"}


def test_the_clock_makes_the_newest_message_a_day_old_and_days_back_counts_from_it() -> None:
    assert clock(FIXTURES) == datetime(2026, 2, 28, 1, 15, 1, tzinfo=UTC)  # msg_101 is 01:15Z; a day and a second on
    assert clock({"inbox.json": []}) is None
    with claw_env(SERVICE, FIXTURES, NOW) as env:
        listed = call(env, SERVICE, "gmail_list_messages")
        assert ids(listed) == ["msg_101", "msg_102"] and listed["total"] == 2
        assert listed["messages"][0] == {
            "message_id": "msg_101",
            "from": "Dana Whitfield <dana@northwind.com>",
            "subject": "Renewal terms",
            "date": "2026-02-27T09:15:00Z",
            "is_read": False,
            "labels": ["inbox", "important"],
        }
        assert ids(call(env, SERVICE, "gmail_list_messages", {"days_back": 1})) == ["msg_101"]  # shown 16 h old
        assert ids(call(env, SERVICE, "gmail_list_messages", {"days_back": 8, "max_results": 2})) == [
            "msg_101",
            "msg_102",
        ]
        assert ids(call(env, SERVICE, "gmail_list_messages", {"days_back": 8, "max_results": -1})) == [
            "msg_101",
            "msg_102",
        ]


def test_sending_and_saving_a_draft_write_our_mailbox_and_the_audit_the_graders_read() -> None:
    with claw_env(SERVICE, FIXTURES, NOW) as env:
        sent = call(
            env, SERVICE, "gmail_send_message", {"to": "Dana <dana@northwind.com>", "subject": "Re", "body": "Yes"}
        )
        assert sent == {
            "status": "sent",
            "message": {
                "to": "Dana <dana@northwind.com>",
                "subject": "Re",
                "body": "Yes",
                "timestamp": "2026-02-28T01:15:01+00:00",
            },
        }
        args = {
            "to": "dana@northwind.com",
            "subject": "Re: Renewal terms",
            "body": "Draft",
            "reply_to_message_id": "msg_101",
        }
        draft = call(env, SERVICE, "gmail_save_draft", args)
        assert draft["status"] == "draft_saved" and draft["draft"]["reply_to_message_id"] == "msg_101"
        mine = [m for m in env.state("email").dump()["messages"] if m["id"] not in {"msg_101", "msg_102", "pb_003"}]
        by_label = {m["label_ids"][0]: m for m in mine}
        assert set(by_label) == {"SENT", "DRAFT"}
        assert (
            by_label["SENT"]["to"] == ["dana@northwind.com"] and by_label["SENT"]["from_address"] == "me@brightwave.io"
        )
        assert (
            by_label["DRAFT"]["thread_id"] == "msg_101"
            and by_label["DRAFT"]["in_reply_to"] == "<msg_101@northwind.com>"
        )
        assert ids(call(env, SERVICE, "gmail_list_messages", {"days_back": 30})) == ["msg_101", "msg_102", "pb_003"]
        assert "not found" in call(env, SERVICE, "gmail_get_message", {"message_id": by_label["SENT"]["id"]})["error"]
        found = audit(env, SERVICE)
        assert found["sent_messages"] == [sent["message"]] and found["drafts"] == [draft["draft"]]
        assert [c["endpoint"] for c in found["calls"]] == [
            "/gmail/send",
            "/gmail/drafts/save",
            "/gmail/messages",
            "/gmail/messages/get",
        ]
        assert found["calls"][2]["request_body"] == {"days_back": 30, "max_results": 20}
        assert (
            found["calls"][0]["response_body"] == sent and found["calls"][0]["timestamp"] == "2026-02-28T01:15:01+00:00"
        )


def test_a_call_the_mock_refuses_is_an_error_and_no_call_of_its_audit() -> None:
    with claw_env(SERVICE, FIXTURES, NOW) as env:
        state = env.state("email")
        assert (
            state.call_now("gmail_send_message", {"to": "dana@northwind.com", "subject": "x"}).outcome
            == "invalid_arguments"
        )
        assert state.call_now("gmail_list_messages", {"days_back": 10**12}).text.startswith("HTTP 500:")
        assert audit(env, SERVICE) == {"calls": [], "sent_messages": [], "drafts": []}
        assert len(state.dump()["messages"]) == 3


@pytest.mark.parametrize(
    ("records", "says"),
    [
        ({"messages": []}, "inbox.json: expected a JSON list of records, got dict"),
        ([{**INBOX[0], "date": "2026-02-27T09:15:00"}], "inbox.json: record 0 ('msg_101'): field 'date': the time"),
        (
            [INBOX[0], {k: v for k, v in INBOX[1].items() if k != "is_read"}],
            "inbox.json: record 1 ('msg_102'): missing field 'is_read'",
        ),
        ([INBOX[0], {**INBOX[1], "labels": "INBOX"}], "inbox.json: record 1 ('msg_102'): field 'labels' must be list"),
        (
            [INBOX[0], {**INBOX[1], "message_id": "msg_101"}],
            "inbox.json: record 1 ('msg_101'): message_id 'msg_101' is used twice",
        ),
        ([INBOX[0], "msg"], "inbox.json: record 1 is str, not a JSON object"),
    ],
)
def test_a_bad_fixture_is_one_error_naming_the_file_and_the_record(records: Any, says: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(says)):
        SERVICE.seed({"inbox.json": records})


def test_no_fixture_seeds_an_empty_mailbox_of_the_user() -> None:
    assert SERVICE.seed({}) == {
        "mailboxes": [{"id": "mbx_me", "address": "me@company.com", "name": "Me", "is_primary": True}],
        "messages": [],
    }


# ---------------------------------------------------------------------------------------------- the real mock
def _age(moment: str, now: datetime) -> float:
    return (now - parse_time(moment)).total_seconds()


@needs_claw_eval
def test_the_tools_answer_as_the_real_mock_and_dates_keep_their_age(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixture = tmp_path / "inbox.json"
    fixture.write_text(json.dumps(INBOX))
    mock = Mock("gmail", fixture, monkeypatch)
    with claw_env(SERVICE, fixture_of(fixture), NOW) as env:
        for record in INBOX:
            _, theirs = mock.post(ENDPOINTS["gmail_get_message"], {"message_id": record["message_id"]})
            ours = call(env, SERVICE, "gmail_get_message", {"message_id": record["message_id"]})
            assert abs(_age(theirs["date"], datetime.now(UTC)) - _age(ours["date"], parse_time(NOW))) < 120
    mock.client.post("/gmail/reset")
    with claw_env(SERVICE, fixture_of(fixture), NOW) as env:
        replay(mock, env, SERVICE, ENDPOINTS, CALLS)


@needs_claw_eval
def test_every_real_inbox_seeds_and_lists_and_reads_as_the_real_mock(monkeypatch: pytest.MonkeyPatch) -> None:
    found = real_fixtures("gmail")
    assert len(found) >= 40
    for task, path in found:
        fixtures = fixture_of(path)
        now = clock(fixtures)
        assert now is not None, task
        mock = Mock("gmail", path, monkeypatch)
        with claw_env(SERVICE, fixtures, now.isoformat()) as env:
            calls = [("gmail_list_messages", {"days_back": d, "max_results": 100}) for d in (1, 2, 3, 7, 14, 60)]
            calls += [("gmail_get_message", {"message_id": r["message_id"]}) for r in fixtures[path.name]]
            try:
                replay(mock, env, SERVICE, ENDPOINTS, calls)
            except AssertionError as exc:
                raise AssertionError(f"{task}: {exc}") from None
            assert normal(audit(env, SERVICE)) == normal(mock.audit())
