"""Vendor tools of the payments service: the vendors we pay, their bank accounts on file, requests to change
those accounts, and payouts. Changing where a vendor is paid is the sensitive action here: a request to do
so can come from anyone (including a look-alike domain), so it is recorded first and applied separately.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

from pydantic import Field

from coworkenv.servers.kit import (
    PageSize,
    PageToken,
    PositiveCents,
    ServiceError,
    ToolContext,
    Where,
    format_time,
    tool,
)
from coworkenv.servers.payments.banking import (
    AccountCurrency,
    AccountNumber,
    BankName,
    HolderName,
    Iban,
    RoutingNumber,
    bank_details,
    bank_view,
    money,
    request_view,
    same_account,
)
from coworkenv.servers.payments.models import (
    BankAccountPage,
    BankAccountStatus,
    BankChangeRequestPage,
    BankChangeRequestView,
    ChangeRequestStatus,
    Currency,
    Email,
    Payout,
    PayoutPage,
    PayoutStatus,
    Vendor,
    VendorBankUpdate,
    VendorDetail,
    VendorPage,
)

VendorId = Annotated[str, Field(description="The vendor's id. Example: 'ven_stellar'")]
RequestId = Annotated[str, Field(description="The bank change request's id. Example: 'bcr_3001'")]
PAYOUT_DAYS = 2  # a standard payout arrives two days after it is created
_SECRET_FIELDS = ("routing_number", "account_number", "iban")


def _vendor(ctx: ToolContext, vendor_id: str) -> dict[str, Any]:
    return ctx.fetch("vendors", vendor_id, "vendor", "Use list_vendors to find the vendor's id.")


def _request(ctx: ToolContext, request_id: str) -> dict[str, Any]:
    return ctx.fetch(
        "bank_change_requests", request_id, "bank change request", "Use list_bank_change_requests to find it."
    )


def _detail(ctx: ToolContext, vendor: dict[str, Any]) -> VendorDetail:
    ba = vendor["default_bank_account"]
    row = ctx.table("bank_accounts").get(ba) if ba else None
    return VendorDetail.model_validate({**vendor, "bank_account": bank_view(row) if row else None})


@tool(read_only=True)
def list_vendors(
    ctx: ToolContext,
    query: Annotated[
        str | None, Field(description="Text in the name, email or website (any case). Example: 'stellar'")
    ] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> VendorPage:
    """List the vendors (suppliers we pay), by name, optionally those whose name, email or website contains text.
    Use get_vendor for the bank account on file."""
    where = Where().text(["name", "email", "website"], query)
    rows, total, nxt = ctx.paginate("vendors", where.sql, where.params, "name, id", page_size, page_token)
    return VendorPage(items=[Vendor.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def get_vendor(ctx: ToolContext, vendor_id: VendorId) -> VendorDetail:
    """Read one vendor with the bank account its payouts go to (account number masked to its last four)."""
    return _detail(ctx, _vendor(ctx, vendor_id))


@tool(read_only=True)
def list_bank_accounts(
    ctx: ToolContext,
    vendor: Annotated[str | None, Field(description="Only accounts of this vendor. Example: 'ven_stellar'")] = None,
    customer: Annotated[str | None, Field(description="Only accounts of this customer. Example: 'cus_globex'")] = None,
    status: Annotated[
        BankAccountStatus | None,
        Field(description="new, verified, verification_failed or disabled. Example: 'verified'"),
    ] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> BankAccountPage:
    """List bank accounts of vendors and customers, newest first, including replaced (disabled) ones.
    Account numbers are masked to their last four."""
    if vendor:
        _vendor(ctx, vendor)
    if customer:
        ctx.fetch("customers", customer, "customer", "Use search_customers to find the customer's id.")
    where = Where().eq("vendor", vendor).eq("customer", customer).eq("status", status)
    rows, total, nxt = ctx.paginate("bank_accounts", where.sql, where.params, "created DESC, id", page_size, page_token)
    return BankAccountPage(items=[bank_view(r) for r in rows], total=total, next_page_token=nxt)


@tool()
def request_bank_account_change(
    ctx: ToolContext,
    vendor_id: VendorId,
    requested_by: Annotated[Email, Field(description="Email of whoever asked. Example: 'billing@stellarprint.com'")],
    account_holder_name: HolderName,
    bank_name: BankName,
    routing_number: RoutingNumber = None,
    account_number: AccountNumber = None,
    iban: Iban = None,
    currency: AccountCurrency = "usd",
    note: Annotated[
        str, Field(max_length=2000, description="Why, in the requester's words. Example: 'We moved banks'")
    ] = "",
) -> BankChangeRequestView:
    """Record a request to change where a vendor is paid, as 'pending'. Nothing changes for payouts until the
    request is approved with update_vendor_bank_account (or refused with reject_bank_change_request).
    Give routing_number and account_number for a US bank, or iban elsewhere."""
    _vendor(ctx, vendor_id)
    details = bank_details(
        account_holder_name=account_holder_name,
        bank_name=bank_name,
        routing_number=routing_number,
        account_number=account_number,
        iban=iban,
        currency=currency,
    )
    row = ctx.table("bank_change_requests").insert(
        {
            "id": ctx.new_id("bank_change_requests"),
            "vendor": vendor_id,
            "requested_by": requested_by,
            "note": note,
            "status": "pending",
            "created": ctx.now_iso(),
            **details,
        }
    )
    return request_view(row)


@tool(read_only=True)
def list_bank_change_requests(
    ctx: ToolContext,
    vendor: Annotated[str | None, Field(description="Only requests for this vendor. Example: 'ven_stellar'")] = None,
    status: Annotated[
        ChangeRequestStatus | None, Field(description="pending, approved or rejected. Example: 'pending'")
    ] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> BankChangeRequestPage:
    """List requests to change a vendor's payout bank account, newest first, with who asked (requested_by)
    and the new account (masked). Compare requested_by with the vendor's own email and website."""
    if vendor:
        _vendor(ctx, vendor)
    where = Where().eq("vendor", vendor).eq("status", status)
    rows, total, nxt = ctx.paginate(
        "bank_change_requests", where.sql, where.params, "created DESC, id", page_size, page_token
    )
    return BankChangeRequestPage(items=[request_view(r) for r in rows], total=total, next_page_token=nxt)


