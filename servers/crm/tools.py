"""Tools of the crm service: users, accounts and contacts. Vocabulary follows the widely used Salesforce CRM.

Opportunities and activities are in :mod:`.pipeline`; ``TOOLS`` gathers both.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from coworkenv.servers.crm import rules
from coworkenv.servers.crm.models import (
    CLOSED_STAGES,
    Account,
    AccountDetail,
    AccountPage,
    AccountStatus,
    Contact,
    ContactDetail,
    ContactPage,
    DeletedContact,
    Tier,
    User,
    UserPage,
)
from coworkenv.servers.crm.pipeline import PIPELINE_TOOLS
from coworkenv.servers.kit import Cents, PageSize, PageToken, ServiceError, ToolContext, Where, tool

Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
AccountId = Annotated[str, Field(description="The account's id. Example: 'acc_northwind'")]
ContactId = Annotated[str, Field(description="The contact's id. Example: 'con_jamie_lee'")]

# Allowed account status changes: a prospect becomes a customer (active); a customer may churn and be won back.
STATUS_MOVES: dict[str, set[str]] = {"prospect": {"active"}, "active": {"churned"}, "churned": {"active"}}
_OPEN = f"stage NOT IN ({', '.join(repr(s) for s in CLOSED_STAGES)})"


# ---------------------------------------------------------------------------------------------- users


@tool(read_only=True)
def list_users(
    ctx: ToolContext,
    query: Annotated[str | None, Field(description="Text in the name, email or title. Example: 'account'")] = None,
    include_inactive: Annotated[bool, Field(description="Also list deactivated users. Example: false")] = False,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> UserPage:
    """List our own staff (CRM users: account managers, support, finance), by name. Use it to find the id of
    an account manager before assigning an owner, or to see who someone is."""
    where = Where().text(["name", "email", "title"], query)
    if not include_inactive:
        where.raw("active = 1")
    rows, total, nxt = ctx.paginate("users", where.sql, where.params, "name, id", page_size, page_token)
    return UserPage(items=[User.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def get_user(
    ctx: ToolContext, user_id: Annotated[str, Field(description="The user's id. Example: 'usr_priya'")]
) -> User:
    """Read one CRM user (a staff member): name, email, job title and whether they are active."""
    return User.model_validate(rules.get_user(ctx, user_id))


# ---------------------------------------------------------------------------------------------- accounts


@tool(read_only=True)
def search_accounts(
    ctx: ToolContext,
    query: Annotated[str | None, Field(description="Text in the account name or domain. Example: 'northwind'")] = None,
    tier: Annotated[list[Tier] | None, Field(description="Only these tiers. Example: ['enterprise']")] = None,
    status: Annotated[list[AccountStatus] | None, Field(description="Only these statuses. Example: ['active']")] = None,
    owner_id: Annotated[
        str | None, Field(description="Only accounts managed by this user. Example: 'usr_priya'")
    ] = None,
    industry: Annotated[
        str | None, Field(description="Only this industry (case-insensitive, exact). Example: 'Healthcare'")
    ] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> AccountPage:
    """Search accounts (customer and prospect companies), by name. Filters combine (AND); omit one to not
    filter on it. Returns account records; use get_account for its contacts, open deals and manager."""
    where = (
        Where().text(["name", "domain"], query).any_of("tier", tier).any_of("status", status).eq("owner_id", owner_id)
    )
    if industry:
        where.raw("casefold(industry) = ?", industry.strip().casefold())
    rows, total, nxt = ctx.paginate("accounts", where.sql, where.params, "name, id", page_size, page_token)
    return AccountPage(items=[Account.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def get_account(ctx: ToolContext, account_id: AccountId) -> AccountDetail:
    """Read one account with its account manager (owner), all its contacts and its open opportunities.
    Use list_activities for its history and search_opportunities for closed deals."""
    row = rules.get_account(ctx, account_id)
    owner = ctx.table("users").get(row["owner_id"]) if row["owner_id"] else None
    contacts = ctx.table("contacts").select("account_id = ?", [account_id], order_by="name, id")
    opps = ctx.table("opportunities").select(f"account_id = ? AND {_OPEN}", [account_id], order_by="close_date, id")
    return AccountDetail.model_validate({**row, "owner": owner, "contacts": contacts, "open_opportunities": opps})


@tool()
def create_account(
    ctx: ToolContext,
    name: Annotated[Name, Field(description="The company name. Example: 'Stark Logistics'")],
    domain: Annotated[
        str | None, Field(description="Its bare web/email domain; must be unique. Example: 'starklogistics.com'")
    ] = None,
    industry: Annotated[str, Field(description="Industry. Example: 'Logistics'")] = "",
    tier: Annotated[Tier, Field(description="enterprise, business or starter. Example: 'business'")] = "starter",
    status: Annotated[
        Literal["prospect", "active"], Field(description="prospect (not yet a customer) or active. Example: 'prospect'")
    ] = "prospect",
    owner_id: Annotated[
        str | None, Field(description="The account manager, an active user. Example: 'usr_marco'")
    ] = None,
    annual_revenue: Annotated[
        Cents | None, Field(description="The company's annual revenue in cents (USD). Example: 250000000000")
    ] = None,
    phone: Annotated[str | None, Field(description="Main phone number. Example: '+1 415 555 0100'")] = None,
) -> Account:
    """Create an account (a company we sell to). Check with search_accounts first: a domain already used by
    another account is refused. Money is in cents."""
    row: dict[str, Any] = {"name": name, "industry": industry.strip(), "tier": tier, "status": status}
    if domain is not None:
        row["domain"] = rules.check_domain(domain)
        rules.check_domain_free(ctx, row["domain"])
    if owner_id is not None:
        row["owner_id"] = rules.check_owner(ctx, owner_id)["id"]
    if annual_revenue is not None:
        row["annual_revenue"] = annual_revenue
    now = ctx.now_iso()
    row.update(id=ctx.new_id("accounts"), phone=phone, created_at=now, updated_at=now)
    return Account.model_validate(ctx.table("accounts").insert(row))


def _status_change(ctx: ToolContext, row: dict[str, Any], status: str) -> None:
    allowed = STATUS_MOVES[row["status"]]
    if status not in allowed:
        raise ServiceError(
            f"Cannot change account {row['id']} from {row['status']!r} to {status!r}.",
            f"Allowed next statuses: {', '.join(sorted(allowed))}.",
        )
    if status == "churned":
        open_opps = ctx.table("opportunities").select(f"account_id = ? AND {_OPEN}", [row["id"]])
        if open_opps:
            ids = ", ".join(o["id"] for o in open_opps)
            raise ServiceError(
                f"Account {row['id']} still has open opportunities ({ids}).",
                "Close them first with update_opportunity (stage 'closed_lost' and a loss_reason), then mark it churned.",
            )


@tool(destructive=True, idempotent=True)
def update_account(
    ctx: ToolContext,
    account_id: AccountId,
    name: Annotated[Name | None, Field(description="New company name. Example: 'Northwind Traders Ltd'")] = None,
    domain: Annotated[str | None, Field(description="New unique domain. Example: 'northwind.co.uk'")] = None,
    industry: Annotated[str | None, Field(description="New industry. Example: 'Retail'")] = None,
    tier: Annotated[Tier | None, Field(description="New tier. Example: 'enterprise'")] = None,
    status: Annotated[AccountStatus | None, Field(description="New status. Example: 'churned'")] = None,
    owner_id: Annotated[str | None, Field(description="New account manager. Example: 'usr_marco'")] = None,
    transfer_open_opportunities: Annotated[
        bool,
        Field(description="With owner_id: also give the account's open opportunities to the new owner. Example: true"),
    ] = False,
    annual_revenue: Annotated[Cents | None, Field(description="Annual revenue in cents. Example: 90000000000")] = None,
    phone: Annotated[str | None, Field(description="New main phone. Example: '+1 206 555 0142'")] = None,
) -> Account:
    """Change an account's fields; omitted fields stay as they are. Status moves: prospect → active,
    active → churned (only once it has no open opportunities), churned → active; nothing returns to prospect.
    Changing owner_id reassigns the account manager."""
    row = rules.get_account(ctx, account_id)
    if domain is not None:
        domain = rules.check_domain(domain)
        rules.check_domain_free(ctx, domain, account_id)
    if owner_id is not None:
        rules.check_owner(ctx, owner_id)
    values: dict[str, Any] = {"name": name, "domain": domain, "tier": tier, "status": status, "owner_id": owner_id}
    values.update(industry=None if industry is None else industry.strip(), annual_revenue=annual_revenue, phone=phone)
    changes = rules.changes_of(row, values)
    if "status" in changes:
        _status_change(ctx, row, changes["status"])
    if owner_id is not None and transfer_open_opportunities:
        opps = ctx.table("opportunities").select(
            f"account_id = ? AND {_OPEN} AND owner_id IS NOT ?", [account_id, owner_id]
        )
        for opp in opps:
            ctx.table("opportunities").update(opp["id"], {"owner_id": owner_id, "updated_at": ctx.now_iso()})
    if not changes:
        return Account.model_validate(row)
    return Account.model_validate(ctx.table("accounts").update(account_id, {**changes, "updated_at": ctx.now_iso()}))


# ---------------------------------------------------------------------------------------------- contacts


@tool(read_only=True)
def search_contacts(
    ctx: ToolContext,
    query: Annotated[str | None, Field(description="Text in the name, email or title. Example: 'jamie'")] = None,
    account_id: Annotated[
        str | None, Field(description="Only contacts of this account. Example: 'acc_northwind'")
    ] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> ContactPage:
    """Search contacts (the people at our accounts), by name. Use it to find who to talk to at a company,
    or which account a person or email address belongs to."""
    where = Where().text(["name", "email", "title"], query).eq("account_id", account_id)
    rows, total, nxt = ctx.paginate("contacts", where.sql, where.params, "name, id", page_size, page_token)
    return ContactPage(items=[Contact.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def get_contact(ctx: ToolContext, contact_id: ContactId) -> ContactDetail:
    """Read one contact with the account (company) they belong to."""
    row = rules.get_contact(ctx, contact_id)
    return ContactDetail.model_validate({**row, "account": rules.get_account(ctx, row["account_id"])})


@tool()
def create_contact(
    ctx: ToolContext,
    account_id: AccountId,
    name: Annotated[Name, Field(description="Full name. Example: 'Paula Wong'")],
    email: Annotated[
        str | None, Field(description="Email address; unique. Example: 'paula.wong@northwind.com'")
    ] = None,
    title: Annotated[str, Field(description="Job title. Example: 'VP Operations'")] = "",
    phone: Annotated[str | None, Field(description="Phone number. Example: '+1 206 555 0199'")] = None,
) -> Contact:
    """Add a contact (a person) to an account. An email address already used by another contact is refused:
    find that contact with search_contacts instead."""
    rules.get_account(ctx, account_id)
    if email is not None:
        email = rules.check_email(email)
        rules.check_contact_email_free(ctx, email)
    now = ctx.now_iso()
    row = {"id": ctx.new_id("contacts"), "account_id": account_id, "name": name, "email": email}
    row.update(title=title.strip(), phone=phone, created_at=now, updated_at=now)
    return Contact.model_validate(ctx.table("contacts").insert(row))


@tool(destructive=True, idempotent=True)
def update_contact(
    ctx: ToolContext,
    contact_id: ContactId,
    name: Annotated[Name | None, Field(description="New full name. Example: 'Jamie Lee-Park'")] = None,
    email: Annotated[str | None, Field(description="New unique email. Example: 'jamie@northwind.com'")] = None,
    title: Annotated[str | None, Field(description="New job title. Example: 'CFO'")] = None,
    phone: Annotated[str | None, Field(description="New phone. Example: '+1 206 555 0123'")] = None,
    account_id: Annotated[
        str | None, Field(description="Move the contact to another account. Example: 'acc_globex'")
    ] = None,
) -> Contact:
    """Change a contact's fields; omitted fields stay as they are. Give account_id to move the person to
    another account (their logged activities stay with the old account)."""
    row = rules.get_contact(ctx, contact_id)
    if email is not None:
        email = rules.check_email(email)
        rules.check_contact_email_free(ctx, email, contact_id)
    if account_id is not None:
        rules.get_account(ctx, account_id)
    values = {"name": name, "email": email, "title": None if title is None else title.strip(), "phone": phone}
    changes = rules.changes_of(row, {**values, "account_id": account_id})
    if not changes:
        return Contact.model_validate(row)
    return Contact.model_validate(ctx.table("contacts").update(contact_id, {**changes, "updated_at": ctx.now_iso()}))


@tool(destructive=True, idempotent=True)
def delete_contact(ctx: ToolContext, contact_id: ContactId) -> DeletedContact:
    """Delete a contact permanently (e.g. a duplicate or someone who asked to be forgotten). Activities logged
    on them stay in the account's history, no longer linked to the person. This cannot be undone."""
    rules.get_contact(ctx, contact_id)
    linked = ctx.table("activities").select("contact_id = ?", [contact_id])
    for act in linked:
        ctx.table("activities").update(act["id"], {"contact_id": None})
    ctx.table("contacts").delete(contact_id)
    return DeletedContact(id=contact_id, deleted=True, activities_unlinked=len(linked))


TOOLS = (
    list_users,
    get_user,
    search_accounts,
    get_account,
    create_account,
    update_account,
    search_contacts,
    get_contact,
    create_contact,
    update_contact,
    delete_contact,
    *PIPELINE_TOOLS,
)
