"""Tools of the crm service: the sales pipeline (opportunities) and the activity history."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, StringConstraints

from coworkenv.servers.crm import rules
from coworkenv.servers.crm.models import (
    CLOSED_STAGES,
    PROBABILITY,
    Activity,
    ActivityPage,
    ActivityType,
    OpenStage,
    Opportunity,
    OpportunityDetail,
    OpportunityPage,
    Stage,
)
from coworkenv.servers.kit import Cents, PageSize, PageToken, ServiceError, ToolContext, Where, tool
from coworkenv.servers.kit.members import named_member

OpportunityId = Annotated[str, Field(description="The opportunity's id. Example: 'opp_northwind_renewal'")]
Amount = Annotated[Cents, Field(description="Deal value in cents (USD); $48,000.00 is 4800000. Example: 4800000")]
Day = Annotated[str, Field(description="A calendar date, YYYY-MM-DD. Example: '2026-04-30'")]
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=300)]


# ---------------------------------------------------------------------------------------------- opportunities


@tool(read_only=True)
def search_opportunities(
    ctx: ToolContext,
    query: Annotated[str | None, Field(description="Text in the opportunity name. Example: 'renewal'")] = None,
    account_id: Annotated[str | None, Field(description="Only this account's deals. Example: 'acc_globex'")] = None,
    owner_id: Annotated[str | None, Field(description="Only deals owned by this user. Example: 'usr_marco'")] = None,
    stage: Annotated[list[Stage] | None, Field(description="Only these stages. Example: ['proposal']")] = None,
    is_open: Annotated[
        bool | None, Field(description="true: only open deals; false: only closed ones. Example: true")
    ] = None,
    close_after: Annotated[str | None, Field(description="close_date on or after. Example: '2026-03-01'")] = None,
    close_before: Annotated[str | None, Field(description="close_date before. Example: '2026-04-01'")] = None,
    min_amount: Annotated[Cents | None, Field(description="amount at least this many cents. Example: 1000000")] = None,
    max_amount: Annotated[Cents | None, Field(description="amount at most this many cents. Example: 5000000")] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> OpportunityPage:
    """Search opportunities (deals in the sales pipeline), soonest close date first. Filters combine (AND);
    omit one to not filter on it. Amounts are in cents."""
    where = Where().text(["name"], query).eq("account_id", account_id).eq("owner_id", owner_id).any_of("stage", stage)
    if is_open is not None:
        where.raw(f"stage {'NOT ' if is_open else ''}IN (?, ?)", *CLOSED_STAGES)
    where.gte("close_date", close_after and rules.check_date(close_after, "close_after"))
    where.lt("close_date", close_before and rules.check_date(close_before, "close_before"))
    where.gte("amount", min_amount).lte("amount", max_amount)
    rows, total, nxt = ctx.paginate("opportunities", where.sql, where.params, "close_date, id", page_size, page_token)
    return OpportunityPage(items=[Opportunity.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def get_opportunity(ctx: ToolContext, opportunity_id: OpportunityId) -> OpportunityDetail:
    """Read one opportunity with its account, its owner and the activities logged on it (newest first)."""
    row = rules.get_opportunity(ctx, opportunity_id)
    owner = ctx.table("users").get(row["owner_id"]) if row["owner_id"] else None
    acts = ctx.table("activities").select("opportunity_id = ?", [opportunity_id], order_by="created_at DESC, id DESC")
    account = rules.get_account(ctx, row["account_id"])
    return OpportunityDetail.model_validate({**row, "account": account, "owner": owner, "activities": acts})


@tool()
def create_opportunity(
    ctx: ToolContext,
    account_id: Annotated[str, Field(description="The account the deal is with. Example: 'acc_acme'")],
    name: Annotated[Text, Field(description="Deal name. Example: 'Acme Robotics - 2026 expansion'")],
    amount: Amount,
    close_date: Annotated[str, Field(description="Expected close date, YYYY-MM-DD. Example: '2026-05-15'")],
    stage: Annotated[
        OpenStage, Field(description="prospecting, qualification, proposal or negotiation. Example: 'qualification'")
    ] = "prospecting",
    owner_id: Annotated[
        str | None, Field(description="The deal owner; omit to use the account manager. Example: 'usr_marco'")
    ] = None,
    next_step: Annotated[str, Field(description="What happens next. Example: 'Send pricing by Friday'")] = "",
) -> Opportunity:
    """Open a new opportunity (a potential deal) on an account. New deals start in an open stage; to record
    a deal already won, create it and then close it with update_opportunity. Amounts are in cents."""
    account = rules.get_account(ctx, account_id)
    day = rules.check_date(close_date)
    owner = rules.check_owner(ctx, owner_id)["id"] if owner_id is not None else account["owner_id"]
    now = ctx.now_iso()
    row: dict[str, Any] = {"id": ctx.new_id("opportunities"), "account_id": account_id, "name": name, "stage": stage}
    row.update(amount=amount, probability=PROBABILITY[stage], close_date=day, owner_id=owner, next_step=next_step)
    row.update(created_at=now, updated_at=now)
    return Opportunity.model_validate(ctx.table("opportunities").insert(row))


def _closing(row: dict[str, Any], stage: str, amount: int, loss_reason: str | None) -> None:
    if stage == "closed_won" and amount <= 0:
        raise ServiceError(
            f"Opportunity {row['id']} has no amount; a won deal needs one.",
            "Pass amount (in cents) together with stage 'closed_won'.",
        )
    if stage == "closed_lost" and not (loss_reason and loss_reason.strip()):
        raise ServiceError(
            f"Closing opportunity {row['id']} as lost needs a loss_reason.",
            "Call again with loss_reason, for example 'Chose a competitor' or 'No budget this year'.",
        )


@tool(destructive=True, idempotent=True)
def update_opportunity(
    ctx: ToolContext,
    opportunity_id: OpportunityId,
    stage: Annotated[Stage | None, Field(description="New stage. Example: 'negotiation'")] = None,
    amount: Annotated[Cents | None, Field(description="New deal value in cents. Example: 5200000")] = None,
    close_date: Annotated[
        str | None, Field(description="New expected close date, YYYY-MM-DD. Example: '2026-06-30'")
    ] = None,
    name: Annotated[Text | None, Field(description="New deal name. Example: 'Northwind - 2026 renewal'")] = None,
    owner_id: Annotated[str | None, Field(description="New deal owner. Example: 'usr_priya'")] = None,
    next_step: Annotated[str | None, Field(description="New next step. Example: 'Legal review'")] = None,
    loss_reason: Annotated[
        str | None,
        Field(description="Why it was lost; required with stage 'closed_lost'. Example: 'Chose a competitor'"),
    ] = None,
) -> Opportunity:
    """Change an open opportunity; omitted fields stay as they are. Open stages (prospecting, qualification,
    proposal, negotiation) may move to any other stage. Closing: 'closed_won' needs an amount above zero,
    'closed_lost' needs a loss_reason; closing sets closed_at and, unless close_date is given, the close date
    to today. Closed deals cannot be edited: a lost one can be reopened with reopen_opportunity, a won one is
    final (open a new opportunity for more business)."""
    row = rules.get_opportunity(ctx, opportunity_id)
    if row["stage"] == "closed_won":
        raise ServiceError(
            f"Opportunity {opportunity_id} is closed_won and final.",
            "Create a new opportunity (create_opportunity) for further business with this account.",
        )
    if row["stage"] == "closed_lost":
        raise ServiceError(
            f"Opportunity {opportunity_id} is closed_lost and cannot be edited.",
            "Reopen it with reopen_opportunity first if the deal is alive again.",
        )
    if owner_id is not None:
        rules.check_owner(ctx, owner_id)
    day = rules.check_date(close_date) if close_date is not None else None
    if loss_reason is not None and stage != "closed_lost":
        raise ServiceError(
            "loss_reason only applies when closing a deal as lost.", "Pass stage 'closed_lost' with it, or omit it."
        )
    values = {"stage": stage, "amount": amount, "close_date": day, "name": name, "owner_id": owner_id}
    changes = rules.changes_of(row, {**values, "next_step": next_step, "loss_reason": loss_reason})
    if "stage" in changes:
        new = changes["stage"]
        changes["probability"] = PROBABILITY[new]
        if new in CLOSED_STAGES:
            _closing(row, new, row["amount"] if amount is None else amount, loss_reason)
            changes["closed_at"] = ctx.now_iso()
            changes.setdefault("close_date", ctx.now.date().isoformat())
    if not changes:
        return Opportunity.model_validate(row)
    row = ctx.table("opportunities").update(opportunity_id, {**changes, "updated_at": ctx.now_iso()})
    return Opportunity.model_validate(row)


@tool(destructive=True)
def reopen_opportunity(
    ctx: ToolContext,
    opportunity_id: OpportunityId,
    reason: Annotated[Text, Field(description="Why the deal is alive again. Example: 'Budget approved in Q2'")],
    close_date: Annotated[str, Field(description="New expected close date, YYYY-MM-DD. Example: '2026-06-30'")],
    stage: Annotated[OpenStage, Field(description="The open stage to resume at. Example: 'qualification'")] = (
        "qualification"
    ),
) -> Opportunity:
    """Reopen a closed_lost opportunity at an open stage, with a new expected close date. The reason is kept
    as a note in the opportunity's activity history and the loss reason is cleared. Won deals cannot be
    reopened."""
    row = rules.get_opportunity(ctx, opportunity_id)
    if row["stage"] != "closed_lost":
        hint = (
            "Won deals are final: create a new opportunity instead."
            if row["stage"] == "closed_won"
            else "It is still open: change it with update_opportunity."
        )
        raise ServiceError(f"Only closed_lost opportunities can be reopened; {opportunity_id} is {row['stage']}.", hint)
    day = rules.check_date(close_date)
    now = ctx.now_iso()
    note = {"id": ctx.new_id("activities"), "type": "note", "subject": "Opportunity reopened", "body": reason}
    note.update(account_id=row["account_id"], opportunity_id=opportunity_id, created_at=now)
    ctx.table("activities").insert(note)
    changes = {"stage": stage, "probability": PROBABILITY[stage], "close_date": day, "loss_reason": None}
    row = ctx.table("opportunities").update(opportunity_id, {**changes, "closed_at": None, "updated_at": now})
    return Opportunity.model_validate(row)


# ---------------------------------------------------------------------------------------------- activities


@tool()
def log_activity(
    ctx: ToolContext,
    subject: Annotated[Text, Field(description="One-line summary. Example: 'Renewal call with Jamie'")],
    type: Annotated[ActivityType, Field(description="note, call, email or meeting. Example: 'call'")] = "note",
    body: Annotated[str, Field(description="Details: what was said or agreed. Example: 'Wants a 3-year term.'")] = "",
    account_id: Annotated[str | None, Field(description="The account it concerns. Example: 'acc_northwind'")] = None,
    contact_id: Annotated[str | None, Field(description="The person involved. Example: 'con_jamie_lee'")] = None,
    opportunity_id: Annotated[
        str | None, Field(description="The deal it concerns. Example: 'opp_northwind_renewal'")
    ] = None,
) -> Activity:
    """Log a note, call, email or meeting in the CRM history, as logged by you (the current user). Give at least one
    of account_id, contact_id or opportunity_id; the account is taken from the contact or opportunity when omitted,
    and all given records must belong to the same account. It is stamped with the current time."""
    if not (account_id or contact_id or opportunity_id):
        raise ServiceError(
            "An activity must be logged on something.", "Pass account_id, contact_id or opportunity_id (or several)."
        )
    owners: list[tuple[dict[str, Any], str]] = []
    if contact_id:
        owners.append((rules.get_contact(ctx, contact_id), "contact"))
    if opportunity_id:
        owners.append((rules.get_opportunity(ctx, opportunity_id), "opportunity"))
    if account_id:
        rules.get_account(ctx, account_id)
    else:
        account_id = owners[0][0]["account_id"]
    for record, kind in owners:
        rules.belongs(record, account_id, kind)
    by = named_member(ctx)  # None: the acting user; only the Python API names another staff member
    row = {"id": ctx.new_id("activities"), "type": type, "subject": subject, "body": body, "account_id": account_id}
    row.update(
        contact_id=contact_id, opportunity_id=opportunity_id, user_id=by["id"] if by else None, created_at=ctx.now_iso()
    )
    return Activity.model_validate(ctx.table("activities").insert(row))


@tool(read_only=True)
def list_activities(
    ctx: ToolContext,
    account_id: Annotated[str | None, Field(description="Only this account's history. Example: 'acc_acme'")] = None,
    contact_id: Annotated[str | None, Field(description="Only activities with this person. Example: 'con_sam'")] = None,
    opportunity_id: Annotated[
        str | None, Field(description="Only activities on this deal. Example: 'opp_acme_expansion'")
    ] = None,
    type: Annotated[
        list[ActivityType] | None, Field(description="Only these kinds. Example: ['call', 'meeting']")
    ] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> ActivityPage:
    """List logged activities (notes, calls, emails, meetings), newest first: an account's, a contact's or
    a deal's history. Filters combine (AND)."""
    where = Where()
    for column, value, lookup in (
        ("account_id", account_id, rules.get_account),
        ("contact_id", contact_id, rules.get_contact),
        ("opportunity_id", opportunity_id, rules.get_opportunity),
    ):
        if value:
            lookup(ctx, value)
            where.eq(column, value)
    where.any_of("type", type)
    rows, total, nxt = ctx.paginate(
        "activities", where.sql, where.params, "created_at DESC, id DESC", page_size, page_token
    )
    return ActivityPage(items=[Activity.model_validate(r) for r in rows], total=total, next_page_token=nxt)


PIPELINE_TOOLS = (
    search_opportunities,
    get_opportunity,
    create_opportunity,
    update_opportunity,
    reopen_opportunity,
    log_activity,
    list_activities,
)
