"""CRM: updating a contact when the user's words fit more than one person (so the agent must ask)."""

from __future__ import annotations

from dataclasses import dataclass

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import CLARIFY, DISTRACTORS, Family, Json, TaskBuilder, rx
from coworkenv.synth.generate.families.kit.crm_common import GUARD
from coworkenv.synth.generate.families.kit.names import FIRST, USER, Company, Person
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.seeds import Cast


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
