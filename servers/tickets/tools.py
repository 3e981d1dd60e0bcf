"""Tools of the tickets service. Names and vocabulary follow the widely used Zendesk-style helpdesk."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from coworkenv.servers.kit import (
    PageSize,
    PageToken,
    ServiceError,
    Timestamp,
    ToolContext,
    Where,
    tool,
)
from coworkenv.servers.kit.members import named_member
from coworkenv.servers.tickets.models import (
    Comment,
    Organization,
    OrganizationPage,
    Priority,
    Status,
    Ticket,
    TicketDetail,
    TicketPage,
    TicketType,
    User,
    UserPage,
)

TicketId = Annotated[str, Field(description="The ticket's id. Example: 'tkt_4821'")]

# Allowed status changes: a helpdesk's usual life cycle. Closed tickets are final; nothing goes back to new.
TRANSITIONS: dict[str, set[str]] = {
    "new": {"open", "pending", "hold", "solved"},
    "open": {"pending", "hold", "solved"},
    "pending": {"open", "hold", "solved"},
    "hold": {"open", "pending", "solved"},
    "solved": {"open", "closed"},
    "closed": set(),
}


def _ticket(ctx: ToolContext, ticket_id: str) -> dict[str, Any]:
    return ctx.fetch("tickets", ticket_id, "ticket", "Use search_tickets to find the ticket's id.")


def _check_user(ctx: ToolContext, user_id: str, what: str) -> dict[str, Any]:
    return ctx.fetch("users", user_id, "user", f"Use search_users to find the {what}'s id.")


def _touch(ctx: ToolContext, ticket_id: str, changes: dict[str, Any]) -> Ticket:
    row = ctx.table("tickets").update(ticket_id, {**changes, "updated_at": ctx.now_iso()})
    return Ticket.model_validate(row)


@tool(read_only=True)
def search_tickets(
    ctx: ToolContext,
    query: Annotated[str | None, Field(description="Text to find in subject or description. Example: 'refund'")] = None,
    status: Annotated[list[Status] | None, Field(description="Only these statuses. Example: ['new', 'open']")] = None,
    priority: Annotated[
        list[Priority] | None, Field(description="Only these priorities. Example: ['high', 'urgent']")
    ] = None,
    organization_id: Annotated[
        str | None, Field(description="Only tickets of this organization. Example: 'org_acme'")
    ] = None,
    requester_id: Annotated[
        str | None, Field(description="Only tickets from this requester. Example: 'usr_jlee'")
    ] = None,
    assignee_id: Annotated[
        str | None, Field(description="Only tickets assigned to this agent. Example: 'usr_agent1'")
    ] = None,
    tag: Annotated[str | None, Field(description="Only tickets carrying this tag. Example: 'billing'")] = None,
    created_after: Annotated[
        Timestamp | None, Field(description="Created at or after this time. Example: '2026-03-01T00:00:00Z'")
    ] = None,
    created_before: Annotated[
        Timestamp | None, Field(description="Created before this time. Example: '2026-02-28T09:00:00Z'")
    ] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> TicketPage:
    """Search and filter helpdesk tickets, oldest first. All filters combine (AND); omit one to not filter on it.
    Returns ticket summaries; use get_ticket for the comments."""
    where = (
        Where()
        .text(["subject", "description"], query)
        .any_of("status", status)
        .any_of("priority", priority)
        .eq("organization_id", organization_id)
        .eq("requester_id", requester_id)
        .eq("assignee_id", assignee_id)
        .has_tag("tickets.tags", tag)
        .gte("created_at", created_after)
        .lt("created_at", created_before)
    )
    rows, total, nxt = ctx.paginate("tickets", where.sql, where.params, "created_at, id", page_size, page_token)
    return TicketPage(items=[Ticket.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def get_ticket(ctx: ToolContext, ticket_id: TicketId) -> TicketDetail:
    """Read one ticket with its whole conversation (public replies and internal notes)."""
    row = _ticket(ctx, ticket_id)
    comments = ctx.table("comments").select("ticket_id = ?", [ticket_id], order_by="created_at, id")
    return TicketDetail.model_validate({**row, "comments": comments})


@tool()
def create_ticket(
    ctx: ToolContext,
    subject: Annotated[
        str, Field(min_length=1, max_length=300, description="One-line summary. Example: 'Cannot log in'")
    ],
    description: Annotated[str, Field(min_length=1, description="The first message of the ticket.")],
    requester_id: Annotated[str, Field(description="The user who asks for help. Example: 'usr_jlee'")],
    priority: Annotated[Priority, Field(description="low, normal, high or urgent")] = "normal",
    type: Annotated[TicketType, Field(description="question, incident, problem or task")] = "question",
    tags: Annotated[list[str], Field(description="Tags to set. Example: ['billing']")] = [],  # noqa: B006
) -> Ticket:
    """Open a new ticket on behalf of a requester. The ticket starts with status 'new'."""
    requester = _check_user(ctx, requester_id, "requester")
    now = ctx.now_iso()
    ticket_id = ctx.new_id("tickets")
    row = ctx.table("tickets").insert(
        {
            "id": ticket_id,
            "subject": subject,
            "description": description,
            "requester_id": requester_id,
            "organization_id": requester.get("organization_id"),
            "status": "new",
            "priority": priority,
            "type": type,
            "tags": sorted(set(tags)),
            "created_at": now,
            "updated_at": now,
        }
    )
    return Ticket.model_validate(row)


@tool(idempotent=True, destructive=True)
def update_ticket(
    ctx: ToolContext,
    ticket_id: TicketId,
    status: Annotated[Status | None, Field(description="New status. Example: 'pending'")] = None,
    priority: Annotated[Priority | None, Field(description="New priority. Example: 'high'")] = None,
    type: Annotated[TicketType | None, Field(description="New type. Example: 'incident'")] = None,
    subject: Annotated[str | None, Field(min_length=1, max_length=300, description="New subject")] = None,
    add_tags: Annotated[list[str], Field(description="Tags to add. Example: ['vip']")] = [],  # noqa: B006
    remove_tags: Annotated[list[str], Field(description="Tags to remove. Example: ['spam']")] = [],  # noqa: B006
) -> Ticket:
    """Change a ticket's fields. Status must follow the life cycle: new → open/pending/hold/solved,
    solved → open or closed; closed tickets cannot change and nothing returns to new."""
    row = _ticket(ctx, ticket_id)
    if row["status"] == "closed":
        raise ServiceError(f"Ticket {ticket_id} is closed and cannot be changed.", "Create a follow-up ticket instead.")
    changes: dict[str, Any] = {}
    if status is not None and status != row["status"]:
        allowed = TRANSITIONS[row["status"]]
        if status not in allowed:
            raise ServiceError(
                f"Cannot change ticket {ticket_id} from {row['status']!r} to {status!r}.",
                f"Allowed next statuses: {', '.join(sorted(allowed))}.",
            )
        changes["status"] = status
    for key, value in (("priority", priority), ("type", type), ("subject", subject)):
        if value is not None:
            changes[key] = value
    if add_tags or remove_tags:
        changes["tags"] = sorted((set(row["tags"]) | set(add_tags)) - set(remove_tags))
    if not changes:
        return Ticket.model_validate(row)
    return _touch(ctx, ticket_id, changes)


@tool()
def add_comment(
    ctx: ToolContext,
    ticket_id: TicketId,
    body: Annotated[str, Field(min_length=1, description="The text of the comment.")],
    public: Annotated[
        bool, Field(description="true: a reply the requester sees; false: an internal note for agents only")
    ] = True,
) -> Comment:
    """Add a public reply or an internal note to a ticket, written by you (the current agent). A public reply to a
    'new' ticket opens it."""
    row = _ticket(ctx, ticket_id)
    if row["status"] == "closed":
        raise ServiceError(f"Ticket {ticket_id} is closed; comments cannot be added.", "Create a follow-up ticket.")
    author = named_member(ctx)  # None: the acting agent; only the Python API names another member
    comment = ctx.table("comments").insert(
        {
            "id": ctx.new_id("comments"),
            "ticket_id": ticket_id,
            "author_id": author["id"] if author else None,
            "body": body,
            "public": public,
            "created_at": ctx.now_iso(),
        }
    )
    _touch(ctx, ticket_id, {"status": "open"} if public and row["status"] == "new" else {})
    return Comment.model_validate(comment)


@tool(idempotent=True, destructive=True)
def assign_ticket(
    ctx: ToolContext,
    ticket_id: TicketId,
    assignee_id: Annotated[str, Field(description="The agent to assign. Example: 'usr_agent1'")],
) -> Ticket:
    """Assign a ticket to a helpdesk agent (a user whose role is agent or admin). A new ticket becomes open."""
    row = _ticket(ctx, ticket_id)
    if row["status"] == "closed":
        raise ServiceError(f"Ticket {ticket_id} is closed and cannot be reassigned.")
    user = _check_user(ctx, assignee_id, "agent")
    if user["role"] == "end-user":
        raise ServiceError(
            f"{assignee_id} is an end-user, not an agent.", "Assign to a user whose role is agent or admin."
        )
    changes: dict[str, Any] = {"assignee_id": assignee_id}
    if row["status"] == "new":
        changes["status"] = "open"
    return _touch(ctx, ticket_id, changes)


@tool(destructive=True)
def escalate_ticket(
    ctx: ToolContext,
    ticket_id: TicketId,
    reason: Annotated[str, Field(min_length=1, description="Why it needs escalation; kept as an internal note.")],
) -> Ticket:
    """Escalate a ticket: marks it escalated, raises priority to urgent, tags it 'escalated' and records the
    reason as an internal note. Solved or closed tickets cannot be escalated."""
    row = _ticket(ctx, ticket_id)
    if row["status"] in ("solved", "closed"):
        raise ServiceError(
            f"Ticket {ticket_id} is {row['status']} and cannot be escalated.", "Reopen it first if it is solved."
        )
    if row["escalated"]:
        raise ServiceError(f"Ticket {ticket_id} is already escalated.")
    ctx.table("comments").insert(
        {
            "id": ctx.new_id("comments"),
            "ticket_id": ticket_id,
            "body": f"Escalated: {reason}",
            "public": False,
            "created_at": ctx.now_iso(),
        }
    )
    changes = {"escalated": True, "priority": "urgent", "tags": sorted(set(row["tags"]) | {"escalated"})}
    if row["status"] == "new":
        changes["status"] = "open"
    return _touch(ctx, ticket_id, changes)


@tool(read_only=True)
def list_organizations(
    ctx: ToolContext,
    query: Annotated[str | None, Field(description="Text in the name or domain. Example: 'northwind'")] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> OrganizationPage:
    """List the organizations (customer companies) of the helpdesk, by name."""
    where = Where().text(["name", "domain"], query)
    rows, total, nxt = ctx.paginate("organizations", where.sql, where.params, "name, id", page_size, page_token)
    return OrganizationPage(items=[Organization.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def get_organization(
    ctx: ToolContext,
    organization_id: Annotated[str, Field(description="The organization's id. Example: 'org_acme'")],
) -> Organization:
    """Read one organization: name, email domain and tags."""
    row = ctx.fetch("organizations", organization_id, "organization", "Use list_organizations to find it.")
    return Organization.model_validate(row)


@tool(read_only=True)
def search_users(
    ctx: ToolContext,
    query: Annotated[str | None, Field(description="Text in the name or email. Example: 'lee@'")] = None,
    role: Annotated[str | None, Field(description="end-user, agent or admin")] = None,
    organization_id: Annotated[str | None, Field(description="Only people of this organization")] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> UserPage:
    """Find helpdesk users: requesters (end-users) and agents."""
    where = Where().text(["name", "email"], query).eq("role", role).eq("organization_id", organization_id)
    rows, total, nxt = ctx.paginate("users", where.sql, where.params, "name, id", page_size, page_token)
    return UserPage(items=[User.model_validate(r) for r in rows], total=total, next_page_token=nxt)


TOOLS = (
    search_tickets,
    get_ticket,
    create_ticket,
    update_ticket,
    add_comment,
    assign_ticket,
    escalate_ticket,
    list_organizations,
    get_organization,
    search_users,
)
