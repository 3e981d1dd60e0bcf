"""CRM: adding the new contact who introduced themselves by email."""

from __future__ import annotations

from dataclasses import dataclass

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import CROSS, DISTRACTORS, MULTISTEP, Family, TaskBuilder, rx
from coworkenv.synth.generate.families.kit.names import FIRST, FREEMAIL, TITLES, USER, Company, Person
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.seeds import Cast, filler_mail, mail


@dataclass
class _Introduction:
    """A new contact introducing themselves by email: their company, its other accounts, the old contact."""

    cast: Cast
    company: Company
    others: list[Company]
    old: Person
    new: Person
    work: str
    phone: str


@register_family
class NewContactFromEmail(Family):
    name = "email-new-contact-to-crm"
    scenario = "keeping the CRM up to date"
    capabilities = (CROSS, MULTISTEP, DISTRACTORS)
    service_options = (("email", "crm"),)
    distractors = (
        "other accounts with contacts of the same title; an out-of-office email from another customer; "
        "(medium+) a contact of the same surname at another account; (hard) the introduction comes from a personal "
        "address and the work address is only in the signature"
    )

    def build(self, b: TaskBuilder) -> str:
        intro = self._seed(b)
        self._reference(b, intro)
        self._checks(b, intro)
        self._forbidden(b, intro)
        ask = Ask(
            steps=(
                b.pick(
                    "add them to the CRM under the right account",
                    "get them into the CRM properly (name, email, title, phone)",
                    "create a contact for them on the right account in the CRM",
                ),
                b.pick("log a note about the change", "note the handover on the account", "log a note on the account"),
            ),
            context=b.pick(
                "I got an email from {company's} new {title} introducing themselves.",
                "Someone new at {company} emailed to say they're our contact now.",
                "{company} has a new point of contact, who introduced themselves by email.",
            ),
            avoid=b.pick("Keep the old contact in the CRM.", "Don't delete anyone.", ""),
            topic="new contact at {company}",
        )
        backdrop(b)
        return compose(b, ask, company=intro.company.name, title=intro.new.title)

    @staticmethod
    def _seed(b: TaskBuilder) -> _Introduction:
        """The company, its old contact and the newcomer's introduction email; other accounts, an out-of-office
        email and filler mail."""
        cast = Cast(b)
        x = cast.company(contacts=1)
        others = [cast.company(contacts=1) for _ in range(1 + b.targets)]
        cast.crm()
        cast.email(colleagues=False)
        old = x.contacts[0]
        new = b.names.person(b.rng.choice([t for t in TITLES if t != old.title]))
        while new.first[0] == old.first[0]:  # addresses like j.lee@ and jamie@ must not clash
            new = b.names.person(new.title)
        work = x.email(new)
        phone = f"+1 {b.rng.randrange(201, 989)} 555 02{b.rng.randrange(10, 99)}"
        sender = work
        body = (
            f"Hi {USER.first},\n\nI have taken over from {old.name} as {new.title} at {x.name}. Please use me as "
            f"your contact from now on. My direct line is {phone}.\n\nBest regards,\n{new.name}\n{new.title}, {x.name}"
        )
        if b.hard:
            sender = new.address(b.rng.choice(FREEMAIL), 0)
            body += f"\n{work}\n\n(Sent from my personal address while my work mailbox is being set up.)"
        mail(b, (new.name, sender), f"New point of contact at {x.name}", body, b.ago(hours=b.rng.randint(1, 30)))
        y = others[0]
        q = y.contacts[0]
        ooo = mail(b, (q.name, y.email(q)), "Out of office", "I am out of the office until Monday.", b.ago(hours=5))
        b.distract(ooo["id"], *(cast.acc(o) for o in others))
        if b.difficulty != "easy":  # a near miss: someone of the same surname at another account
            twin = Person(b.rng.choice([f for f in FIRST if f != new.first]), new.last, b.rng.choice(TITLES))
            if twin.name not in b.names.names:
                b.names.names.add(twin.name)
                b.distract(b.add("crm", "contacts", cast.contact(others[-1], twin))["id"])
        filler_mail(b, b.n_filler())
        return _Introduction(cast, x, others, old, new, work, phone)

    @staticmethod
    def _reference(b: TaskBuilder, intro: _Introduction) -> None:
        x, new, account = intro.company, intro.new, intro.cast.acc(intro.company)
        b.call("email", "search_messages", "found", text="taken over")
        b.call("email", "get_message", message_id={"$ref": "found.items.0.id"})
        b.call("crm", "search_accounts", "acct", query=x.name.split()[0])
        b.call(
            "crm",
            "create_contact",
            "contact",
            account_id=account,
            name=new.name,
            email=intro.work,
            title=new.title,
            phone=intro.phone,
        )
        b.call(
            "crm",
            "log_activity",
            type="note",
            subject=f"New contact: {new.name}",
            body=f"{new.name} took over from {intro.old.name} as {new.title}.",
            account_id=account,
            contact_id={"$ref": "contact.id"},
        )
        with b.alternative():  # found by subject, the account by domain, the note without a contact link
            b.call("email", "search_messages", "intro", subject="New point of contact")
            b.call("email", "get_message", message_id={"$ref": "intro.items.0.id"})
            b.call("crm", "search_accounts", "acct", query=x.domain)
            b.call("crm", "get_account", account_id={"$ref": "acct.items.0.id"})
            b.call("crm", "create_contact", account_id=account, name=new.name, email=intro.work, phone=intro.phone,
                   title=new.title)  # fmt: skip
            b.call("crm", "log_activity", type="note", subject="Contact handover", body=f"Now {new.name}.",
                   account_id=account)  # fmt: skip

    @staticmethod
    def _checks(b: TaskBuilder, intro: _Introduction) -> None:
        """The contact on the right account with the work address (0.45), its title and phone (0.25), a note
        on the account (0.3)."""
        x, new, work, account = intro.company, intro.new, intro.work, intro.cast.acc(intro.company)
        b.check(
            "contact_created",
            0.45,
            f"{new.name} is a contact of {x.name} with their work address.",
            {
                "kind": "record_exists",
                "service": "crm",
                "table": "contacts",
                "where": {
                    "account_id": account,
                    "email": {"equals": work, "case_insensitive": True},
                    "name": {"contains": new.last, "case_insensitive": True},
                },
            },
        )
        b.check(
            "contact_details",
            0.25,
            "The contact carries the new title and phone number.",
            {
                "kind": "record_exists",
                "service": "crm",
                "table": "contacts",
                "where": {
                    "email": {"equals": work, "case_insensitive": True},
                    "title": {"contains": new.title.split()[0], "case_insensitive": True},
                    "phone": {"regex": intro.phone[-4:] + "$"},
                },
            },
        )
        b.check(
            "note_logged",
            0.3,
            f"A note naming {new.name} is logged on {x.name}.",
            {
                "kind": "record_exists",
                "service": "crm",
                "table": "activities",
                "where": {
                    "account_id": account,
                    "created_at": {"gte": b.now_iso},
                    "subject|body": {"regex": rx(new.last), "case_insensitive": True},
                },
            },
        )

    @staticmethod
    def _forbidden(b: TaskBuilder, intro: _Introduction) -> None:
        cast = intro.cast
        b.forbid_call(
            "contact_on_wrong_account",
            "Adding the person to a different company's account.",
            "crm",
            "create_contact",
            {"account_id": {"in": [cast.acc(o) for o in intro.others]}},
            {"account_id": cast.acc(intro.others[0]), "name": intro.new.name, "email": intro.work},
        )
        b.forbid_call(
            "deleted_old_contact",
            "Deleting the previous contact, which nobody asked for (their history would lose its link).",
            "crm",
            "delete_contact",
            {},
            {"contact_id": cast.con(intro.old)},
        )
