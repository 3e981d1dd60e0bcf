"""Seed records shared by the families: the cast of a task in each service, single records, and filler.

``Cast`` keeps the people and companies of one task and writes them into each service the same way
(``acc_<key>`` in the CRM is ``org_<key>`` in the helpdesk and ``cus_<key>`` in payments), so that
cross-service tasks join up. Filler records are background: they never meet a task's criteria.
"""

from __future__ import annotations

from coworkenv.synth.generate.families.kit.base import Json, TaskBuilder
from coworkenv.synth.generate.families.kit.names import (
    ACCOUNT_MANAGERS,
    AGENTS,
    FINANCE,
    OUR_DOMAIN,
    USER,
    Company,
    Person,
    Staff,
    Vendor,
)
from coworkenv.synth.generate.families.kit.texts import BANKS, CARD_BRANDS, ISSUES, PLANS

CREATED = "2025-06-01T00:00:00Z"


class Cast:
    """The people and companies of one task, and their records in each service."""

    def __init__(self, b: TaskBuilder) -> None:
        self.b = b
        self.managers: list[Staff] = list(ACCOUNT_MANAGERS)
        if b.difficulty != "easy" and b.rng.random() < 0.5:
            self.managers.append(b.names.staff("Account Manager"))
        self.agents: list[Staff] = list(AGENTS)
        self.companies: list[Company] = []
        self.owner: dict[str, Staff] = {}
        self.vendors: list[Vendor] = []
        self._emitted: set[str] = set()

    def company(self, tier: str | None = None, contacts: int = 1, owner: Staff | None = None) -> Company:
        c = self.b.names.company(tier, contacts=contacts)
        self.companies.append(c)
        self.owner[c.key] = owner or self.b.rng.choice(self.managers)
        return c

    def vendor(self) -> Vendor:
        v = self.b.names.vendor()
        self.vendors.append(v)
        return v

    @property
    def staff(self) -> list[Staff]:
        return [USER, *self.managers, FINANCE, *self.agents]

    # ------------------------------------------------------------------------------------------ ids
    @staticmethod
    def acc(c: Company) -> str:
        return f"acc_{c.key}"

    @staticmethod
    def org(c: Company) -> str:
        return f"org_{c.key}"

    @staticmethod
    def cus(c: Company) -> str:
        return f"cus_{c.key}"

    @staticmethod
    def con(p: Person) -> str:
        return f"con_{p.key}"

    @staticmethod
    def usr(p: Person) -> str:
        return f"usr_{p.key}"

    def _new(self, rid: str) -> bool:
        if rid in self._emitted:
            return False
        self._emitted.add(rid)
        return True

    def _add(self, service: str, table: str, record: Json) -> None:
        if self._new(f"{service}:{record['id']}"):
            self.b.add(service, table, record)

    # ------------------------------------------------------------------------------------------ per service
    def crm(self) -> None:
        for s in self.staff:
            self._add("crm", "users", {"id": s.key, "name": s.name, "email": s.email, "title": s.title, "active": True})
        for c in self.companies:
            revenue = self.b.rng.randrange(5, 900) * 100_000_000
            self._add(
                "crm",
                "accounts",
                {
                    "id": self.acc(c),
                    "name": c.name,
                    "domain": c.domain,
                    "industry": c.industry,
                    "tier": c.tier,
                    "status": "active",
                    "owner_id": self.owner[c.key].key,
                    "annual_revenue": revenue,
                    "created_at": CREATED,
                    "updated_at": CREATED,
                },
            )
            for p in c.contacts:
                self._add("crm", "contacts", self.contact(c, p))

    def contact(self, c: Company, p: Person, phone: str | None = None) -> Json:
        phone = phone or f"+1 {self.b.rng.randrange(201, 989)} 555 0{self.b.rng.randrange(100, 199)}"
        return {
            "id": self.con(p),
            "account_id": self.acc(c),
            "name": p.name,
            "email": c.email(p),
            "title": p.title,
            "phone": phone,
            "created_at": CREATED,
            "updated_at": CREATED,
        }

    def tickets(self, tag_tiers: bool = True) -> None:
        for s in (USER, *self.agents):
            self._add("tickets", "users", {"id": s.key, "name": s.name, "email": s.email, "role": "agent"})
        for c in self.companies:
            tags = [c.tier] if tag_tiers else []
            org = {"id": self.org(c), "name": c.name, "domain": c.domain, "tags": tags, "created_at": CREATED}
            self._add("tickets", "organizations", org)
            for p in c.contacts:
                user = {"id": self.usr(p), "name": p.name, "email": c.email(p), "organization_id": self.org(c)}
                self._add("tickets", "users", user)

    def email(self, colleagues: bool = True) -> None:
        boxes = [USER, *self.managers[:2], FINANCE] if colleagues else [USER]
        for s in boxes:
            box = {"id": f"mbx_{s.person.key}", "address": s.email, "name": s.name, "is_primary": s is USER}
            self._add("email", "mailboxes", box)

    def payments(self) -> None:
        for c in self.companies:
            who = c.contacts[0] if c.contacts else None
            email = c.email(who) if who else f"billing@{c.domain}"
            customer = {
                "id": self.cus(c),
                "name": c.name,
                "email": email,
                "description": c.industry,
                "created": CREATED,
            }
            self._add("payments", "customers", customer)


