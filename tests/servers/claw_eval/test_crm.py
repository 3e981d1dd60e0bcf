"""Claw-Eval's crm tools on our crm service: the customers seed as accounts with their ids (revenue in cents, tier and
status in our vocabulary, Claw-Eval's own values kept), the tools answer as its mock does, an exported report is a
note on each customer it covers, and ``/audit`` is rebuilt from our audit log."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from coworkenv.servers.claw_eval.contacts import DIRECTORY
from coworkenv.servers.claw_eval.crm import ENDPOINTS, SERVICE
from tests.servers.claw_eval.gmail_calendar_crm_fixtures import crm_env, real_fixtures
from tests.servers.claw_eval.ops_parity import Mock, audit, call, claw_env, fixture_of, needs_claw_eval, replay

CUSTOMERS: list[dict[str, Any]] = [
    {
        "customer_id": "CUS-001",
        "name": "鼎信科技",
        "contact_person": "周总",
        "email": "zhou@dingxin.com",
        "phone": "010-8888-0001",
        "industry": "科技",
        "tier": "vip",
        "annual_revenue": 5000000,
        "last_contact_date": "2026-03-20",
        "status": "active",
        "notes": "续约谈判中",
    },
    {
        "customer_id": "CUS-002",
        "name": "Hanhai Logistics",
        "tier": "VIP",
        "status": "suspended",
        "industry": "物流",
        "annual_revenue": 1200000,
        "contract_end": "2026-06-30",
        "notes": "",
        "contact_person": "Lin Na",
    },
    {
        "customer_id": "SUP-003",
        "name": "Qianfeng Trading",
        "contact_person": "Wang Lei",
        "industry": "Trading",
        "tier": "standard",
        "annual_revenue": 800000,
        "status": "churned",
        "satisfaction": 3.5,
        "phone": None,
    },
]
FIXTURES = {"customers.json": CUSTOMERS}
LISTED = ("customer_id", "name", "contact_person", "tier", "status", "industry", "annual_revenue")
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("crm_list_customers", {}),
    ("crm_list_customers", {"tier": "vip"}),
    ("crm_list_customers", {"tier": "VIP", "status": ""}),
    ("crm_list_customers", {"status": "churned", "industry": "Trading"}),
    ("crm_list_customers", {"industry": "物"}),
    ("crm_get_customer", {"customer_id": "SUP-003"}),
    ("crm_get_customer", {"customer_id": "CUS-009"}),
    ("crm_get_customer", {}),
    ("crm_export_report", {"title": "VIP", "customer_ids": ["CUS-001", "CUS-002", "CUS-009"], "summary": "Two VIPs."}),
    ("crm_export_report", {"title": "VIP", "customer_ids": "CUS-001", "summary": "x"}),
]


def listed(customer: dict[str, Any]) -> dict[str, Any]:
    return {k: customer[k] for k in LISTED}


def test_the_customers_seed_as_accounts_with_their_ids_keeping_claw_evals_own_values() -> None:
    rows = {a["id"]: a for a in SERVICE.seed(FIXTURES)["accounts"]}
    assert list(rows) == ["CUS-001", "CUS-002", "SUP-003"]
    dingxin, hanhai, qianfeng = rows["CUS-001"], rows["CUS-002"], rows["SUP-003"]
    assert (dingxin["tier"], dingxin["status"], dingxin["annual_revenue"], dingxin["phone"]) == (
        "enterprise",
        "active",
        500_000_000,
        "010-8888-0001",
    )
    assert dingxin["custom_fields"] == {
        "contact_person": "周总",
        "email": "zhou@dingxin.com",
        "tier": "vip",
        "last_contact_date": "2026-03-20",
        "notes": "续约谈判中",
    }
    assert (hanhai["tier"], hanhai["status"]) == ("enterprise", "active")
    assert {k: hanhai["custom_fields"][k] for k in ("tier", "status")} == {"tier": "VIP", "status": "suspended"}
    assert (qianfeng["tier"], qianfeng["status"], qianfeng["phone"]) == ("business", "churned", None)
    assert qianfeng["custom_fields"] == {
        "contact_person": "Wang Lei",
        "tier": "standard",
        "satisfaction": 3.5,
        "phone": None,
    }


def test_a_customer_reads_back_exactly_and_lists_filter_on_claw_evals_values_as_written() -> None:
    with claw_env(SERVICE, FIXTURES) as env:
        for customer in CUSTOMERS:
            assert call(env, SERVICE, "crm_get_customer", {"customer_id": customer["customer_id"]}) == customer
        assert call(env, SERVICE, "crm_get_customer", {"customer_id": "X"}) == {"error": "Customer X not found"}
        everyone = call(env, SERVICE, "crm_list_customers")
        assert everyone == {"customers": [listed(c) for c in CUSTOMERS], "total": 3}
        assert call(env, SERVICE, "crm_list_customers", {"tier": "vip"})["customers"] == [listed(CUSTOMERS[0])]
        assert (
            call(env, SERVICE, "crm_list_customers", {"tier": "VIP", "status": ""})["total"] == 1
        )  # "" filters nothing
        assert call(env, SERVICE, "crm_list_customers", {"status": "suspended"})["customers"] == [listed(CUSTOMERS[1])]
        assert call(env, SERVICE, "crm_list_customers", {"industry": "物"})["total"] == 0  # exactly, not a part


def test_an_exported_report_is_a_note_on_each_customer_it_covers_and_in_the_audit() -> None:
    with claw_env(SERVICE, FIXTURES) as env:
        args = {"title": "VIP report", "customer_ids": ["CUS-001", "CUS-002", "CUS-001", "CUS-404"], "summary": "Two."}
        answer = call(env, SERVICE, "crm_export_report", args)
        report = {**args, "timestamp": "2026-03-02T09:00:00+00:00"}
        assert answer == {"status": "exported", "report": report}
        notes = env.state("crm").dump()["activities"]
        assert sorted(n["account_id"] for n in notes) == ["CUS-001", "CUS-002"]
        assert {(n["type"], n["subject"], n["body"]) for n in notes} == {("note", "VIP report", "Two.")}
        found = audit(env, SERVICE)
        assert found["exported_reports"] == [report]
        assert found["calls"] == [
            {"endpoint": "/crm/export", "request_body": args, "response_body": answer, "timestamp": report["timestamp"]}
        ]


@pytest.mark.parametrize(
    ("records", "says"),
    [
        (
            [{k: v for k, v in CUSTOMERS[0].items() if k != "tier"}],
            "customers.json: record 0 ('CUS-001'): missing field 'tier'",
        ),
        (
            [CUSTOMERS[0], {**CUSTOMERS[1], "name": None}],
            "customers.json: record 1 ('CUS-002'): field 'name' must be str",
        ),
        ([{**CUSTOMERS[0], "customer_id": DIRECTORY}], f"customers.json: record 0 ('{DIRECTORY}'): '{DIRECTORY}' is"),
        ([CUSTOMERS[0], CUSTOMERS[0]], "customers.json: record 1 ('CUS-001'): customer_id 'CUS-001' is used twice"),
    ],
)
def test_a_bad_fixture_is_one_error_naming_the_file_and_the_record(records: Any, says: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(says)):
        SERVICE.seed({"customers.json": records})


@needs_claw_eval
def test_the_tools_answer_as_the_real_mock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fixture = tmp_path / "customers.json"
    fixture.write_text(json.dumps(CUSTOMERS, ensure_ascii=False))
    with claw_env(SERVICE, fixture_of(fixture)) as env:
        replay(Mock("crm", fixture, monkeypatch), env, SERVICE, ENDPOINTS, CALLS)


@needs_claw_eval
def test_every_real_customer_list_seeds_and_lists_and_reads_as_the_real_mock(monkeypatch: pytest.MonkeyPatch) -> None:
    found = real_fixtures("crm")
    assert len(found) >= 30
    for task, path in found:
        fixtures = fixture_of(path)
        records = fixtures[path.name]
        calls: list[tuple[str, dict[str, Any]]] = [("crm_list_customers", {})]
        for key in ("status", "tier", "industry"):
            calls += [("crm_list_customers", {key: v}) for v in sorted({str(r[key]) for r in records})]
        calls += [("crm_get_customer", {"customer_id": r["customer_id"]}) for r in records]
        ids = [r["customer_id"] for r in records[:2]]
        calls.append(("crm_export_report", {"title": "t", "customer_ids": ids, "summary": "s"}))
        with claw_env(SERVICE, fixtures) as env:
            try:
                replay(Mock("crm", path, monkeypatch), env, SERVICE, ENDPOINTS, calls)
            except AssertionError as exc:
                raise AssertionError(f"{task}: {exc}") from None


@needs_claw_eval
def test_every_real_task_with_contacts_and_crm_seeds_both_on_one_crm_service() -> None:
    directories = dict(real_fixtures("contacts"))
    both = [(task, directories[task], path) for task, path in real_fixtures("crm") if task in directories]
    assert both
    for task, people, customers in both:
        with crm_env(fixture_of(people), fixture_of(customers)) as env:
            state = env.state("crm")
            listed = state.call_now("crm_list_customers", {}).data
            searched = state.call_now("contacts_search", {"query": ""}).data
            assert listed is not None and searched is not None, task
            assert listed["total"] == len(json.loads(customers.read_text())), task
            assert searched["total"] == len(json.loads(people.read_text())), task
