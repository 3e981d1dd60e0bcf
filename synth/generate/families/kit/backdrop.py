"""The background of a task: the rest of a real workplace around the records that matter.

:func:`backdrop` runs last in a family's ``build`` and adds, to each service the task has, records of other
customers, other colleagues and other days — finished tickets and their comments, read mail, accounts with
their contacts, deals and notes, paid charges, payouts and settled disputes, internal documents, chat — until
the task holds its level's number of records (a median of about 75). Background never meets a task's
criteria: other people (no first or last name the task already uses), other companies, finished or old
records, texts from :class:`~coworkenv.synth.generate.families.kit.vocabulary.Phrasebook` (no word of the task's
searches, none twice).
"""

from __future__ import annotations

from collections.abc import Callable

from coworkenv.synth.generate.families.kit.base import Json, TaskBuilder
from coworkenv.synth.generate.families.kit.names import AGENTS, FINANCE, USER, Company, Person, Staff
from coworkenv.synth.generate.families.kit.seeds import CREATED, Cast, bank_account, charge, comment, mail
from coworkenv.synth.generate.families.kit.texts import PLANS
from coworkenv.synth.generate.families.kit.vocabulary import CHANNELS

TARGET = {"easy": (60, 72), "medium": (66, 82), "hard": (76, 96)}
"""Records a task holds after its background, by level (drawn in this range)."""


class _Background:
    """What one task's background draws from: people and companies the task does not have."""

    def __init__(self, b: TaskBuilder) -> None:
        self.b = b
        words: set[str] = set()
        for tables in b.records.values():
            for rows in tables.values():
                for row in rows:
                    for key in ("name", "from_name", "account_holder_name", "title"):
                        words |= set(str(row.get(key) or "").split())
        self.taken = words
        self.cast = Cast(b)
        self.cast._emitted = {f"{s}:{row['id']}" for s, ts in b.records.items() for rows in ts.values() for row in rows}
        self.cast.managers = [self.staff("Account Executive")]
        self.companies: list[Company] = []

    def person(self, title: str | None = None) -> Person:
        for _ in range(200):
            p = self.b.names.person(title)
            if p.first not in self.taken and p.last not in self.taken:
                self.taken |= {p.first, p.last}
                return p
        raise RuntimeError("no background person is left whose names the task does not use")

    def staff(self, title: str) -> Staff:
        p = self.person(title)
        return Staff(p, title, f"usr_{p.key}")

    def company(self, contacts: int, write: Callable[[Cast], None]) -> Company:
        """A background company (often one the background already has, else a new one), written into a service
        by ``write`` (``Cast.crm``, ``Cast.tickets``, ``Cast.payments``)."""
        if len(self.companies) >= 3 and self.b.rng.random() < 0.6:
            c = self.b.rng.choice(self.companies)
        else:
            c = self.b.names.company(self.b.pick("business", "starter"), shared_share=0.0, contacts=0)
            c.contacts = [self.person() for _ in range(contacts)]
            self.companies.append(c)
            self.cast.owner[c.key] = self.cast.managers[0]
        self.cast.companies = [c]
        write(self.cast)
        return c


def _count(b: TaskBuilder) -> int:
    return sum(len(rows) for tables in b.records.values() for rows in tables.values())


# ---------------------------------------------------------------------------------------------- per service
def _email(g: _Background) -> None:
    b = g.b
    when = b.ago(days=b.rng.randint(2, 60), hours=b.rng.randint(0, 9))
    if b.rng.random() < 0.45:
        pub, subject, body = b.book.newsletter()
        mail(b, (pub, f"news@{pub.lower().replace(' ', '')}.com"), subject, body, when, unread=False)
        return
    subject, body = b.book.internal_mail()
    sender = b.rng.choice((*AGENTS, FINANCE)) if b.rng.random() < 0.4 else g.staff("Operations")
    mail(b, (sender.name, sender.email), subject, body, when, unread=False)


def _tickets(g: _Background) -> None:
    b, cast = g.b, g.cast
    c = g.company(1, Cast.tickets)
    for _ in range(b.rng.randint(1, 3)):
        subject, body, answer = b.book.question()
        created = b.ago(days=b.rng.randint(6, 90))
        t = _finished_ticket(b, cast, c, subject, body, created)
        comment(b, t["id"], b.rng.choice(AGENTS).key, "Here is how: see the linked help article.", created)
        comment(b, t["id"], cast.usr(c.contacts[0]), answer, created)


def _finished_ticket(b: TaskBuilder, cast: Cast, c: Company, subject: str, body: str, created: str) -> Json:
    record = {
        "id": b.uid("tkt_"),
        "subject": subject,
        "description": body,
        "requester_id": cast.usr(c.contacts[0]),
        "organization_id": cast.org(c),
        "assignee_id": b.rng.choice(AGENTS).key,
        "status": b.pick("solved", "closed"),
        "priority": b.pick("low", "normal"),
        "type": "question",
        "tags": [],
        "escalated": False,
        "created_at": created,
        "updated_at": created,
    }
    return b.add("tickets", "tickets", record)


