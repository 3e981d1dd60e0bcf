"""Tools of the payments service. Names and vocabulary follow the widely used Stripe-style payments API.

Customers, charges and refunds live here; disputes in :mod:`.dispute_tools`; vendors, their bank accounts
and payouts in :mod:`.vendor_tools`. ``TOOLS`` gathers them all.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from coworkenv.servers.kit import (
    PageSize,
    PageToken,
    PositiveCents,
    ServiceError,
    Timestamp,
    ToolContext,
    Where,
    tool,
)
from coworkenv.servers.payments.banking import money
from coworkenv.servers.payments.dispute_tools import DISPUTE_TOOLS
from coworkenv.servers.payments.models import (
    Charge,
    ChargeDetail,
    ChargePage,
    ChargeStatus,
    Customer,
    CustomerPage,
    Email,
    Refund,
    RefundPage,
    RefundReason,
    RefundResult,
)
from coworkenv.servers.payments.vendor_tools import VENDOR_TOOLS

CustomerId = Annotated[str, Field(description="The customer's id. Example: 'cus_northwind'")]
ChargeId = Annotated[str, Field(description="The charge's id. Example: 'ch_1001'")]
CreatedGte = Annotated[
    Timestamp | None, Field(description="Only records created at or after this time. Example: '2026-02-01T00:00:00Z'")
]
CreatedLt = Annotated[
    Timestamp | None, Field(description="Only records created before this time. Example: '2026-03-01T00:00:00Z'")
]
Metadata = Annotated[
    dict[str, str],
    Field(description="Key-value notes kept on the record. Example: {'crm_account': 'acc_northwind'}"),
]


def _customer(ctx: ToolContext, customer_id: str) -> dict[str, Any]:
    return ctx.fetch("customers", customer_id, "customer", "Use search_customers to find the customer's id.")


def _charge(ctx: ToolContext, charge_id: str) -> dict[str, Any]:
    return ctx.fetch("charges", charge_id, "charge", "Use list_charges to find the charge's id.")


def _email_taken(ctx: ToolContext, email: str, other_than: str | None = None) -> None:
    rows = ctx.table("customers").select("casefold(email) = ?", [email.casefold()])
    clash = [r for r in rows if r["id"] != other_than]
    if clash:
        raise ServiceError(
            f"Customer {clash[0]['id']} ({clash[0]['name']}) already uses the email {email}.",
            "Use that customer, or pick another email.",
        )


# ---------------------------------------------------------------------------------------------- customers


@tool(read_only=True)
def list_customers(
    ctx: ToolContext,
    email: Annotated[
        str | None,
        Field(description="Only the customer with this exact email (any case). Example: 'sam@acmerobotics.com'"),
    ] = None,
    created_gte: CreatedGte = None,
    created_lt: CreatedLt = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> CustomerPage:
    """List customers, newest first, optionally only the one with an exact email or those created in a time window.
    To find a customer by part of a name, email or description use search_customers."""
    where = Where().eq_folded("email", email).gte("created", created_gte).lt("created", created_lt)
    rows, total, nxt = ctx.paginate("customers", where.sql, where.params, "created DESC, id", page_size, page_token)
    return CustomerPage(items=[Customer.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def search_customers(
    ctx: ToolContext,
    query: Annotated[
        str,
        Field(
            min_length=1,
            description="Text found in the name, email, description or phone (any case). Example: 'northwind'",
        ),
    ],
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> CustomerPage:
    """Find customers whose name, email, description or phone contains the text, matched literally
    (quotes, %, _ and ; mean themselves). Sorted by name."""
    where = Where().text(["name", "email", "description", "phone"], query)
    rows, total, nxt = ctx.paginate("customers", where.sql, where.params, "name, id", page_size, page_token)
    return CustomerPage(items=[Customer.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def get_customer(ctx: ToolContext, customer_id: CustomerId) -> Customer:
    """Read one customer: name, billing email, description, phone and metadata."""
    return Customer.model_validate(_customer(ctx, customer_id))


@tool()
def create_customer(
    ctx: ToolContext,
    name: Annotated[
        str, Field(min_length=1, max_length=200, description="Company or person. Example: 'Vandelay Imports'")
    ],
    email: Annotated[
        Email, Field(description="Billing email; must not belong to another customer. Example: 'ap@vandelay.com'")
    ],
    description: Annotated[
        str, Field(max_length=1000, description="A note about the customer. Example: 'Team plan'")
    ] = "",
    phone: Annotated[str | None, Field(description="Phone number. Example: '+1 415 555 0100'")] = None,
    metadata: Metadata = {},  # noqa: B006
) -> Customer:
    """Create a customer to charge later. Returns the new customer with its cus_ id.
    Fails if another customer already has the email: use that customer instead."""
    _email_taken(ctx, email)
    row = ctx.table("customers").insert(
        {
            "id": ctx.new_id("customers"),
            "name": name,
            "email": email,
            "description": description,
            "phone": phone,
            "metadata": metadata,
            "created": ctx.now_iso(),
        }
    )
    return Customer.model_validate(row)


@tool(idempotent=True)
def update_customer(
    ctx: ToolContext,
    customer_id: CustomerId,
    name: Annotated[
        str | None, Field(min_length=1, max_length=200, description="New name. Example: 'Acme Robotics Inc.'")
    ] = None,
    email: Annotated[Email | None, Field(description="New billing email. Example: 'billing@acmerobotics.com'")] = None,
    description: Annotated[
        str | None, Field(max_length=1000, description="New description. Example: 'Enterprise plan'")
    ] = None,
    phone: Annotated[str | None, Field(description="New phone number. Example: '+1 212 555 0199'")] = None,
    metadata: Annotated[
        dict[str, str] | None,
        Field(description="Keys to set; a key set to '' is removed; other keys stay. Example: {'vip': 'yes'}"),
    ] = None,
) -> Customer:
    """Change a customer's name, billing email, description, phone or metadata. Omitted fields stay as they are.
    Returns the updated customer."""
    row = _customer(ctx, customer_id)
    changes: dict[str, Any] = {}
    if email is not None and email.casefold() != row["email"].casefold():
        _email_taken(ctx, email, other_than=customer_id)
        changes["email"] = email
    for key, value in (("name", name), ("description", description), ("phone", phone)):
        if value is not None:
            changes[key] = value
    if metadata:
        merged = {**row["metadata"], **metadata}
        changes["metadata"] = {k: v for k, v in merged.items() if v != ""}
    if not changes:
        return Customer.model_validate(row)
    return Customer.model_validate(ctx.table("customers").update(customer_id, changes))


# ---------------------------------------------------------------------------------------------- charges


@tool(read_only=True)
def list_charges(
    ctx: ToolContext,
    customer: Annotated[str | None, Field(description="Only charges of this customer. Example: 'cus_acme'")] = None,
    status: Annotated[
        ChargeStatus | None, Field(description="succeeded, pending or failed. Example: 'succeeded'")
    ] = None,
    created_gte: CreatedGte = None,
    created_lt: CreatedLt = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> ChargePage:
    """List charges, newest first. Filters combine (AND); omit one to not filter on it.
    Use get_charge for a charge's refunds, dispute and refundable amount."""
    if customer:
        _customer(ctx, customer)
    where = Where().eq("customer", customer).eq("status", status).gte("created", created_gte).lt("created", created_lt)
    rows, total, nxt = ctx.paginate("charges", where.sql, where.params, "created DESC, id", page_size, page_token)
    return ChargePage(items=[Charge.model_validate(r) for r in rows], total=total, next_page_token=nxt)


