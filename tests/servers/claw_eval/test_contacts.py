"""Claw-Eval's contacts tools on our crm service: the directory seeds as the contacts of one account with their ids,
the tools answer as its mock does, a message sent is an activity on the person, and ``/audit`` is rebuilt from our
audit log; beside Claw-Eval's crm on the same service."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from coworkenv.servers.claw_eval.contacts import DIRECTORY, ENDPOINTS, SERVICE
from tests.servers.claw_eval.gmail_calendar_crm_fixtures import crm_env, real_fixtures
from tests.servers.claw_eval.ops_parity import Mock, audit, call, claw_env, fixture_of, needs_claw_eval, replay

PEOPLE: list[dict[str, Any]] = [
    {
        "contact_id": "CON-001",
        "name": "张伟",
        "department": "技术部",
        "title": "后端工程师",
        "email": "zhangwei@company.com",
        "phone": "138-0000-0001",
        "location": "北京",
        "notes": "负责支付系统",
    },
    {
        "contact_id": "CON-002",
        "name": "张伟",
        "email": "zhangwei2@company.com",
        "phone": "138-0000-0002",
        "department": "市场部",
        "title": "市场经理",
        "responsibilities": ["品牌", "活动"],
    },
    {
        "contact_id": "c_003",
        "name": "Li Hua",
        "department": "Engineering",
        "title": "SRE",
        "email": "lihua@company.com",
        "phone": "",
    },
]
FIXTURES = {"contacts.json": PEOPLE}
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("contacts_search", {"query": "张伟"}),
    ("contacts_search", {"query": "张", "department": "技术"}),
    ("contacts_search", {"query": "", "department": ""}),
    ("contacts_search", {"query": "li hua"}),
    ("contacts_search", {"department": "技术部"}),
    ("contacts_get", {"contact_id": "CON-002"}),
    ("contacts_get", {"contact_id": "CON-404"}),
    ("contacts_send_message", {"contact_id": "c_003", "message": "The build is red."}),
    ("contacts_send_message", {"contact_id": "CON-404", "message": "Hello?"}),
    ("contacts_send_message", {"contact_id": "c_003"}),
]


def test_the_directory_seeds_as_contacts_of_one_account_with_their_ids() -> None:
    seed = SERVICE.seed(FIXTURES)
    assert [a["id"] for a in seed["accounts"]] == [DIRECTORY]
    rows = {c["id"]: c for c in seed["contacts"]}
    assert list(rows) == ["CON-001", "CON-002", "c_003"] and {c["account_id"] for c in rows.values()} == {DIRECTORY}
    assert (rows["CON-001"]["email"], rows["CON-001"]["title"]) == ("zhangwei@company.com", "后端工程师")
    assert rows["CON-001"]["custom_fields"] == {"department": "技术部", "location": "北京", "notes": "负责支付系统"}
    assert rows["CON-002"]["custom_fields"] == {"department": "市场部", "responsibilities": ["品牌", "活动"]}


def test_a_person_reads_back_exactly_and_search_matches_the_name_and_department_as_written() -> None:
    with claw_env(SERVICE, FIXTURES) as env:
        for person in PEOPLE:
            assert call(env, SERVICE, "contacts_get", {"contact_id": person["contact_id"]}) == person
        assert call(env, SERVICE, "contacts_get", {"contact_id": "X"}) == {"error": "Contact X not found"}
        assert call(env, SERVICE, "contacts_search", {"query": "张伟"}) == {"contacts": PEOPLE[:2], "total": 2}
        tech = call(env, SERVICE, "contacts_search", {"query": "张", "department": "技术"})
        assert tech == {"contacts": [PEOPLE[0]], "total": 1}
        assert call(env, SERVICE, "contacts_search", {"query": "li hua"})["total"] == 0  # case as written
        assert call(env, SERVICE, "contacts_search", {"query": ""})["total"] == 3


def test_a_message_sent_is_an_activity_on_the_person_and_in_the_audit() -> None:
    with claw_env(SERVICE, FIXTURES) as env:
        sent = call(env, SERVICE, "contacts_send_message", {"contact_id": "c_003", "message": "The build is red."})
        record = {"contact_id": "c_003", "message": "The build is red.", "timestamp": "2026-03-02T09:00:00+00:00"}
        assert sent == {"status": "sent", "record": record}
        unknown = call(env, SERVICE, "contacts_send_message", {"contact_id": "nobody", "message": "Hi"})
        assert unknown["status"] == "sent"  # the mock takes any id
        (activity,) = env.state("crm").dump()["activities"]
        assert (activity["contact_id"], activity["account_id"], activity["body"]) == (
            "c_003",
            DIRECTORY,
            "The build is red.",
        )
        assert activity["subject"] == "Message to Li Hua" and activity["type"] == "email"
        found = audit(env, SERVICE)
        assert found["sent_messages"] == [record, unknown["record"]]
        assert [c["endpoint"] for c in found["calls"]] == ["/contacts/send_message"] * 2


def test_the_directory_and_the_customers_share_our_crm_service_apart() -> None:
    customers = {
        "customers.json": [
            {
                "customer_id": "CUS-001",
                "name": "Acme",
                "contact_person": "Li Hua",
                "tier": "vip",
                "status": "active",
                "industry": "Retail",
                "annual_revenue": 5000000,
            }
        ]
    }
    with crm_env(FIXTURES, customers) as env:
        state = env.state("crm")
        listed = state.call_now("crm_list_customers", {}).data
        assert listed is not None and [c["customer_id"] for c in listed["customers"]] == ["CUS-001"]
        assert state.call_now("crm_get_customer", {"customer_id": DIRECTORY}).data == {
            "error": f"Customer {DIRECTORY} not found"
        }
        assert state.call_now("contacts_get", {"contact_id": "CUS-001"}).data == {"error": "Contact CUS-001 not found"}
        found = state.call_now("contacts_search", {"query": "Li Hua"}).data
        assert found is not None and found["total"] == 1


@pytest.mark.parametrize(
    ("records", "says"),
    [
        (
            [{k: v for k, v in PEOPLE[0].items() if k != "department"}],
            "contacts.json: record 0 ('CON-001'): missing field 'department'",
        ),
        (
            [PEOPLE[0], {**PEOPLE[1], "phone": 13800000002}],
            "contacts.json: record 1 ('CON-002'): field 'phone' must be str",
        ),
        (
            [PEOPLE[0], {**PEOPLE[1], "contact_id": "CON-001"}],
            "contacts.json: record 1 ('CON-001'): contact_id 'CON-001' is used twice",
        ),
        ([PEOPLE[0], {**PEOPLE[1], "contact_id": ""}], "contacts.json: record 1: field 'contact_id' is empty"),
    ],
)
def test_a_bad_fixture_is_one_error_naming_the_file_and_the_record(records: Any, says: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(says)):
        SERVICE.seed({"contacts.json": records})


@needs_claw_eval
def test_the_tools_answer_as_the_real_mock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fixture = tmp_path / "contacts.json"
    fixture.write_text(json.dumps(PEOPLE, ensure_ascii=False))
    with claw_env(SERVICE, fixture_of(fixture)) as env:
        replay(Mock("contacts", fixture, monkeypatch), env, SERVICE, ENDPOINTS, CALLS)


@needs_claw_eval
def test_every_real_directory_seeds_and_searches_and_reads_as_the_real_mock(monkeypatch: pytest.MonkeyPatch) -> None:
    found = real_fixtures("contacts")
    assert len(found) >= 29
    for task, path in found:
        fixtures = fixture_of(path)
        records = fixtures[path.name]
        calls = [("contacts_get", {"contact_id": r["contact_id"]}) for r in records]
        calls += [("contacts_search", {"query": r["name"][:1]}) for r in records]
        calls += [("contacts_search", {"query": "", "department": r["department"]}) for r in records[:3]]
        calls.append(("contacts_send_message", {"contact_id": records[0]["contact_id"], "message": "hi"}))
        with claw_env(SERVICE, fixtures) as env:
            try:
                replay(Mock("contacts", path, monkeypatch), env, SERVICE, ENDPOINTS, calls)
            except AssertionError as exc:
                raise AssertionError(f"{task}: {exc}") from None