def _crm(g: _Background) -> None:
    b, cast = g.b, g.cast
    c = g.company(b.rng.randint(1, 2), Cast.crm)
    year = b.now.year - 1
    stage = b.pick("closed_won", "closed_won", "closed_lost")
    close = f"{year}-{b.rng.randint(1, 12):02d}-{b.rng.randint(1, 28):02d}"
    b.add("crm", "opportunities", {
        "id": b.uid("opp_", f"{c.key}_{year}"), "account_id": cast.acc(c), "name": f"{c.name} - {year} subscription",
        "stage": stage, "amount": b.rng.randrange(20, 300) * 100_000, "probability": 100 if stage == "closed_won" else 0,
        "close_date": close, "owner_id": cast.owner[c.key].key, "next_step": "",
        "loss_reason": "No budget this year" if stage == "closed_lost" else None,
        "closed_at": f"{close}T16:00:00Z", "created_at": CREATED, "updated_at": f"{close}T16:00:00Z",
    })  # fmt: skip
    subject, body = b.book.crm_note()
    b.add("crm", "activities", {
        "id": b.uid("act_"), "type": b.pick("note", "call", "meeting"), "subject": subject, "body": body,
        "account_id": cast.acc(c), "contact_id": cast.con(c.contacts[0]), "opportunity_id": None,
        "user_id": cast.owner[c.key].key, "created_at": b.ago(days=b.rng.randint(10, 120)),
    })  # fmt: skip


def _payments(g: _Background) -> None:
    b, cast = g.b, g.cast
    if b.rng.random() < 0.25 and b.rows("payments", "vendors"):
        return _vendor(g)
    c = g.company(1, Cast.payments)
    plan, amount = b.rng.choice(PLANS)
    for k in range(b.rng.randint(1, 3)):
        ch = charge(b, cast.cus(c), amount, b.ago(days=40 + 30 * k + b.rng.randint(0, 9)), plan)
    if b.rng.random() < 0.2:
        ch["disputed"] = True
        b.add("payments", "disputes", {
            "id": b.uid("dp_"), "charge": ch["id"], "amount": amount, "reason": "unrecognized",
            "status": b.pick("won", "lost"), "evidence": {"product_description": plan}, "submission_count": 1,
            "evidence_due_by": b.ago(days=30), "created": b.ago(days=60),
        })  # fmt: skip
    return None


def _vendor(g: _Background) -> None:
    b = g.b
    v = b.names.vendor(shared_share=0.0)
    ba = bank_account(b, f"ven_{v.key}", v.name)
    b.add("payments", "vendors", {
        "id": f"ven_{v.key}", "name": v.name, "email": f"billing@{v.domain}", "website": v.domain,
        "default_bank_account": ba["id"], "description": v.kind.capitalize(), "created": CREATED,
    })  # fmt: skip
    for k in range(b.rng.randint(1, 2)):
        b.add("payments", "payouts", {
            "id": b.uid("po_"), "vendor": f"ven_{v.key}", "bank_account": ba["id"],
            "amount": b.rng.randrange(300, 6000) * 100, "status": "paid", "description": f"{v.kind.capitalize()}",
            "arrival_date": b.ago(days=30 * k + 12), "created": b.ago(days=30 * k + 14),
        })  # fmt: skip


def _docs(g: _Background) -> None:
    b = g.b
    owners = [u["email"] for u in b.rows("docs", "users") if u["email"] != USER.email] or [USER.email]
    title, content = b.book.document()
    b.add("docs", "documents", {
        "id": b.uid("doc_"), "title": title, "content": content, "owner": b.rng.choice(owners),
        "workspace_role": b.pick("viewer", "commenter", "editor"), "revision": 1,
        "created_at": b.ago(days=b.rng.randint(20, 200)),
    })  # fmt: skip


def _chat(g: _Background) -> None:
    b = g.b
    channels = b.rows("chat", "channels")
    members = [u["id"] for u in b.rows("chat", "users") if u["email"] != USER.email]
    if not any(c["name"] in CHANNELS for c in channels):
        name = b.rng.choice(CHANNELS)
        b.add("chat", "channels", {
            "id": f"C0{name.replace('-', '').upper()}", "name": name, "topic": "Everything else",
            "is_private": False, "is_dm": False, "members": [u["id"] for u in b.rows("chat", "users")],
            "created_by": members[0], "created_at": b.ago(days=300),
        })  # fmt: skip
    channel = b.rng.choice([c for c in channels if not c["is_private"] and not c["is_dm"]])
    b.add("chat", "messages", {
        "id": b.uid("M"), "channel_id": channel["id"], "user_id": b.rng.choice(members), "text": b.book.chat(),
        "thread_id": None, "reactions": [], "created_at": b.ago(days=b.rng.randint(3, 40), minutes=b.rng.randint(0, 600)),
    })  # fmt: skip


_MAKERS: dict[str, Callable[[_Background], None]] = {
    "email": _email,
    "tickets": _tickets,
    "crm": _crm,
    "payments": _payments,
    "docs": _docs,
    "chat": _chat,
}


def _ready(b: TaskBuilder, service: str) -> bool:
    """Whether the task's own records give the service what background needs (a mailbox, users)."""
    if service == "email":
        return any(m["address"] == USER.email for m in b.rows("email", "mailboxes"))
    if service == "docs":
        return bool(b.rows("docs", "users"))
    if service == "chat":
        return bool(b.rows("chat", "users")) and bool(b.rows("chat", "channels"))
    return service in _MAKERS


def backdrop(b: TaskBuilder) -> None:
    """Add background records to the task's services until it holds its level's number of records."""
    services = [s for s in b.services if _ready(b, s)]
    if not services:
        return
    g = _Background(b)
    target = b.rng.randint(*TARGET[b.difficulty])
    turn = 0
    while _count(b) < target:
        _MAKERS[services[turn % len(services)]](g)
        turn += 1
