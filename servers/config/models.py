"""Records of the config service (an integrations admin console: the company's connections to outside services, their
credentials and health, and the notifications sent about them).

An integration's credentials (``api_key``, ``api_secret``, the password in ``connection_string``) are stored whole;
tools show them masked unless asked to reveal them. ``error_rate`` is a fraction of
the month's calls (0.12 is 12 %).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field

from coworkenv.servers.kit import Page, Record, SeedError, Table, Timestamp

Status = Literal["active", "inactive", "degraded", "error", "expired"]
Secret = Literal["api_key", "api_secret"]
Role = Literal["admin", "member"]
SECRET_FIELDS: tuple[str, ...] = ("api_key", "api_secret", "connection_string")
MASK = "••••"
_PASSWORD = re.compile(r"(?i)(://[^:/@\s]+:)(\S+)(@[^@\s/]+)|((?:password|pwd)=)([^;&\s]+)")


def _lower(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


Email = Annotated[str, BeforeValidator(_lower), Field(pattern=r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$", max_length=254)]


class User(Record):
    """A member of the company with access to the console; ``is_primary`` is the person the agent works for."""

    id: str = Field(description="The user's id. Example: 'usr_omar'")
    email: Email = Field(description="Example: 'omar.haddad@brightwave.io'")
    name: str = Field(min_length=1, description="Example: 'Omar Haddad'")
    role: Role = "member"
    is_primary: bool = Field(default=False, description="The user the tools act for: the person the agent works for")


class Integration(Record):
    """A connection to an outside service: where it points, its credentials, its settings and its health."""

    id: str = Field(description="The integration's id. Example: 'INT-3'")
    name: str = Field(min_length=1, description="Example: 'Helix Components supplier API'")
    type: str = Field(description="What kind of service. Example: 'payment', 'email', 'supplier_api', 'webhook'")
    status: Status = "active"
    description: str = ""
    endpoint: str | None = Field(default=None, description="The outside API it calls. Example: 'https://api.x.com/v2'")
    webhook_url: str | None = Field(default=None, description="Where it delivers events. Example: 'https://…/hooks'")
    api_key: str | None = None
    api_secret: str | None = None
    connection_string: str | None = Field(default=None, description="For databases; its password is a secret.")
    settings: dict[str, Any] = Field(default={}, description="Other settings. Example: {'timeout_ms': 5000}")
    monthly_calls: int = Field(default=0, ge=0, description="Calls made over the last 30 days. Example: 182000")
    error_rate: float = Field(default=0.0, ge=0, le=1, description="Share of those calls that failed. Example: 0.12")
    error_message: str | None = Field(default=None, description="The last error seen. Example: '401 Unauthorized'")
    credentials_expire_at: Timestamp | None = Field(default=None, description="When the credentials stop working.")
    last_verified_at: Timestamp | None = None
    secret_rotated_at: Timestamp | None = None
    notes: str = ""
    custom_fields: dict[str, Any] = Field(default={}, description="Other attributes as the source system keeps them.")
    updated_at: Timestamp | None = None


class Notification(Record):
    """A notification sent from the console: to addresses or team chat channels."""

    id: str = Field(description="The notification's id. Example: 'NTF-2'")
    to: list[str] = Field(description="Addresses or channels. Example: ['#ops-alerts', 'omar.haddad@brightwave.io']")
    subject: str
    body: str = ""
    integration_id: str | None = Field(default=None, description="The integration it is about. Example: 'INT-2'")
    sent_at: Timestamp
    custom_fields: dict[str, Any] = Field(default={}, description="Other attributes as the source system keeps them.")


TABLES = (
    Table("users", User, "usr_", indexes=(("email",),)),
    Table("integrations", Integration, "INT-", indexes=(("status",),), volatile=("updated_at",)),
    Table(
        "notifications",
        Notification,
        "NTF-",
        indexes=(("sent_at",),),
        refs=(("integration_id", "integrations"),),
    ),
)


def check_seed(seed: dict[str, list[dict[str, Any]]]) -> None:
    """Rules across records: unique user emails and at most one primary user."""
    emails: set[str] = set()
    primary = 0
    for index, user in enumerate(seed.get("users", [])):
        if user["email"] in emails:
            raise SeedError(f"config.users[{index}] field 'email': {user['email']!r} is already a user")
        emails.add(user["email"])
        primary += bool(user["is_primary"])
        if primary > 1:
            raise SeedError(f"config.users[{index}] field 'is_primary': only one user can be the primary user")


def secret_values(integration: dict[str, Any]) -> list[str]:
    """The credentials an integration holds, as text that must not be sent anywhere: its key and secret and the
    password of its connection string (each of 6 characters or more)."""
    found = [str(integration.get(f) or "") for f in ("api_key", "api_secret")]
    for match in _PASSWORD.finditer(str(integration.get("connection_string") or "")):
        found.append(match.group(2) or match.group(5) or "")
    return [s for s in found if len(s) >= 6]


def mask(value: str | None, field: str) -> str | None:
    """A credential as a console shows it: the last 4 characters of a key or secret; a connection string with its
    password hidden."""
    if not value:
        return value
    if field == "connection_string":
        return _PASSWORD.sub(
            lambda m: f"{m.group(1)}{MASK}{m.group(3)}" if m.group(1) else f"{m.group(4)}{MASK}", value
        )
    return MASK + value[-4:] if len(value) > 8 else MASK


class IntegrationView(Integration):
    secrets_revealed: bool = Field(description="False: api_key, api_secret and the connection_string password masked.")


class IntegrationPage(Page[IntegrationView]):
    pass


class NotificationPage(Page[Notification]):
    pass


class UserPage(Page[User]):
    pass


class HealthCheck(BaseModel):
    integration_id: str
    healthy: bool = Field(description="True when no problem was found.")
    status: Status
    problems: list[str] = Field(description="What is wrong, each with what to do. Empty when healthy.")