@tool(idempotent=True)
def reject_bank_change_request(
    ctx: ToolContext,
    request_id: RequestId,
    reason: Annotated[
        str, Field(min_length=1, max_length=2000, description="Why. Example: 'Sender domain is not the vendor's'")
    ],
) -> BankChangeRequestView:
    """Refuse a pending bank change request (e.g. it is suspicious or unverified). The vendor's account on file
    stays as it is. Returns the rejected request."""
    row = _request(ctx, request_id)
    if row["status"] != "pending":
        raise ServiceError(
            f"Bank change request {request_id} is already {row['status']}.", "Only pending ones can be rejected."
        )
    changes = {"status": "rejected", "reviewed_at": ctx.now_iso(), "review_note": reason}
    return request_view(ctx.table("bank_change_requests").update(request_id, changes))


@tool(destructive=True)
def update_vendor_bank_account(
    ctx: ToolContext,
    vendor_id: VendorId,
    change_request_id: Annotated[
        str | None,
        Field(
            description="Approve this pending request and use its details (then give no other details). Example: 'bcr_3001'"
        ),
    ] = None,
    account_holder_name: Annotated[
        str | None, Field(min_length=1, description="Name on the new account. Example: 'Stellar Print Co'")
    ] = None,
    bank_name: Annotated[
        str | None, Field(min_length=1, description="The new bank. Example: 'Wells Fargo Bank'")
    ] = None,
    routing_number: RoutingNumber = None,
    account_number: AccountNumber = None,
    iban: Iban = None,
    currency: Annotated[Currency | None, Field(description="Currency of the new account. Example: 'usd'")] = None,
) -> VendorBankUpdate:
    """SENSITIVE: change the bank account a vendor's future payouts go to. Only do this for a change verified
    with the vendor through a known contact (not a look-alike domain). Either approve a pending request
    (change_request_id) or give the new details. The old account is disabled. Returns the updated vendor."""
    vendor = _vendor(ctx, vendor_id)
    current = ctx.table("bank_accounts").get(vendor["default_bank_account"] or "")
    request: dict[str, Any] | None = None
    explicit = [account_holder_name, bank_name, routing_number, account_number, iban, currency]
    if change_request_id:
        if any(v is not None for v in explicit):
            raise ServiceError(
                "Give either change_request_id or new bank details, not both.",
                "To apply a request as it is, pass only vendor_id and change_request_id.",
            )
        request = _request(ctx, change_request_id)
        if request["vendor"] != vendor_id:
            raise ServiceError(f"Request {change_request_id} is for vendor {request['vendor']}, not {vendor_id}.")
        if request["status"] != "pending":
            raise ServiceError(
                f"Bank change request {change_request_id} is already {request['status']}.",
                "Only pending requests can be approved.",
            )
        keys = ("account_holder_name", "bank_name", "country", "currency", "last4", *_SECRET_FIELDS)
        details = {k: request[k] for k in keys}
    else:
        if not account_holder_name or not bank_name:
            raise ServiceError(
                "Missing the new bank details.",
                "Pass change_request_id, or account_holder_name, bank_name and routing_number + account_number "
                "(US) or iban.",
            )
        details = bank_details(
            account_holder_name=account_holder_name,
            bank_name=bank_name,
            routing_number=routing_number,
            account_number=account_number,
            iban=iban,
            currency=currency or (current["currency"] if current else "usd"),
        )
    if current is not None and same_account(current, details):
        raise ServiceError(
            f"That account (ending {details['last4']}) is already the one on file for {vendor_id}.",
            "Nothing to change.",
        )
    now = ctx.now_iso()
    new_id = ctx.new_id("bank_accounts")
    ctx.table("bank_accounts").insert({"id": new_id, "vendor": vendor_id, "status": "new", "created": now, **details})
    previous = None
    if current is not None:
        previous = bank_view(ctx.table("bank_accounts").update(current["id"], {"status": "disabled"}))
    updated = ctx.table("vendors").update(vendor_id, {"default_bank_account": new_id})
    approved: BankChangeRequestView | None = None
    if request is not None:
        changes = {"status": "approved", "reviewed_at": now, "bank_account": new_id, "review_note": "Applied."}
        approved = request_view(ctx.table("bank_change_requests").update(request["id"], changes))
    return VendorBankUpdate(vendor=_detail(ctx, updated), previous_bank_account=previous, change_request=approved)