# ---------------------------------------------------------------------------------------------- single records
def ticket(
    b: TaskBuilder,
    cast: Cast,
    c: Company,
    created: str,
    status: str = "open",
    priority: str = "normal",
    issue: tuple[str, str, str] | None = None,
    assignee: str | None = None,
    tags: list[str] | None = None,
) -> Json:
    subject, description, _ = issue or b.rng.choice(ISSUES)
    requester = c.contacts[0] if c.contacts else cast.b.names.person()
    record = {
        "id": b.uid("tkt_"),
        "subject": subject,
        "description": description,
        "requester_id": cast.usr(requester),
        "organization_id": cast.org(c),
        "assignee_id": assignee,
        "status": status,
        "priority": priority,
        "type": "incident" if priority in ("high", "urgent") else "question",
        "tags": tags or [],
        "escalated": False,
        "created_at": created,
        "updated_at": created,
    }
    return b.add("tickets", "tickets", record)


def comment(b: TaskBuilder, ticket_id: str, author: str | None, body: str, created: str, public: bool = True) -> Json:
    record = {"id": b.uid("cmt_"), "ticket_id": ticket_id, "author_id": author, "body": body}
    return b.add("tickets", "comments", {**record, "public": public, "created_at": created})


def public_reply_check(
    b: TaskBuilder, ticket_id: str, weight: float, says: Json, what: str, cid: str = "customer_told"
) -> None:
    """The check ``cid``: the customer gets a public reply on the ticket during the run, whose body matches
    ``says`` (``what`` it tells, in words): a reply of "Hi." tells the customer nothing."""
    b.check(
        cid,
        weight,
        f"The customer gets a public reply on the ticket that {what}.",
        {
            "kind": "record_exists",
            "service": "tickets",
            "table": "comments",
            "where": {"ticket_id": ticket_id, "public": True, "created_at": {"gte": b.now_iso}, "body": says},
        },
    )


def mail(
    b: TaskBuilder,
    sender: tuple[str, str],
    subject: str,
    body: str,
    date: str,
    to: list[str] | None = None,
    unread: bool = True,
    cc: list[str] | None = None,
) -> Json:
    name, address = sender
    labels = ["INBOX", "UNREAD"] if unread else ["INBOX"]
    record = {
        "id": b.uid("msg_"),
        "mailbox": USER.email,
        "from_address": address,
        "from_name": name,
        "to": to or [USER.email],
        "cc": cc or [],
        "subject": subject,
        "body": body,
        "label_ids": labels,
        "date": date,
    }
    return b.add("email", "messages", record)


def charge(
    b: TaskBuilder,
    customer: str,
    amount: int,
    created: str,
    description: str,
    status: str = "succeeded",
    refunded: int = 0,
    receipt: str | None = None,
) -> Json:
    record = {
        "id": b.uid("ch_"),
        "customer": customer,
        "amount": amount,
        "currency": "usd",
        "status": status,
        "description": description,
        "receipt_email": receipt,
        "card_brand": b.rng.choice(CARD_BRANDS),
        "card_last4": f"{b.rng.randrange(1000, 9999)}",
        "failure_message": "Your card was declined." if status == "failed" else None,
        "amount_refunded": refunded,
        "refunded": refunded == amount,
        "created": created,
    }
    return b.add("payments", "charges", record)


def bank_account(b: TaskBuilder, vendor_id: str, holder: str, bank: str | None = None, created: str = CREATED) -> Json:
    number = f"{b.rng.randrange(10**9, 10**10)}"
    record = {
        "id": b.uid("ba_", vendor_id.removeprefix("ven_")),
        "vendor": vendor_id,
        "account_holder_name": holder,
        "bank_name": bank or b.rng.choice(BANKS),
        "routing_number": f"0{b.rng.randrange(10**7, 10**8)}",
        "account_number": number,
        "last4": number[-4:],
        "status": "verified",
        "created": created,
    }
    return b.add("payments", "bank_accounts", record)


def vendor_record(b: TaskBuilder, v: Vendor, account: str | None) -> Json:
    record = {
        "id": f"ven_{v.key}",
        "name": v.name,
        "email": f"billing@{v.domain}",
        "website": v.domain,
        "default_bank_account": account,
        "description": v.kind.capitalize(),
        "created": CREATED,
    }
    return b.add("payments", "vendors", record)


# ---------------------------------------------------------------------------------------------- filler
def filler_tickets(b: TaskBuilder, cast: Cast, n: int, statuses: tuple[str, ...] = ("solved", "closed")) -> None:
    """Finished how-to tickets of any customer: never open, so never a target (texts never repeat)."""
    for _ in range(n):
        c = b.rng.choice(cast.companies)
        subject, body, _ = b.book.question()
        when = b.ago(days=b.rng.randint(3, 40))
        ticket(b, cast, c, when, b.rng.choice(statuses), b.pick("low", "normal"), (subject, body, ""))


def filler_mail(b: TaskBuilder, n: int) -> None:
    """Newsletters and internal notes in the user's inbox, already read (texts never repeat)."""
    for i in range(n):
        if i % 2 == 0:
            name, subject, body = b.book.newsletter()
            address = f"news@{name.lower().replace(' ', '')}.com"
        else:
            subject, body = b.book.internal_mail()
            sender = b.rng.choice([*ACCOUNT_MANAGERS, FINANCE, *AGENTS])
            address, name = sender.email, sender.name
        mail(
            b, (name, address), subject, body, b.ago(days=b.rng.randint(2, 30), hours=b.rng.randint(0, 9)), unread=False
        )


def filler_charges(b: TaskBuilder, customers: list[str], n: int, after_days: int = 35, before_days: int = 150) -> None:
    """Old, successful plan charges of other customers."""
    for _ in range(n):
        plan, amount = b.rng.choice(PLANS)
        charge(b, b.rng.choice(customers), amount, b.ago(days=b.rng.randint(after_days, before_days)), plan)


def internal(address: str) -> bool:
    return address.endswith("@" + OUR_DOMAIN)
