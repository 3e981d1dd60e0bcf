"""Claw-Eval's ``config`` mock on our ``config`` service: list and read integrations, update one's status or notes,
send a notification.

Its fixtures are one list of integrations (``integrations.json``) keyed by ``integration_id``; ``service`` is our
``type``, ``config`` our ``settings``, ``last_verified`` our ``last_verified_at``, ``base_url`` or ``endpoint`` our
``endpoint``. Some files give ``error_rate`` as a fraction (0.15), others in per cent (12.0, 100): a file with any
rate above 1 is read in per cent (our column holds the fraction; the figure as written stays in ``custom_fields``).
``credentials_expired`` (a flag; ours is a time) and other keys stay in ``custom_fields``. As in Claw-Eval, reading
one integration returns its credentials unmasked: the safety checks of its tasks are about what the agent does with
them. Notifications go to our ``notifications``. The mock never moves its dates.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Annotated, Any

from pydantic import Field

from coworkenv.servers.claw_eval import ClawService, Fixtures, SeedTables
from coworkenv.servers.claw_eval._fixture_layout import (
    Column,
    Layout,
    audit_calls,
    checked,
    fixture_list,
    in_order,
    next_position,
    time_column,
    unique,
)
from coworkenv.servers.claw_eval.common import ClawHTTPError, ClawJson
from coworkenv.servers.config.models import Integration, Notification
from coworkenv.servers.kit.context import ToolContext
from coworkenv.servers.kit.tool import ToolSpec, tool

INTEGRATIONS = Layout(
    Integration,
    "integration_id",
    {
        "name": Column("name"),
        "service": Column("type"),
        "status": Column("status"),
        "description": Column("description"),
        "endpoint": Column("endpoint"),
        "base_url": Column("endpoint"),
        "webhook_url": Column("webhook_url"),
        "api_key": Column("api_key"),
        "api_secret": Column("api_secret"),
        "connection_string": Column("connection_string"),
        "config": Column("settings"),
        "monthly_calls": Column("monthly_calls"),
        "error_rate": Column("error_rate"),
        "error_message": Column("error_message"),
        "last_verified": time_column("last_verified_at"),
        "notes": Column("notes"),
    },
    fallback={"type": ""},
)
"""An integration of the mock in our ``integrations`` (its ``name`` defaults to its id)."""


def _addresses(value: Any) -> list[str]:
    if not isinstance(value, str):
        raise TypeError("not text")
    return [part.strip() for part in value.split(",") if part.strip()]


NOTIFICATIONS = Layout(
    Notification,
    None,
    {
        "to": Column("to", _addresses, ", ".join),
        "subject": Column("subject"),
        "body": Column("body"),
        "timestamp": time_column("sent_at"),
    },
    fallback={"to": [], "subject": ""},
)
"""A notification of the mock (``{to, subject, body, timestamp}``) in our ``notifications``."""

ENDPOINTS = {
    "config_list_integrations": "/config/integrations",
    "config_get_integration": "/config/integrations/get",
    "config_update_integration": "/config/integrations/update",
    "config_send_notification": "/config/notify",
}
IGNORED = {"config_list_integrations": ("type",)}
"""Arguments a task's tool declares that the mock's request model has not (it drops them)."""
_LISTED = ("integration_id", "name", "service", "status", "last_verified", "monthly_calls", "error_rate")

IntegrationId = Annotated[str, Field(description="The integration's id. Example: 'INT-001'")]


def list_integrations(
    ctx: ToolContext,
    status: Annotated[str | None, Field(description="Only integrations of this status. Example: 'degraded'")] = None,
    type: Annotated[str | None, Field(description="Accepted and not used: the list is not filtered on it.")] = None,
) -> ClawJson:
    """List the integrations (without their credentials): service, status, when last verified, calls this month and
    error rate. Returns {integrations, total}."""
    found = []
    try:
        for row in in_order(ctx.table("integrations").select()):
            integration = INTEGRATIONS.claw(row)
            if status and integration["status"] != status:
                continue
            found.append({k: integration[k] for k in _LISTED})
    except KeyError:  # an integration without a key the mock's list reads
        raise ClawHTTPError(500, "Internal Server Error") from None
    return ClawJson.of({"integrations": found, "total": len(found)})


def get_integration(ctx: ToolContext, integration_id: IntegrationId) -> ClawJson:
    """One integration in full, its credentials included. Returns the integration, or {error}."""
    row = ctx.table("integrations").get(integration_id)
    if row is None:
        return ClawJson.of({"error": f"Integration {integration_id} not found"})
    return ClawJson.of(INTEGRATIONS.claw(row))


def update_integration(
    ctx: ToolContext,
    integration_id: IntegrationId,
    status: Annotated[str | None, Field(description="The new status. Example: 'inactive'")] = None,
    notes: Annotated[str | None, Field(max_length=100_000, description="The new notes (replacing them).")] = None,
) -> ClawJson:
    """Change an integration's status or notes (an empty or left-out value keeps it). Returns {status: 'updated',
    integration}, or {error}."""
    row = ctx.table("integrations").get(integration_id)
    if row is None:
        return ClawJson.of({"error": f"Integration {integration_id} not found"})
    values = {k: v for k, v in {"status": status, "notes": notes}.items() if v}
    if not values:  # the mock answers with the integration as it is
        return ClawJson.of({"status": "updated", "integration": INTEGRATIONS.claw(row)})
    changes = INTEGRATIONS.put(row, values)
    changes["updated_at"] = ctx.now_iso()
    updated = ctx.table("integrations").update(integration_id, changes)
    return ClawJson.of({"status": "updated", "integration": INTEGRATIONS.claw(updated)})


def send_notification(
    ctx: ToolContext,
    to: Annotated[str, Field(max_length=1_000, description="Who to notify. Example: 'ops-team@company.com'")],
    subject: Annotated[str, Field(description="Example: 'Twilio integration degraded'")],
    body: Annotated[str, Field(description="The message.")],
) -> ClawJson:
    """Send a notification about the integrations to a person or team. Returns {status: 'sent', notification}."""
    notification = {"to": to, "subject": subject, "body": body, "timestamp": ctx.now_iso()}
    table = ctx.table("notifications")
    record_id = ctx.new_id("notifications")
    table.insert(NOTIFICATIONS.row(notification, next_position(table.select()), record_id=record_id))
    return ClawJson.of({"status": "sent", "notification": notification})


TOOLS: tuple[ToolSpec, ...] = (
    tool(read_only=True, name="config_list_integrations")(list_integrations),
    tool(read_only=True, name="config_get_integration")(get_integration),
    tool(idempotent=True, name="config_update_integration")(update_integration),
    tool(name="config_send_notification")(send_notification),
)


def _per_cent(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError("not a number")
    return value / 100


def seed(fixtures: Fixtures) -> SeedTables:
    """The mock's integrations as our ``integrations``, ids kept; ValueError naming the file and record when bad."""
    name, records = fixture_list(fixtures, "config")
    rates = [r.get("error_rate") for r in records]
    per_cent = any(isinstance(v, int | float) and not isinstance(v, bool) and v > 1 for v in rates)
    layout = INTEGRATIONS
    if per_cent:
        layout = replace(INTEGRATIONS, columns={**INTEGRATIONS.columns, "error_rate": Column("error_rate", _per_cent)})
    rows = []
    for index, record in enumerate(records):
        where = f"config fixture {name}: record {index}"
        try:
            row = layout.row(record, index)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        row.setdefault("name", row["id"])
        rows.append(checked(Integration, row, f"{where} ({row['id']})"))
    unique(rows, f"config fixture {name}")
    return {"integrations": rows}


def _updates(rows: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    spec = TOOLS[2]
    found = []
    for row in rows:
        result = row["result"]
        if row["tool"] != spec.name or row["outcome"] != "ok" or not isinstance(result, dict):
            continue
        if "integration" in result:
            request = spec.args_model.model_validate(row["arguments"] or {}).model_dump(mode="json")
            changes = {k: v for k, v in request.items() if v is not None}
            found.append(
                {"integration_id": request["integration_id"], "changes": changes, "timestamp": row["sim_time"]}
            )
    return found


def audit_data(tables: Mapping[str, list[dict[str, Any]]], rows: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The mock's ``/audit``: ``{calls, updates, notifications}``."""
    notifications = [NOTIFICATIONS.claw(row) for row in in_order(tables.get("notifications", []))]
    return {
        "calls": audit_calls(rows, TOOLS, ENDPOINTS, IGNORED),
        "updates": _updates(rows),
        "notifications": notifications,
    }


SERVICE = ClawService("config", "config", TOOLS, seed, audit_data)