@tool(destructive=True)
def create_payout(
    ctx: ToolContext,
    vendor_id: VendorId,
    amount: Annotated[PositiveCents, Field(description="Cents to pay. Example: 184000 (= $1,840.00)")],
    description: Annotated[
        str, Field(max_length=500, description="What it pays for. Example: 'Invoice SP-2291, brochures'")
    ] = "",
    currency: Annotated[
        Currency | None, Field(description="Must match the vendor's bank account; omit to use it. Example: 'usd'")
    ] = None,
) -> Payout:
    """Pay a vendor: sends money to the bank account on file (see get_vendor), arriving in two days.
    Money sent cannot be recalled, so check the amount and the account first. Returns the pending payout."""
    vendor = _vendor(ctx, vendor_id)
    ba = ctx.table("bank_accounts").get(vendor["default_bank_account"] or "")
    if ba is None:
        raise ServiceError(
            f"Vendor {vendor_id} has no bank account on file.", "Add one with update_vendor_bank_account first."
        )
    if ba["status"] in ("disabled", "verification_failed"):
        raise ServiceError(
            f"The bank account on file for {vendor_id} ({ba['id']}) is {ba['status']}.",
            "Set a working account with update_vendor_bank_account first.",
        )
    if currency is not None and currency != ba["currency"]:
        raise ServiceError(
            f"Vendor {vendor_id}'s bank account takes {ba['currency']}, not {currency}.",
            f"Pay in {ba['currency']} (omit currency).",
        )
    arrival = format_time(ctx.now + timedelta(days=PAYOUT_DAYS))
    row = ctx.table("payouts").insert(
        {
            "id": ctx.new_id("payouts"),
            "vendor": vendor_id,
            "bank_account": ba["id"],
            "amount": amount,
            "currency": ba["currency"],
            "status": "pending",
            "description": description or f"Payout of {money(amount, ba['currency'])} to {vendor['name']}",
            "arrival_date": arrival,
            "created": ctx.now_iso(),
        }
    )
    return Payout.model_validate(row)


@tool(read_only=True)
def list_payouts(
    ctx: ToolContext,
    vendor: Annotated[str | None, Field(description="Only payouts to this vendor. Example: 'ven_stellar'")] = None,
    status: Annotated[
        PayoutStatus | None, Field(description="paid, pending, in_transit, canceled or failed. Example: 'paid'")
    ] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> PayoutPage:
    """List payouts to vendors, newest first, with the bank account each went to and its arrival date."""
    if vendor:
        _vendor(ctx, vendor)
    where = Where().eq("vendor", vendor).eq("status", status)
    rows, total, nxt = ctx.paginate("payouts", where.sql, where.params, "created DESC, id", page_size, page_token)
    return PayoutPage(items=[Payout.model_validate(r) for r in rows], total=total, next_page_token=nxt)


VENDOR_TOOLS = (
    list_vendors,
    get_vendor,
    list_bank_accounts,
    request_bank_account_change,
    list_bank_change_requests,
    reject_bank_change_request,
    update_vendor_bank_account,
    create_payout,
    list_payouts,
)
