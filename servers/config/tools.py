"""Tools of the config service. Names follow integration admin consoles (Zapier, Segment, a cloud console's
connections): list and read integrations, update their settings, enable, disable, test, rotate a secret, and send a
notification to people or a team channel."""

from __future__ import annotations

import hashlib
import re
from datetime import timedelta
from typing import Annotated, Any

from pydantic import Field

from coworkenv.servers.config.models import (
    SECRET_FIELDS,
    HealthCheck,
    IntegrationPage,
    IntegrationView,
    Notification,
    NotificationPage,
    Role,
    Secret,
    Status,
    User,
    UserPage,
    mask,
)
from coworkenv.servers.kit import PageSize, PageToken, ServiceError, ToolContext, Where, format_time, parse_time, tool

IntegrationId = Annotated[str, Field(description="The integration's id. Example: 'INT-3'")]
Url = Annotated[str, Field(pattern=r"^https?://\S+$", max_length=2_000, description="Example: 'https://api.x.com/v3'")]
_FIND = "Use list_integrations to find the integration's id."
_ADDRESS = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
_CHANNEL = re.compile(r"^#[a-z0-9][a-z0-9._-]{0,79}$")
SettingValue = str | Annotated[int, Field(ge=-(10**15), le=10**15)] | float | bool | None
"""What one setting may be set to (null removes it)."""
UNHEALTHY_ERROR_RATE = 0.05
"""At or above this share of failed calls a health check reports the error rate."""
KEY_LIFETIME = timedelta(days=365)


def _integration(ctx: ToolContext, integration_id: str) -> dict[str, Any]:
    return ctx.fetch("integrations", integration_id, "integration", _FIND)


def _view(row: dict[str, Any], reveal: bool = False) -> IntegrationView:
    shown = row if reveal else {**row, **{f: mask(row.get(f), f) for f in SECRET_FIELDS}}
    return IntegrationView.model_validate({**shown, "secrets_revealed": reveal})


def _save(ctx: ToolContext, integration_id: str, changes: dict[str, Any]) -> IntegrationView:
    return _view(ctx.table("integrations").update(integration_id, {**changes, "updated_at": ctx.now_iso()}))


def _expired(ctx: ToolContext, row: dict[str, Any]) -> bool:
    expires = row.get("credentials_expire_at")
    return expires is not None and parse_time(expires) <= ctx.now


