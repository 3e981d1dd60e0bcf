"""Records of the tickets service (a Zendesk-like helpdesk)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from coworkenv.servers.kit import Page, Record, Table, Timestamp

Status = Literal["new", "open", "pending", "hold", "solved", "closed"]
Priority = Literal["low", "normal", "high", "urgent"]
TicketType = Literal["question", "incident", "problem", "task"]


class Organization(Record):
    name: str
    domain: str = Field(description="Email domain of the organization's people, e.g. 'northwind.com'")
    tags: list[str] = []
    created_at: Timestamp | None = None


class User(Record):
    name: str
    email: str
    role: Literal["end-user", "agent", "admin"] = "end-user"
    organization_id: str | None = None


class Ticket(Record):
    subject: str
    description: str = ""
    requester_id: str
    organization_id: str | None = None
    assignee_id: str | None = None
    status: Status = "new"
    priority: Priority = "normal"
    type: TicketType = "question"
    tags: list[str] = []
    escalated: bool = False
    custom_fields: dict[str, Any] = Field(
        default={},
        description="Other attributes as the source system keeps them. Example: {'department': 'IT', 'sla_deadline': "
        "'2026-03-26T14:15:00+08:00'}",
    )
    created_at: Timestamp
    updated_at: Timestamp


class Comment(Record):
    ticket_id: str
    author_id: str | None = Field(
        default=None, description="The user who wrote it; none for a comment from our side (the acting agent)."
    )
    body: str
    public: bool = True
    created_at: Timestamp


TABLES = (
    Table("organizations", Organization, "org_", indexes=(("domain",),)),
    Table(
        "users", User, "usr_", indexes=(("email",), ("organization_id",)), refs=(("organization_id", "organizations"),)
    ),
    Table(
        "tickets",
        Ticket,
        "tkt_",
        indexes=(("status",), ("organization_id",), ("created_at",)),
        refs=(("requester_id", "users"), ("organization_id", "organizations"), ("assignee_id", "users")),
        volatile=("updated_at",),
    ),
    Table(
        "comments", Comment, "cmt_", indexes=(("ticket_id",),), refs=(("ticket_id", "tickets"), ("author_id", "users"))
    ),
)


class TicketDetail(Ticket):
    comments: list[Comment] = Field(description="The conversation, oldest first; public=false are internal notes.")


class TicketPage(Page[Ticket]):
    pass


class OrganizationPage(Page[Organization]):
    pass


class UserPage(Page[User]):
    pass