def _refundable(ctx: ToolContext, charge: dict[str, Any]) -> tuple[int, str | None]:
    """Cents that can still be refunded and, if none, why not (with what to do instead)."""
    cid = charge["id"]
    if charge["status"] == "pending":
        return 0, f"Charge {cid} is still pending; only succeeded charges can be refunded. Wait until it succeeds."
    if charge["status"] == "failed":
        return 0, f"Charge {cid} failed, so no money was taken and there is nothing to refund."
    disputes = ctx.table("disputes").select("charge = ? AND status != 'won'", [cid])
    if disputes:
        d = disputes[0]
        return 0, (
            f"Charge {cid} is disputed ({d['id']}, status {d['status']}); a disputed charge cannot be refunded. "
            "Respond with submit_dispute_evidence, or accept the dispute with close_dispute."
        )
    left = charge["amount"] - charge["amount_refunded"]
    if left == 0:
        return 0, f"Charge {cid} is already fully refunded ({money(charge['amount'], charge['currency'])})."
    return left, None


@tool(read_only=True)
def get_charge(ctx: ToolContext, charge_id: ChargeId) -> ChargeDetail:
    """Read one charge with its refunds, its dispute (if any) and the amount that can still be refunded."""
    row = _charge(ctx, charge_id)
    refunds = ctx.table("refunds").select("charge = ?", [charge_id], order_by="created, id")
    disputes = ctx.table("disputes").select("charge = ?", [charge_id], order_by="created DESC, id")
    left, _ = _refundable(ctx, row)
    return ChargeDetail.model_validate(
        {**row, "refunds": refunds, "dispute": disputes[0]["id"] if disputes else None, "amount_refundable": left}
    )


