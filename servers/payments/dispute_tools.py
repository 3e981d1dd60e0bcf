"""Dispute tools of the payments service: a cardholder contested a charge; respond with evidence or accept."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from coworkenv.servers.kit import PageSize, PageToken, ServiceError, ToolContext, Where, tool
from coworkenv.servers.payments.models import Dispute, DisputeEvidence, DisputePage, DisputeStatus

DisputeId = Annotated[str, Field(description="The dispute's id. Example: 'dp_5001'")]
OPEN = ("warning_needs_response", "needs_response")


def _dispute(ctx: ToolContext, dispute_id: str) -> dict[str, Any]:
    return ctx.fetch("disputes", dispute_id, "dispute", "Use list_disputes to find the dispute's id.")


def _must_be_open(row: dict[str, Any], doing: str) -> None:
    if row["status"] in OPEN:
        return
    if row["status"] == "under_review":
        raise ServiceError(
            f"Dispute {row['id']} is under review by the card network; it is too late to {doing}.",
            "Wait for the decision (won or lost); nothing else can be done now.",
        )
    raise ServiceError(
        f"Dispute {row['id']} is already closed as {row['status']}; it is too late to {doing}.",
        "Closed disputes are final.",
    )


@tool(read_only=True)
def list_disputes(
    ctx: ToolContext,
    status: Annotated[
        list[DisputeStatus] | None,
        Field(description="Only these statuses. Example: ['needs_response', 'warning_needs_response']"),
    ] = None,
    charge: Annotated[str | None, Field(description="Only disputes of this charge. Example: 'ch_1017'")] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> DisputePage:
    """List disputes (chargebacks and inquiries), newest first. Those in needs_response or
    warning_needs_response wait for our evidence before their evidence_due_by time."""
    if charge:
        ctx.fetch("charges", charge, "charge", "Use list_charges to find the charge's id.")
    where = Where().any_of("status", status).eq("charge", charge)
    rows, total, nxt = ctx.paginate("disputes", where.sql, where.params, "created DESC, id", page_size, page_token)
    return DisputePage(items=[Dispute.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def get_dispute(ctx: ToolContext, dispute_id: DisputeId) -> Dispute:
    """Read one dispute: the disputed charge and amount, the reason, the status, the evidence so far and
    the deadline (evidence_due_by) for responding."""
    return Dispute.model_validate(_dispute(ctx, dispute_id))


@tool()
def submit_dispute_evidence(
    ctx: ToolContext,
    dispute_id: DisputeId,
    evidence: Annotated[
        DisputeEvidence,
        Field(
            description="Evidence fields to set; fields you omit keep their earlier value. "
            "Example: {'product_description': 'Team plan, 25 seats', 'receipt': 'INV-2026-0212'}"
        ),
    ],
    submit: Annotated[
        bool,
        Field(
            description="true: send the evidence to the card network now (the dispute goes under_review and can "
            "no longer be edited); false: only save it as a draft. Example: true"
        ),
    ] = True,
) -> Dispute:
    """Contest a dispute by giving evidence that the charge was legitimate, before its evidence_due_by time.
    With submit=false the evidence is saved as a draft to finish later. Returns the updated dispute."""
    row = _dispute(ctx, dispute_id)
    _must_be_open(row, "submit evidence")
    if ctx.now_iso() > row["evidence_due_by"]:
        raise ServiceError(
            f"The deadline to respond to dispute {dispute_id} passed at {row['evidence_due_by']}.",
            "Evidence can no longer be submitted; accept the dispute with close_dispute.",
        )
    merged = {**row["evidence"], **evidence.model_dump(exclude_none=True)}
    if submit and not any(v.strip() for v in merged.values() if isinstance(v, str)):
        raise ServiceError(
            f"No evidence to submit for dispute {dispute_id}.",
            "Fill at least one evidence field, e.g. product_description, receipt or customer_communication.",
        )
    changes: dict[str, Any] = {"evidence": merged}
    if submit:
        changes["status"] = "under_review"
        changes["submission_count"] = row["submission_count"] + 1
    return Dispute.model_validate(ctx.table("disputes").update(dispute_id, changes))


@tool(destructive=True, idempotent=True)
def close_dispute(ctx: ToolContext, dispute_id: DisputeId) -> Dispute:
    """Accept a dispute instead of contesting it: the disputed amount stays with the cardholder and the
    dispute is closed as lost. This cannot be undone; to contest it use submit_dispute_evidence instead."""
    row = _dispute(ctx, dispute_id)
    _must_be_open(row, "close it")
    return Dispute.model_validate(ctx.table("disputes").update(dispute_id, {"status": "lost"}))


DISPUTE_TOOLS = (list_disputes, get_dispute, submit_dispute_evidence, close_dispute)
