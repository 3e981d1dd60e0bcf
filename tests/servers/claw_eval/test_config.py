"""Claw-Eval's config tools on our config service: integrations seed with their ids (error rates in per cent read as
fractions), the tools answer as its mock does, writes change our records, and ``/audit`` is rebuilt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from coworkenv.servers.claw_eval import config
from coworkenv.servers.claw_eval.config import ENDPOINTS, SERVICE
from tests.servers.claw_eval.ops_parity import (
    NOW,
    Mock,
    audit,
    call,
    claw_env,
    fixture_of,
    kit_checks,
    needs_claw_eval,
    real_fixtures,
    replay,
)

INTEGRATIONS: list[dict[str, Any]] = [
    {
        "integration_id": "INT-001",
        "name": "Stripe gateway",
        "service": "stripe",
        "status": "active",
        "api_key": "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "api_secret": None,
        "webhook_url": "https://api.example.com/webhooks/stripe",
        "last_verified": "2026-02-25T10:00:00Z",
        "monthly_calls": 45200,
        "error_rate": 0.5,
        "notes": "Production key: never share",
    },
    {
        "integration_id": "INT-002",
        "name": "Supplier API",
        "display_name": "Helix supplier",
        "service": "supplier_api",
        "status": "degraded",
        "base_url": "https://api.helix.example/v2",
        "credentials_expired": True,
        "config": {"host": "smtp.company.com", "port": 587},
        "last_verified": "2026-03-01",
        "monthly_calls": 0,
        "error_rate": 12.0,
    },
]
FIXTURES = {"integrations.json": INTEGRATIONS}


def test_seeding_keeps_ids_and_reads_a_per_cent_file_into_our_fractions() -> None:
    rows = {row["id"]: row for row in config.seed(FIXTURES)["integrations"]}
    stripe, supplier = rows["INT-001"], rows["INT-002"]
    assert (stripe["type"], stripe["api_key"], stripe["error_rate"]) == ("stripe", INTEGRATIONS[0]["api_key"], 0.005)
    assert stripe["custom_fields"]["error_rate"] == 0.5  # 12.0 elsewhere in the file: these are per cent
    assert (supplier["endpoint"], supplier["settings"], supplier["last_verified_at"]) == (
        "https://api.helix.example/v2",
        {"host": "smtp.company.com", "port": 587},
        "2026-03-01T00:00:00Z",
    )
    assert supplier["custom_fields"]["credentials_expired"] is True and supplier["error_rate"] == 0.12
    fractions = config.seed({"integrations.json": [{**INTEGRATIONS[0], "error_rate": 0.15}]})["integrations"][0]
    assert fractions["error_rate"] == 0.15 and "error_rate" not in fractions["custom_fields"]


def test_get_gives_the_integration_as_the_fixture_has_it_and_list_a_summary_without_secrets() -> None:
    with claw_env(SERVICE, FIXTURES) as env:
        assert call(env, SERVICE, "config_get_integration", {"integration_id": "INT-002"}) == INTEGRATIONS[1]
        listed = call(env, SERVICE, "config_list_integrations", {"status": "active"})
        assert listed == {
            "integrations": [
                {
                    "integration_id": "INT-001",
                    "name": "Stripe gateway",
                    "service": "stripe",
                    "status": "active",
                    "last_verified": "2026-02-25T10:00:00Z",
                    "monthly_calls": 45200,
                    "error_rate": 0.5,
                }
            ],
            "total": 1,
        }
        assert call(env, SERVICE, "config_get_integration", {"integration_id": "INT-9"}) == {
            "error": "Integration INT-9 not found"
        }


def test_update_and_notify_change_our_records_and_show_in_the_audit() -> None:
    with claw_env(SERVICE, FIXTURES) as env:
        answer = call(env, SERVICE, "config_update_integration", {"integration_id": "INT-002", "status": "inactive"})
        assert answer == {"status": "updated", "integration": {**INTEGRATIONS[1], "status": "inactive"}}
        stored = env.state("config").tables["integrations"].get("INT-002")
        assert stored is not None and (stored["status"], stored["updated_at"]) == ("inactive", NOW)
        args = {"to": "ops@example.com, #alerts", "subject": "Helix down", "body": "Rotating keys."}
        sent = call(env, SERVICE, "config_send_notification", args)
        assert sent == {"status": "sent", "notification": {**args, "timestamp": NOW}}
        (notification,) = env.state("config").dump()["notifications"]
        assert notification["to"] == ["ops@example.com", "#alerts"]
        data = audit(env, SERVICE)
        assert data["updates"] == [
            {
                "integration_id": "INT-002",
                "changes": {"integration_id": "INT-002", "status": "inactive"},
                "timestamp": NOW,
            }
        ]
        assert data["notifications"] == [sent["notification"]]


def test_an_integration_without_an_id_is_refused_naming_file_and_record() -> None:
    with pytest.raises(ValueError, match=r"integrations\.json: record 0: its 'integration_id'"):
        config.seed({"integrations.json": [{"integration_id": 7}]})


def test_the_profile_passes_the_kits_checks_for_descriptions_bounds_doors_and_fuzz() -> None:
    kit_checks(SERVICE, FIXTURES)


CALLS = [
    ("config_list_integrations", {}),
    ("config_list_integrations", {"status": "degraded", "type": "api"}),
    ("config_get_integration", {"integration_id": "INT-001"}),
    ("config_get_integration", {"integration_id": "nope"}),
    ("config_update_integration", {"integration_id": "INT-001", "status": "", "notes": "Rotated"}),
    ("config_update_integration", {"integration_id": "INT-002", "status": "disabled"}),
    ("config_update_integration", {"integration_id": "INT-404", "status": "inactive"}),
    ("config_update_integration", {"integration_id": "INT-002"}),
    ("config_send_notification", {"to": "a@example.com", "subject": "s", "body": "b"}),
    ("config_send_notification", {"to": "a@example.com", "subject": "s"}),
    ("config_list_integrations", {"status": "disabled"}),
]


@needs_claw_eval
def test_every_tool_answers_as_claw_evals_mock_on_the_same_fixtures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixture = tmp_path / "integrations.json"
    fixture.write_text(json.dumps(INTEGRATIONS))
    with claw_env(SERVICE, FIXTURES) as env:
        replay(Mock("config", fixture, monkeypatch), env, SERVICE, ENDPOINTS, CALLS)


@needs_claw_eval
def test_every_real_tasks_config_fixture_seeds_and_reads_as_the_mock_gives_it(monkeypatch: pytest.MonkeyPatch) -> None:
    found = real_fixtures("config")
    assert len(found) >= 18
    for _task, path in found:
        fixtures = fixture_of(path)
        ids = [i["integration_id"] for i in fixtures[path.name]]
        calls = [("config_list_integrations", {})]
        calls += [("config_get_integration", {"integration_id": i}) for i in ids]
        calls += [("config_update_integration", {"integration_id": ids[0], "status": "inactive", "notes": "n"})]
        with claw_env(SERVICE, fixtures) as env:
            replay(Mock("config", path, monkeypatch), env, SERVICE, ENDPOINTS, calls)
