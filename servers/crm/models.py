"""Records of the crm service (a Salesforce-like CRM).

Money is always an integer number of cents (USD): an opportunity's ``amount`` and an account's
``annual_revenue`` alike, so ``1250000`` means $12,500.00.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field

from coworkenv.servers.kit import Cents, Page, Record, Table, Timestamp

Tier = Literal["enterprise", "business", "starter"]
AccountStatus = Literal["prospect", "active", "churned"]
Stage = Literal["prospecting", "qualification", "proposal", "negotiation", "closed_won", "closed_lost"]
OpenStage = Literal["prospecting", "qualification", "proposal", "negotiation"]
ActivityType = Literal["note", "call", "email", "meeting"]

OPEN_STAGES: tuple[str, ...] = ("prospecting", "qualification", "proposal", "negotiation")
CLOSED_STAGES: tuple[str, ...] = ("closed_won", "closed_lost")
# The forecast probability (percent) that goes with each stage, as in a default Salesforce sales process.
PROBABILITY: dict[str, int] = {
    "prospecting": 10,
    "qualification": 20,
    "proposal": 50,
    "negotiation": 80,
    "closed_won": 100,
    "closed_lost": 0,
}


def _calendar_date(value: str) -> str:
    try:
        return date.fromisoformat(value).isoformat()
    except ValueError as exc:
        raise ValueError(f"not a calendar date like 2026-04-30: {value!r}") from exc


CalendarDate = Annotated[str, AfterValidator(_calendar_date)]
"""A calendar day stored as ``YYYY-MM-DD`` text (sorts as text)."""


class User(Record):
    """One of our own staff (Brightwave Software): account managers, support, finance."""

    name: str
    email: str
    title: str = ""
    active: bool = Field(default=True, description="Inactive users cannot own accounts or opportunities.")


class Account(Record):
    name: str
    domain: str | None = Field(default=None, description="The company's web/email domain, e.g. 'northwind.com'.")
    industry: str = ""
    tier: Tier = "starter"
    status: AccountStatus = "prospect"
    owner_id: str | None = Field(default=None, description="The account manager: a user id.")
    annual_revenue: Cents | None = Field(default=None, description="The company's annual revenue in cents (USD).")
    phone: str | None = None
    custom_fields: dict[str, Any] = Field(
        default={},
        description="Other attributes as the source system keeps them. Example: {'contact_person': 'Li Hua'}",
    )
    created_at: Timestamp
    updated_at: Timestamp


class Contact(Record):
    account_id: str
    name: str
    email: str | None = None
    title: str = ""
    phone: str | None = None
    custom_fields: dict[str, Any] = Field(
        default={}, description="Other attributes as the source system keeps them. Example: {'department': 'Sales'}"
    )
    created_at: Timestamp
    updated_at: Timestamp


class Opportunity(Record):
    account_id: str
    name: str
    stage: Stage = "prospecting"
    amount: Cents = Field(default=0, description="Deal value in cents (USD).")
    probability: int = Field(default=10, ge=0, le=100, description="Forecast percent; follows the stage.")
    close_date: CalendarDate = Field(description="Expected (or actual, once closed) close date, YYYY-MM-DD.")
    owner_id: str | None = None
    next_step: str = ""
    loss_reason: str | None = None
    closed_at: Timestamp | None = None
    created_at: Timestamp
    updated_at: Timestamp


class Activity(Record):
    """A note, call, email or meeting logged on an account (and optionally a contact and opportunity)."""

    type: ActivityType = "note"
    subject: str
    body: str = ""
    account_id: str
    contact_id: str | None = None
    opportunity_id: str | None = None
    user_id: str | None = Field(default=None, description="The staff user who logged it; none: the acting user.")
    created_at: Timestamp


TABLES = (
    Table("users", User, "usr_", indexes=(("email",),)),
    Table(
        "accounts",
        Account,
        "acc_",
        indexes=(("domain",), ("owner_id",), ("name",)),
        refs=(("owner_id", "users"),),
        volatile=("updated_at",),
    ),
    Table(
        "contacts",
        Contact,
        "con_",
        indexes=(("account_id",), ("email",)),
        refs=(("account_id", "accounts"),),
        volatile=("updated_at",),
    ),
    Table(
        "opportunities",
        Opportunity,
        "opp_",
        indexes=(("account_id",), ("owner_id",), ("stage",)),
        refs=(("account_id", "accounts"), ("owner_id", "users")),
        volatile=("updated_at",),
    ),
    Table(
        "activities",
        Activity,
        "act_",
        indexes=(("account_id",), ("contact_id",), ("opportunity_id",)),
        refs=(
            ("account_id", "accounts"),
            ("contact_id", "contacts"),
            ("opportunity_id", "opportunities"),
            ("user_id", "users"),
        ),
    ),
)


class AccountDetail(Account):
    owner: User | None = Field(description="The account manager, or null when the account has no owner.")
    contacts: list[Contact] = Field(description="The account's contacts, by name.")
    open_opportunities: list[Opportunity] = Field(description="Opportunities not yet closed, by close date.")


class ContactDetail(Contact):
    account: Account = Field(description="The account (company) the contact works for.")


class OpportunityDetail(Opportunity):
    account: Account = Field(description="The account the deal is with.")
    owner: User | None = Field(description="The opportunity owner, or null.")
    activities: list[Activity] = Field(description="Activities logged on this opportunity, newest first.")


class DeletedContact(BaseModel):
    id: str = Field(description="The id of the contact that was deleted.")
    deleted: bool = Field(description="True: the contact no longer exists.")
    activities_unlinked: int = Field(description="Logged activities kept on the account but no longer on the contact.")


class UserPage(Page[User]):
    pass


class AccountPage(Page[Account]):
    pass


class ContactPage(Page[Contact]):
    pass


class OpportunityPage(Page[Opportunity]):
    pass


class ActivityPage(Page[Activity]):
    pass
