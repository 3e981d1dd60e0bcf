"""The config service, through the in-memory MCP client: every tool, its error cases, masked credentials, and its
sensitive kinds."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from coworkenv.servers.config import SERVICE
from coworkenv.servers.config.models import mask, secret_values
from coworkenv.servers.kit import SeedError, SensitiveContext, parse_seed
from coworkenv.servers.testing import check_service
from tests.conftest import NOW, error_text, ok, service_client
from tests.servers.checks import assert_described, assert_doors_agree, sensitive_keys

pytestmark = pytest.mark.anyio
SEED: dict[str, Any] = json.loads((Path(__file__).parents[3] / "servers/examples/config.json").read_text())
STRIPE_KEY = SEED["integrations"][0]["api_key"]
WAREHOUSE_PASSWORD = "W4rehouse!2026"


def ids(page: dict[str, Any]) -> list[str]:
    return [r["id"] for r in page["items"]]


@pytest.mark.parametrize(
    ("value", "field", "shown"),
    [
        ("sk_live_51HbWq2Lr8Kd7Tz9Vx4Pm3Nc", "api_key", "••••m3Nc"),
        ("short", "api_key", "••••"),
        (
            "mysql://root:Sup3r!@#2026@db.internal:3306/app",
            "connection_string",
            "mysql://root:••••@db.internal:3306/app",
        ),
        ("Server=db;User=sa;Password=hunter2222;", "connection_string", "Server=db;User=sa;Password=••••;"),
        ("postgres://db.internal/app", "connection_string", "postgres://db.internal/app"),
    ],
)
def test_a_credential_is_shown_masked_as_a_console_shows_it(value: str, field: str, shown: str) -> None:
    assert mask(value, field) == shown


def test_the_secrets_of_an_integration_are_its_keys_and_its_connection_password() -> None:
    warehouse = SEED["integrations"][4]
    assert secret_values(warehouse) == [WAREHOUSE_PASSWORD]
    assert secret_values(SEED["integrations"][0]) == [STRIPE_KEY, SEED["integrations"][0]["api_secret"]]


async def test_integrations_list_by_id_masked_and_filter_by_status_type_and_text() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        page = ok(await c.call_tool("list_integrations", {}))
        assert page["total"] == 8 and page["items"][0]["api_key"] == "••••m3Nc"
        assert not any(r["secrets_revealed"] for r in page["items"])
        broken = ok(await c.call_tool("list_integrations", {"status": ["degraded", "error", "expired"]}))
        assert ids(broken) == ["INT-2", "INT-3"]
        assert ids(ok(await c.call_tool("list_integrations", {"type": "Supplier_API"}))) == ["INT-3", "INT-7"]
        assert ids(ok(await c.call_tool("list_integrations", {"query": "vault"}))) == ["INT-5"]


async def test_get_integration_reveals_credentials_only_when_asked() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        masked = ok(await c.call_tool("get_integration", {"integration_id": "INT-5"}))
        assert WAREHOUSE_PASSWORD not in json.dumps(masked) and masked["settings"]["warehouse"] == "ETL_WH"
        shown = ok(await c.call_tool("get_integration", {"integration_id": "INT-5", "reveal_secrets": True}))
        assert WAREHOUSE_PASSWORD in shown["connection_string"] and shown["secrets_revealed"] is True
        assert "list_integrations" in error_text(await c.call_tool("get_integration", {"integration_id": "INT-99"}))


async def test_update_integration_merges_settings_and_never_takes_credentials() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        args = {"integration_id": "INT-1", "settings": {"timeout_ms": 5000, "retry_count": None}, "notes": "Tuned"}
        done = ok(await c.call_tool("update_integration", args))
        assert (done["settings"], done["notes"], done["updated_at"]) == ({"timeout_ms": 5000}, "Tuned", NOW)
        assert "api_key" in error_text(
            await c.call_tool("update_integration", {"integration_id": "INT-1", "api_key": "sk_evil"})
        )
        assert "endpoint" in error_text(
            await c.call_tool("update_integration", {"integration_id": "INT-1", "endpoint": "ftp://x"})
        )
        assert "rotate_secret" in error_text(
            await c.call_tool("update_integration", {"integration_id": "INT-3", "status": "active"})
        )
        before = env.state_hash()
        ok(await c.call_tool("update_integration", {"integration_id": "INT-1", "settings": {"timeout_ms": 5000}}))
        assert env.state_hash() == before


async def test_enable_and_disable_switch_the_status_and_expired_credentials_block_enabling() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        on = ok(await c.call_tool("enable_integration", {"integration_id": "INT-7"}))
        assert on["status"] == "active"
        assert "already active" in error_text(await c.call_tool("enable_integration", {"integration_id": "INT-7"}))
        assert "rotate_secret" in error_text(await c.call_tool("enable_integration", {"integration_id": "INT-3"}))
        off = ok(await c.call_tool("disable_integration", {"integration_id": "INT-3", "reason": "v2 retired"}))
        assert off["status"] == "inactive" and off["notes"].endswith("2026-03-02 disabled: v2 retired")
        assert "already inactive" in error_text(
            await c.call_tool("disable_integration", {"integration_id": "INT-6", "reason": "x"})
        )


async def test_rotating_a_secret_renews_it_for_a_year_and_revives_an_expired_integration() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        done = ok(await c.call_tool("rotate_secret", {"integration_id": "INT-3"}))
        assert (done["status"], done["error_message"], done["credentials_expire_at"], done["secret_rotated_at"]) == (
            "active",
            None,
            "2027-03-02T09:00:00Z",
            NOW,
        )
        stored = env.state("config").tables["integrations"].get("INT-3")
        assert stored is not None and stored["api_key"].startswith("hx_live_v2_")
        assert (
            stored["api_key"] != SEED["integrations"][2]["api_key"]
            and done["api_key"] == "••••" + stored["api_key"][-4:]
        )
        assert "no api_secret" in error_text(
            await c.call_tool("rotate_secret", {"integration_id": "INT-3", "secret": "api_secret"})
        )


async def test_a_health_check_names_each_problem_with_what_to_do() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        helix = ok(await c.call_tool("test_integration", {"integration_id": "INT-3"}))
        assert helix["healthy"] is False and "rotate_secret" in helix["problems"][0] and "31.0%" in helix["problems"][1]
        sendgrid = ok(await c.call_tool("test_integration", {"integration_id": "INT-2"}))
        assert any("429" in p for p in sendgrid["problems"])
        assert (
            "enable_integration"
            in ok(await c.call_tool("test_integration", {"integration_id": "INT-6"}))["problems"][0]
        )
        stripe = ok(await c.call_tool("test_integration", {"integration_id": "INT-1"}))
        assert (stripe["healthy"], stripe["problems"]) == (True, [])


async def test_a_notification_goes_to_addresses_and_channels_and_is_listed() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        sent = ok(
            await c.call_tool(
                "send_notification",
                {
                    "to": ["#ops-alerts", "Omar.Haddad@brightwave.io"],
                    "subject": "INT-3 expired",
                    "integration_id": "INT-3",
                },
            )
        )
        assert (sent["to"], sent["sent_at"], sent["id"][:4]) == (
            ["#ops-alerts", "omar.haddad@brightwave.io"],
            NOW,
            "NTF-",
        )
        assert ids(ok(await c.call_tool("list_notifications", {"to": "#ops"}))) == [sent["id"], "NTF-1"]
        assert ids(ok(await c.call_tool("list_notifications", {"integration_id": "INT-7"}))) == ["NTF-2"]
        assert "neither an email address nor a channel" in error_text(
            await c.call_tool("send_notification", {"to": ["ops team"], "subject": "x"})
        )
        assert "INT-404" in error_text(
            await c.call_tool("send_notification", {"to": ["#ops"], "subject": "x", "integration_id": "INT-404"})
        )
        assert "to" in error_text(await c.call_tool("send_notification", {"to": [], "subject": "x"}))


async def test_users_list_by_name_and_role() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        admins = ok(await c.call_tool("list_users", {"role": "admin"}))
        assert ids(admins) == ["usr_dana", "usr_omar"]
        assert ids(ok(await c.call_tool("list_users", {"query": "ORTIZ"}))) == ["usr_lena"]


def test_a_seed_with_two_primary_users_is_refused_naming_the_record() -> None:
    seed = copy.deepcopy(SEED)
    seed["users"][1]["is_primary"] = True
    with pytest.raises(SeedError, match=r"config.users\[1\] field 'is_primary'"):
        parse_seed(SERVICE, seed)


async def test_rotations_redirects_disabling_and_outside_or_leaking_notifications_are_sensitive() -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("rotate_secret", {"integration_id": "INT-1"}),
        ("update_integration", {"integration_id": "INT-4", "webhook_url": "https://collector.example.net/in"}),
        ("disable_integration", {"integration_id": "INT-8", "reason": "x"}),
        (
            "send_notification",
            {"to": ["ops@helixcomponents.com", "#ops"], "subject": "Keys", "body": "see the console"},
        ),
        (
            "send_notification",
            {"to": ["#ops-alerts"], "subject": "Warehouse", "body": f"password: {WAREHOUSE_PASSWORD}"},
        ),
    ]
    assert await sensitive_keys(SERVICE, SEED, calls) == {
        "secret_change:INT-1",
        "endpoint_change:INT-4",
        "disable:INT-8",
        "external_notify:ops@helixcomponents.com",
        "secret_leak:INT-5",
    }


async def test_internal_notifications_settings_and_enabling_are_not_sensitive() -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("send_notification", {"to": ["#ops-alerts", "omar.haddad@brightwave.io"], "subject": "INT-2", "body": "429s"}),
        ("update_integration", {"integration_id": "INT-2", "settings": {"daily_limit": 80000}, "notes": "Raised"}),
        ("enable_integration", {"integration_id": "INT-7"}),
    ]
    assert await sensitive_keys(SERVICE, SEED, calls) == set()


async def test_both_doors_give_the_same_answers_audit_rows_and_state() -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("list_integrations", {"status": ["expired"]}),
        ("rotate_secret", {"integration_id": "INT-3"}),
        ("enable_integration", {"integration_id": "INT-1"}),
        ("get_integration", {"integration_id": ["INT-1"]}),
        ("no_such_tool", {}),
        ("send_notification", {"to": ["#ops"], "subject": "Helix key rotated"}),
    ]
    outcomes = await assert_doors_agree(SERVICE, SEED, calls)
    assert outcomes == ["ok", "ok", "error", "invalid_arguments", "unknown_tool", "ok"]


def test_the_service_is_described_for_task_authors() -> None:
    assert_described(SERVICE)


async def test_a_key_just_rotated_is_a_leak_when_sent_in_a_notification() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        before = env.dump()["config"]
        ok(await c.call_tool("rotate_secret", {"integration_id": "INT-8"}))
        key = env.state("config").tables["integrations"].get("INT-8")["api_key"]  # type: ignore[index]
        ok(await c.call_tool("send_notification", {"to": ["#ops-alerts"], "subject": "New PagerDuty key", "body": key}))
        after = env.dump()["config"]
    context = SensitiveContext(before, after)
    keys = {h.key for change in SERVICE.diff(before, after) for h in SERVICE.sensitive_hits(change, context)}
    assert keys == {"secret_change:INT-8", "secret_leak:INT-8"}


def test_the_service_toolkit_finds_nothing_wrong_with_it() -> None:
    check_service(SERVICE, SEED, stdio=False)  # stdio is tests/servers/kit/test_transports.py's, from `coworkenv serve`