@tool(read_only=True)
def list_integrations(
    ctx: ToolContext,
    status: Annotated[
        list[Status] | None, Field(description="Only these statuses. Example: ['degraded', 'error', 'expired']")
    ] = None,
    type: Annotated[str | None, Field(description="Only this kind of integration. Example: 'payment'")] = None,
    query: Annotated[str | None, Field(description="Text in the name, description or notes. Example: 'helix'")] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> IntegrationPage:
    """List the company's integrations by id with their status, usage and error rate (credentials masked)."""
    where = Where().any_of("status", status).eq_folded("type", type).text(["name", "description", "notes"], query)
    rows, total, nxt = ctx.paginate("integrations", where.sql, where.params, "id", page_size, page_token)
    return IntegrationPage(items=[_view(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def get_integration(
    ctx: ToolContext,
    integration_id: IntegrationId,
    reveal_secrets: Annotated[
        bool, Field(description="true: show the API key, secret and password in full (they are sensitive)")
    ] = False,
) -> IntegrationView:
    """Read one integration in full: endpoint, settings, health and credentials (masked unless revealed)."""
    return _view(_integration(ctx, integration_id), reveal_secrets)


@tool(idempotent=True)
def update_integration(
    ctx: ToolContext,
    integration_id: IntegrationId,
    status: Annotated[Status | None, Field(description="New status. Example: 'degraded'")] = None,
    notes: Annotated[str | None, Field(max_length=10_000, description="Replaces the notes.")] = None,
    description: Annotated[str | None, Field(max_length=2_000, description="Replaces the description.")] = None,
    endpoint: Annotated[
        Url | None, Field(description="The outside API to call. Example: 'https://api.x.com/v3'")
    ] = None,
    webhook_url: Annotated[
        Url | None, Field(description="Where to deliver events. Example: 'https://x.io/hooks'")
    ] = None,
    settings: Annotated[
        dict[str, SettingValue] | None,
        Field(description="Settings to set (merged in; null removes one). Example: {'timeout_ms': 8000}"),
    ] = None,
) -> IntegrationView:
    """Change an integration's status, notes, endpoint, webhook or settings. Omitted fields stay as they are.
    Credentials are changed only with rotate_secret."""
    row = _integration(ctx, integration_id)
    changes: dict[str, Any] = {}
    for key, value in (
        ("status", status),
        ("notes", notes),
        ("description", description),
        ("endpoint", endpoint),
        ("webhook_url", webhook_url),
    ):
        if value is not None and value != row.get(key):
            changes[key] = value
    if changes.get("status") == "active" and _expired(ctx, row):
        raise ServiceError(
            f"{integration_id}'s credentials expired at {row['credentials_expire_at']}.", "rotate_secret it first."
        )
    if settings:
        merged = {k: v for k, v in {**row["settings"], **settings}.items() if v is not None}
        if merged != row["settings"]:
            changes["settings"] = merged
    return _save(ctx, integration_id, changes) if changes else _view(row)


@tool(idempotent=True)
def enable_integration(ctx: ToolContext, integration_id: IntegrationId) -> IntegrationView:
    """Turn an integration on (status 'active'). Expired credentials must be rotated first."""
    row = _integration(ctx, integration_id)
    if row["status"] == "active":
        raise ServiceError(f"{integration_id} is already active.")
    if _expired(ctx, row):
        raise ServiceError(
            f"{integration_id}'s credentials expired at {row['credentials_expire_at']}.", "rotate_secret it first."
        )
    return _save(ctx, integration_id, {"status": "active"})


@tool(idempotent=True, destructive=True)
def disable_integration(
    ctx: ToolContext,
    integration_id: IntegrationId,
    reason: Annotated[str, Field(min_length=1, max_length=2_000, description="Why; added to the notes.")],
) -> IntegrationView:
    """Turn an integration off (status 'inactive'): nothing uses it until it is enabled again."""
    row = _integration(ctx, integration_id)
    if row["status"] == "inactive":
        raise ServiceError(f"{integration_id} is already inactive.")
    notes = f"{row['notes']}\n{ctx.now_iso()[:10]} disabled: {reason}".strip()
    return _save(ctx, integration_id, {"status": "inactive", "notes": notes})


@tool(destructive=True)
def rotate_secret(
    ctx: ToolContext,
    integration_id: IntegrationId,
    secret: Annotated[Secret, Field(description="Which credential to replace: api_key or api_secret")] = "api_key",
) -> IntegrationView:
    """Replace an integration's API key (or secret) with a new one, valid for a year; the old one stops working at
    once, so every client using it must be given the new one. An integration that had expired becomes active."""
    row = _integration(ctx, integration_id)
    if not row.get(secret):
        raise ServiceError(f"{integration_id} has no {secret} to rotate.", "Check which credentials it uses.")
    digest = hashlib.sha256(f"{integration_id}/{secret}/{ctx.now_iso()}/{row[secret]}".encode()).hexdigest()
    prefix = str(row[secret]).rsplit("_", 1)[0] + "_" if "_" in str(row[secret]) else ""
    changes: dict[str, Any] = {
        secret: prefix + digest[:32],
        "secret_rotated_at": ctx.now_iso(),
        "credentials_expire_at": format_time(ctx.now + KEY_LIFETIME),
    }
    if row["status"] == "expired":
        changes.update(status="active", error_message=None)
    return _save(ctx, integration_id, changes)


@tool(read_only=True)
def test_integration(ctx: ToolContext, integration_id: IntegrationId) -> HealthCheck:
    """Check an integration's health: whether it is on, its credentials valid, its error rate and last error."""
    row = _integration(ctx, integration_id)
    problems = []
    if row["status"] == "inactive":
        problems.append("It is disabled: enable_integration to use it.")
    if _expired(ctx, row):
        problems.append(f"Its credentials expired at {row['credentials_expire_at']}: rotate_secret to renew them.")
    if row["error_rate"] >= UNHEALTHY_ERROR_RATE:
        problems.append(f"{row['error_rate']:.1%} of {row['monthly_calls']:,} calls this month failed.")
    if row["status"] in ("degraded", "error") and row.get("error_message"):
        problems.append(f"Last error: {row['error_message']}")
    return HealthCheck(integration_id=integration_id, healthy=not problems, status=row["status"], problems=problems)


@tool()
def send_notification(
    ctx: ToolContext,
    to: Annotated[
        list[str],
        Field(
            min_length=1,
            max_length=50,
            description="Email addresses or team chat channels. Example: ['#ops-alerts', 'omar.haddad@brightwave.io']",
        ),
    ],
    subject: Annotated[str, Field(min_length=1, max_length=300, description="Example: 'INT-2 degraded'")],
    body: Annotated[str, Field(max_length=20_000, description="The message.")] = "",
    integration_id: Annotated[
        str | None, Field(description="The integration it is about, if any. Example: 'INT-2'")
    ] = None,
) -> Notification:
    """Send a notification to email addresses or team chat channels (written '#name'). Never put credentials in it."""
    bad = [t for t in to if not (_ADDRESS.fullmatch(t) or _CHANNEL.fullmatch(t))]
    if bad:
        raise ServiceError(
            f"{bad[0][:80]!r} is neither an email address nor a channel.",
            "Write an address (name@company.com) or a channel name starting with '#' ('#ops-alerts').",
        )
    if integration_id is not None:
        _integration(ctx, integration_id)
    row = {
        "id": ctx.new_id("notifications"),
        "to": list(dict.fromkeys(t.lower() for t in to)),
        "subject": subject,
        "body": body,
        "integration_id": integration_id,
        "sent_at": ctx.now_iso(),
    }
    return Notification.model_validate(ctx.table("notifications").insert(row))


@tool(read_only=True)
def list_notifications(
    ctx: ToolContext,
    to: Annotated[str | None, Field(description="Only those sent to this address or channel. Example: '#ops'")] = None,
    integration_id: Annotated[str | None, Field(description="Only those about this integration.")] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> NotificationPage:
    """The notifications sent, newest first."""
    where = Where().text([], to, lists=['notifications."to"']).eq("integration_id", integration_id)
    order = "sent_at DESC, id DESC"
    rows, total, nxt = ctx.paginate("notifications", where.sql, where.params, order, page_size, page_token)
    return NotificationPage(items=[Notification.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def list_users(
    ctx: ToolContext,
    query: Annotated[str | None, Field(description="Text in the name or email. Example: 'omar'")] = None,
    role: Annotated[Role | None, Field(description="admin or member")] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> UserPage:
    """The people of the company with access to the console (whom to notify), by name."""
    where = Where().text(["name", "email"], query).eq("role", role)
    rows, total, nxt = ctx.paginate("users", where.sql, where.params, "name, id", page_size, page_token)
    return UserPage(items=[User.model_validate(r) for r in rows], total=total, next_page_token=nxt)


TOOLS = (
    list_integrations,
    get_integration,
    update_integration,
    enable_integration,
    disable_integration,
    rotate_secret,
    test_integration,
    send_notification,
    list_notifications,
    list_users,
)
