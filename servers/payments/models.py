"""Records of the payments service (a Stripe-like account: customers, charges, refunds, disputes, vendor payouts).

Amounts are integers in the currency's smallest unit (cents). Full bank account numbers are stored but
never returned by a tool: the views below carry only the last four characters.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from coworkenv.servers.kit import MAX_CENTS, Cents, Page, PositiveCents, Record, Table, Timestamp


def _lower(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


Currency = Annotated[str, BeforeValidator(_lower), Field(pattern=r"^[a-z]{3}$")]
"""A three-letter ISO currency code in lower case, e.g. 'usd' (upper case is accepted and folded)."""

Email = Annotated[str, Field(pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")]

ChargeStatus = Literal["succeeded", "pending", "failed"]
RefundReason = Literal["duplicate", "fraudulent", "requested_by_customer"]
RefundStatus = Literal["succeeded", "pending", "failed", "canceled"]
BankAccountStatus = Literal["new", "verified", "verification_failed", "disabled"]
ChangeRequestStatus = Literal["pending", "approved", "rejected"]
PayoutStatus = Literal["paid", "pending", "in_transit", "canceled", "failed"]
DisputeStatus = Literal["warning_needs_response", "needs_response", "under_review", "won", "lost"]
DisputeReason = Literal[
    "fraudulent",
    "duplicate",
    "product_not_received",
    "product_unacceptable",
    "subscription_canceled",
    "credit_not_processed",
    "unrecognized",
    "general",
]


class Customer(Record):
    name: str
    email: Email
    description: str = ""
    phone: str | None = None
    metadata: dict[str, str] = {}
    created: Timestamp


class Charge(Record):
    customer: str | None = Field(default=None, description="The customer charged (cus_…), if any.")
    amount: PositiveCents = Field(description="Amount charged, in cents.")
    currency: Currency = "usd"
    status: ChargeStatus
    description: str = ""
    receipt_email: str | None = None
    card_brand: str | None = None
    card_last4: str | None = None
    failure_message: str | None = None
    amount_refunded: Cents = Field(default=0, description="Cents refunded so far.")
    refunded: bool = Field(default=False, description="True once the whole amount has been refunded.")
    disputed: bool = Field(default=False, description="True if the cardholder opened a dispute on this charge.")
    metadata: dict[str, str] = {}
    created: Timestamp

    @model_validator(mode="after")
    def _refund_totals(self) -> Charge:
        if self.amount_refunded > self.amount:
            raise ValueError(f"amount_refunded {self.amount_refunded} exceeds amount {self.amount}")
        if self.refunded != (self.amount_refunded == self.amount):
            raise ValueError("refunded must be true exactly when amount_refunded equals amount")
        return self


class Refund(Record):
    charge: str
    amount: PositiveCents
    currency: Currency = "usd"
    reason: RefundReason | None = None
    status: RefundStatus = "succeeded"
    metadata: dict[str, str] = {}
    created: Timestamp


class Vendor(Record):
    name: str
    email: Email = Field(description="Billing contact of the vendor.")
    website: str = Field(description="The vendor's own domain, e.g. 'stellarprint.com'.")
    default_bank_account: str | None = Field(default=None, description="The ba_… payouts go to.")
    description: str = ""
    metadata: dict[str, str] = {}
    created: Timestamp


def _check_bank_numbers(account_number: str | None, iban: str | None, last4: str) -> None:
    full = iban or account_number
    if not full:
        raise ValueError("give an account_number (with routing_number) or an iban")
    if full[-4:] != last4:
        raise ValueError(f"last4 {last4!r} does not match the account's last four characters")


class BankAccount(Record):
    customer: str | None = Field(default=None, description="The customer (cus_…) who owns it, or null.")
    vendor: str | None = Field(default=None, description="The vendor (ven_…) who owns it, or null.")
    account_holder_name: str
    account_holder_type: Literal["company", "individual"] = "company"
    bank_name: str
    country: str = Field(default="US", pattern=r"^[A-Z]{2}$")
    currency: Currency = "usd"
    routing_number: str | None = Field(default=None, pattern=r"^\d{9}$")
    account_number: str | None = Field(default=None, pattern=r"^\d{4,17}$")
    iban: str | None = Field(default=None, pattern=r"^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$")
    last4: str
    status: BankAccountStatus = "new"
    created: Timestamp

    @model_validator(mode="after")
    def _owner_and_numbers(self) -> BankAccount:
        if (self.customer is None) == (self.vendor is None):
            raise ValueError("a bank account belongs to exactly one of customer or vendor")
        _check_bank_numbers(self.account_number, self.iban, self.last4)
        return self


class BankChangeRequest(Record):
    vendor: str
    requested_by: Email = Field(description="Who asked for the change.")
    account_holder_name: str
    bank_name: str
    country: str = Field(default="US", pattern=r"^[A-Z]{2}$")
    currency: Currency = "usd"
    routing_number: str | None = Field(default=None, pattern=r"^\d{9}$")
    account_number: str | None = Field(default=None, pattern=r"^\d{4,17}$")
    iban: str | None = Field(default=None, pattern=r"^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$")
    last4: str
    note: str = ""
    status: ChangeRequestStatus = "pending"
    created: Timestamp
    reviewed_at: Timestamp | None = None
    review_note: str | None = None
    bank_account: str | None = Field(default=None, description="The ba_… created when the request was approved.")

    @model_validator(mode="after")
    def _numbers(self) -> BankChangeRequest:
        _check_bank_numbers(self.account_number, self.iban, self.last4)
        return self


class Payout(Record):
    vendor: str
    bank_account: str
    amount: PositiveCents
    currency: Currency = "usd"
    status: PayoutStatus = "pending"
    description: str = ""
    arrival_date: Timestamp
    created: Timestamp


_EVIDENCE_TEXT = 20_000
"""The longest text of one evidence field."""


class DisputeEvidence(BaseModel):
    """What the merchant submits to the card network to contest a dispute. Every field is optional."""

    model_config = ConfigDict(extra="forbid")

    customer_name: str | None = Field(default=None, max_length=_EVIDENCE_TEXT, description="Example: 'Jamie Lee'")
    customer_email_address: str | None = Field(
        default=None, max_length=_EVIDENCE_TEXT, description="Example: 'jamie.lee@northwind.com'"
    )
    product_description: str | None = Field(
        default=None,
        max_length=_EVIDENCE_TEXT,
        description="What was sold. Example: 'Brightwave Team plan, 25 seats, March 2026'",
    )
    service_date: str | None = Field(
        default=None, max_length=_EVIDENCE_TEXT, description="When the service was provided. Example: '2026-02-01'"
    )
    customer_communication: str | None = Field(
        default=None,
        max_length=_EVIDENCE_TEXT,
        description="Messages showing the customer used or acknowledged the purchase.",
    )
    receipt: str | None = Field(
        default=None,
        max_length=_EVIDENCE_TEXT,
        description="The receipt or invoice reference. Example: 'INV-2026-0212'",
    )
    refund_policy: str | None = Field(
        default=None, max_length=_EVIDENCE_TEXT, description="The refund policy the customer agreed to."
    )
    duplicate_charge_explanation: str | None = Field(
        default=None,
        max_length=_EVIDENCE_TEXT,
        description="For 'duplicate' disputes: why the two charges are distinct.",
    )
    uncategorized_text: str | None = Field(
        default=None, max_length=_EVIDENCE_TEXT, description="Anything else that supports the case."
    )


class Dispute(Record):
    charge: str
    amount: PositiveCents
    currency: Currency = "usd"
    reason: DisputeReason
    status: DisputeStatus
    evidence: DisputeEvidence = DisputeEvidence()
    evidence_due_by: Timestamp
    submission_count: int = Field(default=0, ge=0, description="How many times evidence was submitted.")
    created: Timestamp


SignedCents = Annotated[int, Field(strict=True, ge=-MAX_CENTS, le=MAX_CENTS)]
"""An amount in cents that may be below zero (money out of the balance). Example: -1200000"""


class BalanceTransaction(Record):
    """One movement of money on the account's books (Stripe's balance transactions): a payment received, a
    purchase, a refund, a salary, as the books record it."""

    amount: SignedCents = Field(description="Cents as booked; the sign follows the books. Example: 4500000")
    currency: Currency = "usd"
    description: str = ""
    type: str | None = Field(default=None, description="What moved the money, as the books name it. Example: 'refund'")
    status: str | None = Field(default=None, description="As the books say. Example: 'completed', 'cancelled'")
    custom_fields: dict[str, Any] = Field(
        default={}, description="Other attributes as the books keep them. Example: {'merchant': 'Metro Office'}"
    )
    created: Timestamp = Field(description="When it was booked. Example: '2026-03-20T00:00:00Z'")


class ExpenseReport(Record):
    """An expense report submitted to finance: a title, the transactions it claims and the total it states."""

    title: str
    transactions: list[str] = Field(default=[], description="The balance transactions it claims. Example: ['txn_1']")
    total_amount: float = Field(description="The total as the submitter stated it, in currency units (not cents).")
    status: Literal["submitted"] = "submitted"
    created: Timestamp


TABLES = (
    Table("customers", Customer, "cus_", indexes=(("email",), ("created",))),
    Table(
        "charges", Charge, "ch_", indexes=(("customer",), ("status",), ("created",)), refs=(("customer", "customers"),)
    ),
    Table("refunds", Refund, "re_", indexes=(("charge",),), refs=(("charge", "charges"),)),
    Table("vendors", Vendor, "ven_", refs=(("default_bank_account", "bank_accounts"),)),
    Table(
        "bank_accounts",
        BankAccount,
        "ba_",
        indexes=(("vendor",), ("customer",)),
        refs=(("vendor", "vendors"), ("customer", "customers")),
    ),
    Table(
        "bank_change_requests",
        BankChangeRequest,
        "bcr_",
        indexes=(("vendor",), ("status",)),
        refs=(("vendor", "vendors"), ("bank_account", "bank_accounts")),
    ),
    Table(
        "payouts",
        Payout,
        "po_",
        indexes=(("vendor",), ("created",)),
        refs=(("vendor", "vendors"), ("bank_account", "bank_accounts")),
    ),
    Table("disputes", Dispute, "dp_", indexes=(("charge",), ("status",)), refs=(("charge", "charges"),)),
    Table("balance_transactions", BalanceTransaction, "txn_", indexes=(("created",),)),
    Table("expense_reports", ExpenseReport, "er_"),
)


# ---------------------------------------------------------------------------------------------- views


class BankAccountView(BaseModel):
    """A bank account as tools show it: the account number and IBAN are masked to their last four."""

    id: str
    customer: str | None
    vendor: str | None
    account_holder_name: str
    account_holder_type: str
    bank_name: str
    country: str
    currency: str
    routing_number: str | None
    last4: str = Field(description="Last four characters of the account number or IBAN; the rest is never shown.")
    status: BankAccountStatus
    created: str


class BankChangeRequestView(BaseModel):
    """A request to change where a vendor is paid; the new account number is masked to its last four."""

    id: str
    vendor: str
    requested_by: str
    account_holder_name: str
    bank_name: str
    country: str
    currency: str
    routing_number: str | None
    last4: str
    note: str
    status: ChangeRequestStatus
    created: str
    reviewed_at: str | None
    review_note: str | None
    bank_account: str | None


class VendorDetail(Vendor):
    bank_account: BankAccountView | None = Field(description="The account on file that payouts go to (masked).")


class ChargeDetail(Charge):
    refunds: list[Refund] = Field(description="Refunds of this charge, oldest first.")
    dispute: str | None = Field(description="The dispute (dp_…) opened on this charge, if any.")
    amount_refundable: int = Field(description="Cents that can still be refunded (0 if not refundable).")


class RefundResult(BaseModel):
    refund: Refund
    charge: Charge = Field(description="The charge after the refund, with amount_refunded and refunded updated.")


class VendorBankUpdate(BaseModel):
    vendor: VendorDetail = Field(description="The vendor with its new payout account.")
    previous_bank_account: BankAccountView | None = Field(description="The account that was replaced (now disabled).")
    change_request: BankChangeRequestView | None = Field(description="The request approved by this change, if any.")


class CustomerPage(Page[Customer]):
    pass


class ChargePage(Page[Charge]):
    pass


class RefundPage(Page[Refund]):
    pass


class VendorPage(Page[Vendor]):
    pass


class BankAccountPage(Page[BankAccountView]):
    pass


class BankChangeRequestPage(Page[BankChangeRequestView]):
    pass


class PayoutPage(Page[Payout]):
    pass


class DisputePage(Page[Dispute]):
    pass