# ---------------------------------------------------------------------------------------------- refunds


@tool(destructive=True)
def create_refund(
    ctx: ToolContext,
    charge: ChargeId,
    amount: Annotated[
        PositiveCents | None,
        Field(description="Cents to refund; omit to refund everything not yet refunded. Example: 2500 (= $25.00)"),
    ] = None,
    reason: Annotated[
        RefundReason | None, Field(description="duplicate, fraudulent or requested_by_customer. Example: 'duplicate'")
    ] = None,
    metadata: Metadata = {},  # noqa: B006
) -> RefundResult:
    """Refund a succeeded charge, fully (omit amount) or partly (amount in cents). Money goes back to the
    customer's card and cannot be taken back. The amount can never exceed what is left to refund; pending,
    failed and disputed charges cannot be refunded. Returns the refund and the updated charge."""
    row = _charge(ctx, charge)
    left, why_not = _refundable(ctx, row)
    if why_not:
        raise ServiceError(why_not)
    currency = row["currency"]
    if amount is not None and amount > left:
        raise ServiceError(
            f"Cannot refund {money(amount, currency)} ({amount} cents) on charge {charge}: only {left} cents "
            f"({money(left, currency)}) is left to refund of {money(row['amount'], currency)}, "
            f"{row['amount_refunded']} cents already refunded.",
            f"Pass amount={left} or less, or omit amount to refund the remaining {left} cents.",
        )
    value = left if amount is None else amount
    refund = ctx.table("refunds").insert(
        {
            "id": ctx.new_id("refunds"),
            "charge": charge,
            "amount": value,
            "currency": currency,
            "reason": reason,
            "status": "succeeded",
            "metadata": metadata,
            "created": ctx.now_iso(),
        }
    )
    refunded_total = row["amount_refunded"] + value
    updated = ctx.table("charges").update(
        charge, {"amount_refunded": refunded_total, "refunded": refunded_total == row["amount"]}
    )
    return RefundResult(refund=Refund.model_validate(refund), charge=Charge.model_validate(updated))


@tool(read_only=True)
def list_refunds(
    ctx: ToolContext,
    charge: Annotated[str | None, Field(description="Only refunds of this charge. Example: 'ch_1001'")] = None,
    created_gte: CreatedGte = None,
    created_lt: CreatedLt = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> RefundPage:
    """List refunds, newest first, optionally of one charge or created in a time window."""
    if charge:
        _charge(ctx, charge)
    where = Where().eq("charge", charge).gte("created", created_gte).lt("created", created_lt)
    rows, total, nxt = ctx.paginate("refunds", where.sql, where.params, "created DESC, id", page_size, page_token)
    return RefundPage(items=[Refund.model_validate(r) for r in rows], total=total, next_page_token=nxt)


TOOLS = (
    list_customers,
    search_customers,
    get_customer,
    create_customer,
    update_customer,
    list_charges,
    get_charge,
    create_refund,
    list_refunds,
    *DISPUTE_TOOLS,
    *VENDOR_TOOLS,
)
