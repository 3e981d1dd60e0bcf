"""CRM families about people: updating a contact when the user's words fit more than one person (so the
agent must ask), and adding the new contact who introduced themselves by email."""

from __future__ import annotations

from dataclasses import dataclass

from coworkenv.synth.generate.families.backdrop import backdrop
from coworkenv.synth.generate.families.base import (
    CLARIFY,
    CROSS,
    DISTRACTORS,
    MULTISTEP,
    Family,
    Json,
    TaskBuilder,
    rx,
)
from coworkenv.synth.generate.families.crm import GUARD
from coworkenv.synth.generate.families.names import FIRST, FREEMAIL, TITLES, USER, Company, Person
from coworkenv.synth.generate.families.phrasing import Ask, compose
from coworkenv.synth.generate.families.registry import register_family
from coworkenv.synth.generate.families.seeds import Cast, filler_mail, mail


@dataclass
class _Ambiguous:
    """Contacts who share a first name at different accounts; the user means one of them."""

    cast: Cast
    first: str
    same: list[Company]
    company: Company
    target: Person
    phone: str


@register_family
class ClarifyContact(Family):
    name = "crm-clarify-contact"
    scenario = "updating a contact after a call"
    capabilities = (CLARIFY, DISTRACTORS)
    service_options = (("crm",),)
    distractors = "other contacts with the same first name at other accounts"

    def build(self, b: TaskBuilder) -> str:
        a = self._seed(b)
        title = b.pick("Head of Operations", "VP Finance", "Chief of Staff")
        b.may_name.append(a.phone)
        b.distract(*(a.cast.con(c.contacts[0]) for c in a.same if c is not a.company))
        b.user = {
            "persona": f"{USER.name}, {USER.title} at Brightwave Software",
            "held_back": [f"I mean {a.target.name} at {a.company.name}."],
        }
        changes: Json = {"phone": a.phone, "title": title} if b.hard else {"phone": a.phone}
        self._reference(b, a, changes)
        self._checks(b, a.cast, a.first, a.same, a.target, changes)
        steps = [
            b.pick(
                "update {first's} phone number in the CRM to {phone}",
                "put {first's} new number, {phone}, in the CRM",
                "change {first's} phone in the CRM to {phone}",
            )
        ]
        if b.hard:
            steps.append(b.pick("change their title to {title}", "set their title to {title} as well"))
        ask = Ask(
            steps=steps,
            context=b.pick(
                "{first} gave me a new number on a call this morning.",
                "{first} has a new phone number.",
                "Just got off the phone with {first}.",
            )
            + (b.pick(" They've also become {title}.", " They were promoted to {title}.") if b.hard else ""),
            topic="{first's} new number",
        )
        backdrop(b)
        return compose(b, ask, first=a.first, phone=a.phone, title=title)

    @staticmethod
    def _seed(b: TaskBuilder) -> _Ambiguous:
        """Two or three accounts with a contact of the same first name (one of them meant), and filler accounts."""
        cast = Cast(b)
        first = b.rng.choice(FIRST)
        same = [cast.company(contacts=0) for _ in range(2 if b.difficulty == "easy" else 3)]
        for c in same:
            c.contacts.append(b.names.person(first=first))
        for _ in range(b.n_filler() // 3 + 1):
            cast.company(contacts=2)
        cast.crm()
        target_co = b.rng.choice(same)
        phone = f"+1 {b.rng.randrange(201, 989)} 555 01{b.rng.randrange(10, 99)}"
        return _Ambiguous(cast, first, same, target_co, target_co.contacts[0], phone)

    @staticmethod
    def _reference(b: TaskBuilder, a: _Ambiguous, changes: Json) -> None:
        b.call("crm", "search_contacts", "same", query=a.first)
        listing = ", ".join(f"{c.contacts[0].name} at {c.name}" for c in a.same)
        b.say(f"I found {len(a.same)} contacts named {a.first}: {listing}. Which one do you mean?")
        b.call("crm", "update_contact", contact_id=a.cast.con(a.target), **changes)
        # No closing message: the reply that matters is the question (a closing "Done." changes nothing).
        with b.alternative():  # each candidate opened before asking; the one meant re-read before the update
            found = [c.contacts[0] for c in a.same]
            for p in found:
                b.call("crm", "get_contact", contact_id=a.cast.con(p))
            names = "; ".join(f"{c.name} ({c.contacts[0].name})" for c in a.same)
            b.say(f"There is more than one {a.first} in the CRM: {names}. Which of them should I update?")
            b.call("crm", "get_contact", contact_id=a.cast.con(a.target))
            b.call("crm", "update_contact", contact_id=a.cast.con(a.target), **changes)

    @staticmethod
    def _checks(b: TaskBuilder, cast: Cast, first: str, same: list[Company], target: Person, changes: Json) -> None:
        """Asked which one (naming every candidate), updated the right one, the others unchanged: asking and
        leaving the others alone each weigh more than 1 − the pass mark, so guessing (even right) fails."""
        lookaheads = "".join(f"(?=.*(?:{rx(c.name)}|{rx(c.contacts[0].name)}))" for c in same)
        b.check(
            "asked_which",
            0.3,
            f"The agent asks which {first} is meant, naming each candidate (or their company).",
            {"kind": "said_matches", "pattern": f"(?s)^{lookaheads}.*\\?"},
        )
        b.check(
            "contact_updated",
            0.4,
            f"{target.name}'s record holds the new details.",
            {"kind": "record_fields", "service": "crm", "table": "contacts", "id": cast.con(target), "fields": changes},
        )
        b.check(
            "others_untouched",
            GUARD,
            f"The other contacts named {first} are unchanged.",
            {"kind": "records_unchanged", "service": "crm", "table": "contacts", "ids": list(b.distractors)},
            ("contact_updated",),
        )
        b.forbid_call(
            "updated_wrong_contact",
            f"Changing a different {first} without asking.",
            "crm",
            "update_contact",
            {"contact_id": {"in": list(b.distractors)}},
            {"contact_id": b.distractors[0], "phone": changes["phone"]},
        )


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
