"""CRM families: closing a deal the customer decided on, offboarding a churned account, and updating a
contact when the user's words fit more than one person (so the agent must ask)."""

from __future__ import annotations

from datetime import timedelta

from coworkenv.servers.crm.models import PROBABILITY
from coworkenv.synth.generate.families.base import CLARIFY, CROSS, DISTRACTORS, MULTISTEP, Family, Json, TaskBuilder, rx
from coworkenv.synth.generate.families.names import FIRST, USER, Company, Person
from coworkenv.synth.generate.families.seeds import Cast, mail
from coworkenv.synth.generate.families.texts import LOSS_REASONS


def opportunity(
    b: TaskBuilder, cast: Cast, c: Company, label: str, stage: str, amount: int, loss_reason: str | None = None
) -> Json:
    closed = stage.startswith("closed")
    close = (b.now + timedelta(days=-b.rng.randint(20, 200) if closed else b.rng.randint(5, 60))).date().isoformat()
    created = b.ago(days=b.rng.randint(60, 300) if closed else b.rng.randint(20, 90))
    updated = b.ago(days=b.rng.randint(2, 15)) if not closed else f"{close}T16:00:00Z"
    record = {
        "id": b.uid("opp_", f"{c.key}_{label.split()[-1]}"),
        "account_id": cast.acc(c),
        "name": f"{c.name} - {label}",
        "stage": stage,
        "amount": amount,
        "probability": PROBABILITY[stage],
        "close_date": close,
        "owner_id": cast.owner[c.key].key,
        "next_step": "" if closed else b.pick("Send the quote", "Legal review of the MSA", "Pricing call"),
        "loss_reason": loss_reason,
        "closed_at": f"{close}T16:00:00Z" if closed else None,
        "created_at": min(created, updated),
        "updated_at": updated,
    }
    return b.add("crm", "opportunities", record)


def _amount(b: TaskBuilder) -> int:
    return b.rng.randrange(12, 250) * 100_000


GUARD = 0.3
"""Weight of the check that the distractors are left alone: more than 1 − the pass mark, so an agent that
acts on one fails the task however well it does the rest."""


def _others_unchanged(b: TaskBuilder, where: Json, requires: tuple[str, ...]) -> None:
    b.check(
        "other_deals_untouched",
        GUARD,
        "No other opportunity changed.",
        {"kind": "records_unchanged", "service": "crm", "table": "opportunities", "where": where},
        requires,
    )


class CloseDeal(Family):
    name = "crm-close-deal"
    scenario = "sales pipeline update"
    capabilities = (DISTRACTORS, MULTISTEP, CROSS)
    service_options = (("crm",), ("email", "crm"))
    distractors = (
        "another open deal of the same account (an add-on); another customer's renewal in the same stage; "
        "(email) that customer's email with the opposite decision; (hard) last year's lost renewal"
    )

    def build(self, b: TaskBuilder) -> str:
        cast = Cast(b)
        x = cast.company(contacts=1)
        rivals = [cast.company() for _ in range(1 if b.difficulty == "easy" else 2)]
        cast.crm()
        won = b.rng.random() < 0.6
        reason = b.rng.choice(LOSS_REASONS)
        deal, decoys = self._deals(b, cast, x, rivals)
        p = x.contacts[0]
        via_email = "email" in b.services
        b.call("crm", "search_opportunities", "deals", query=x.name.split()[0], is_open=True)
        b.call("crm", "search_contacts", "who", query=p.last)
        if via_email:
            cast.email(colleagues=False)
            msg = self._emails(b, cast, x, rivals, won, reason)
            b.call("email", "search_messages", "mails", from_address=x.domain)
            b.call("email", "get_message", message_id=msg)
        kind = "email" if via_email else "call"
        self._close(b, cast, x, deal, won, reason, kind)
        self._checks(b, cast, x, deal, decoys, won, kind)
        if via_email:
            return b.pick(
                f"{p.first} from {x.name} replied about the renewal. Please update the deal in the CRM to match "
                "and log the email on it.",
                f"There's an email from {p.first} at {x.name} about their renewal. Record their decision on the "
                "deal in the CRM and log the email there too.",
            )
        said = "they accept the renewal quote as sent" if won else f"they won't renew ({reason.lower()})"
        return b.pick(
            f"{p.first} from {x.name} just called: {said}. Please update the renewal in the CRM and log the call on the deal.",
            f"Quick CRM update: I spoke to {p.name} at {x.name} and {said}. Close out the renewal accordingly and log the call.",
        )

    @staticmethod
    def _deals(b: TaskBuilder, cast: Cast, x: Company, rivals: list[Company]) -> tuple[Json, list[Json]]:
        """The renewal to close, and the decoys: an add-on of the same account, rivals' renewals in the same
        stage; (hard) last year's lost renewal."""
        year = b.now.year
        deal = opportunity(b, cast, x, f"{year} renewal", b.pick("proposal", "negotiation"), _amount(b))
        decoys = []
        if b.difficulty != "easy":
            decoys.append(opportunity(b, cast, x, b.pick("Analytics add-on", "Seat expansion"), "proposal", _amount(b)))
        for r in rivals:
            decoys.append(opportunity(b, cast, r, f"{year} renewal", deal["stage"], _amount(b)))
        if b.hard:
            opportunity(b, cast, x, f"{year - 1} renewal", "closed_lost", _amount(b), b.rng.choice(LOSS_REASONS))
        b.distract(*(d["id"] for d in decoys))
        return deal, decoys

    @staticmethod
    def _close(b: TaskBuilder, cast: Cast, x: Company, deal: Json, won: bool, reason: str, kind: str) -> None:
        """The reference's writes: close the renewal, log the call or email on it."""
        p = x.contacts[0]
        if won:
            b.call("crm", "update_opportunity", opportunity_id=deal["id"], stage="closed_won")
        else:
            b.call("crm", "update_opportunity", opportunity_id=deal["id"], stage="closed_lost", loss_reason=reason)
        outcome = "accepted the renewal quote" if won else f"declined the renewal: {reason.lower()}"
        b.call(
            "crm",
            "log_activity",
            type=kind,
            subject=f"{p.first} {outcome.split(':')[0]}",
            body=f"{p.name} {outcome}.",
            opportunity_id=deal["id"],
            contact_id=cast.con(p),
        )

    @staticmethod
    def _checks(b: TaskBuilder, cast: Cast, x: Company, deal: Json, decoys: list[Json], won: bool, kind: str) -> None:
        """The renewal closed the right way, the activity logged (and linked to the contact), every other deal
        unchanged (enough weight that touching one fails the task); closing a decoy is forbidden."""
        p = x.contacts[0]
        fields: Json = {"stage": "closed_won", "amount": deal["amount"]} if won else {"stage": "closed_lost"}
        if not won:
            fields["loss_reason"] = {"exists": True}
        b.check(
            "deal_closed",
            0.4,
            f"The {x.name} renewal is closed {'won' if won else 'lost'}.",
            {"kind": "record_fields", "service": "crm", "table": "opportunities", "id": deal["id"], "fields": fields},
        )
        logged = {"type": kind, "opportunity_id": deal["id"]}
        b.check(
            "activity_logged",
            0.2,
            f"The {kind} is logged on the renewal.",
            {"kind": "record_exists", "service": "crm", "table": "activities", "where": logged},
        )
        b.check(
            "activity_names_contact",
            0.1,
            f"The logged {kind} is linked to {p.name}.",
            {
                "kind": "record_exists",
                "service": "crm",
                "table": "activities",
                "where": {**logged, "contact_id": cast.con(p)},
            },
        )
        _others_unchanged(b, {"id": {"not": {"equals": deal["id"]}}}, ("deal_closed",))
        b.forbid_call(
            "closed_wrong_deal",
            "Closing a deal nobody decided on.",
            "crm",
            "update_opportunity",
            {
                "opportunity_id": {"in": [d["id"] for d in decoys]},
                "stage": {"in": ["closed_won", "closed_lost"]},
            },
            {"opportunity_id": decoys[0]["id"], "stage": "closed_won"},
        )

    @staticmethod
    def _emails(b: TaskBuilder, cast: Cast, x: Company, rivals: list[Company], won: bool, reason: str) -> str:
        p = x.contacts[0]
        yes = "we're happy to go ahead with the renewal as quoted. Please send over the paperwork."
        no = f"we have decided not to renew this year. {reason}."
        body = f"Hi Dana,\n\nThanks for the renewal quote. After discussing it internally, {yes if won else no}\n\nBest,\n{p.name}"
        target = mail(b, (p.name, x.email(p)), "Re: Your renewal quote", body, b.ago(hours=b.rng.randint(1, 20)))
        mail(
            b,
            (p.name, x.email(p)),
            "Invoice copy",
            f"Hi Dana, could you resend last month's invoice?\n\n{p.first}",
            b.ago(days=b.rng.randint(8, 20)),
            unread=False,
        )
        r = rivals[0]
        q = r.contacts[0]
        other = f"Hi Dana,\n\nAbout the renewal: {no if won else yes}\n\n{q.name}"
        decoy = mail(b, (q.name, r.email(q)), "Re: Your renewal quote", other, b.ago(hours=b.rng.randint(2, 30)))
        b.distract(decoy["id"])
        return str(target["id"])


class ChurnAccount(Family):
    name = "crm-churn-account"
    scenario = "account offboarding"
    capabilities = (MULTISTEP, DISTRACTORS)
    service_options = (("crm",),)
    distractors = "other accounts' open deals with the same owner; another account in the same industry; (hard) a won deal of the churning account"

    def build(self, b: TaskBuilder) -> str:
        cast = Cast(b)
        owner = b.rng.choice(cast.managers)
        x = cast.company(b.pick("business", "starter"), owner=owner)
        others = [cast.company(owner=owner) for _ in range(1 + (b.difficulty != "easy"))]
        cast.crm()
        reason = b.rng.choice(LOSS_REASONS)
        open_deals = self._deals(b, cast, x, others)

        b.call("crm", "search_accounts", "acct", query=x.name.split()[0])
        b.call("crm", "get_account", account_id={"$ref": "acct.items.0.id"})
        for d in open_deals:
            b.call("crm", "update_opportunity", opportunity_id=d["id"], stage="closed_lost", loss_reason=reason)
        b.call("crm", "update_account", account_id=cast.acc(x), status="churned")
        if b.hard:
            b.call(
                "crm",
                "log_activity",
                type="note",
                subject="Account churned",
                body=f"{x.name} is not renewing: {reason}.",
                account_id=cast.acc(x),
            )
        self._checks(b, cast, x, others, open_deals)
        note = " and log a note on the account saying why" if b.hard else ""
        return b.pick(
            f"{x.name} has told us they won't renew ({reason.lower()}). Please mark them as churned in the CRM{note}.",
            f"We lost {x.name}: {reason.lower()}. Can you offboard them in the CRM (mark the account churned){note}?",
        )

    @staticmethod
    def _deals(b: TaskBuilder, cast: Cast, x: Company, others: list[Company]) -> list[Json]:
        """The churning account's open deals (returned); (hard) its won deal of last year; the other accounts'
        open deals."""
        labels = b.rng.sample(["Seat expansion", "Analytics add-on", f"{b.now.year} renewal", "Training package"], 3)
        open_deals = [
            opportunity(b, cast, x, labels[i], b.pick("prospecting", "qualification", "proposal"), _amount(b))
            for i in range(1 if b.difficulty == "easy" else 2)
        ]
        won = [opportunity(b, cast, x, f"{b.now.year - 1} renewal", "closed_won", _amount(b))] if b.hard else []
        decoys = [opportunity(b, cast, o, labels[-1], "proposal", _amount(b)) for o in others]
        b.distract(*(cast.acc(o) for o in others), *(d["id"] for d in decoys + won))
        return open_deals

    @staticmethod
    def _checks(b: TaskBuilder, cast: Cast, x: Company, others: list[Company], open_deals: list[Json]) -> None:
        """The account churned and its open deals lost (equal weight: either alone fails), (hard) the note;
        every other deal unchanged (enough weight that touching one fails the task)."""
        work = 0.3 if b.hard else 0.35
        b.check(
            "account_churned",
            work,
            f"{x.name} is marked churned.",
            {
                "kind": "record_fields",
                "service": "crm",
                "table": "accounts",
                "id": cast.acc(x),
                "fields": {"status": "churned"},
            },
        )
        for i, d in enumerate(open_deals):
            b.check(
                f"deal_lost_{i + 1}",
                work / len(open_deals),
                f"The open deal '{d['name']}' is closed lost with a reason.",
                {
                    "kind": "record_fields",
                    "service": "crm",
                    "table": "opportunities",
                    "id": d["id"],
                    "fields": {"stage": "closed_lost", "loss_reason": {"exists": True}},
                },
            )
        if b.hard:
            b.check(
                "note_logged",
                1 - GUARD - 2 * work,
                "A note about the churn is logged on the account.",
                {
                    "kind": "record_exists",
                    "service": "crm",
                    "table": "activities",
                    "where": {"account_id": cast.acc(x), "type": "note", "created_at": {"gte": b.now_iso}},
                },
            )
        closing = [d["id"] for d in open_deals]
        _others_unchanged(b, {"id": {"not": {"in": closing}}}, ("account_churned",))
        b.forbid_call(
            "churned_wrong_account",
            "Marking another customer as churned.",
            "crm",
            "update_account",
            {"account_id": {"in": [cast.acc(o) for o in others]}, "status": "churned"},
            {"account_id": cast.acc(others[0]), "status": "churned"},
        )


class ClarifyContact(Family):
    name = "crm-clarify-contact"
    scenario = "updating a contact after a call"
    capabilities = (CLARIFY, DISTRACTORS)
    service_options = (("crm",),)
    distractors = "other contacts with the same first name at other accounts"

    def build(self, b: TaskBuilder) -> str:
        cast = Cast(b)
        first = b.rng.choice(FIRST)
        same = [cast.company(contacts=0) for _ in range(2 if b.difficulty == "easy" else 3)]
        for c in same:
            c.contacts.append(b.names.person(first=first))
        for _ in range(b.n_filler() // 3 + 1):
            cast.company(contacts=2)
        cast.crm()
        target_co = b.rng.choice(same)
        target = target_co.contacts[0]
        others = [c for c in same if c is not target_co]
        phone = f"+1 {b.rng.randrange(201, 989)} 555 01{b.rng.randrange(10, 99)}"
        title = b.pick("Head of Operations", "VP Finance", "Chief of Staff")
        b.may_name.append(phone)
        b.distract(*(cast.con(c.contacts[0]) for c in others))
        b.user = {
            "persona": f"{USER.name}, {USER.title} at Brightwave Software",
            "held_back": [f"I mean {target.name} at {target_co.name}."],
        }

        b.call("crm", "search_contacts", "same", query=first)
        listing = ", ".join(f"{c.contacts[0].name} at {c.name}" for c in same)
        b.say(f"I found {len(same)} contacts named {first}: {listing}. Which one do you mean?")
        changes: Json = {"phone": phone, "title": title} if b.hard else {"phone": phone}
        b.call("crm", "update_contact", contact_id=cast.con(target), **changes)
        # No closing message: the reply that matters is the question (a closing "Done." changes nothing).
        self._checks(b, cast, first, same, target, changes)
        also = f" They've also become {title}." if b.hard else ""
        return b.pick(
            f"Please update {first}'s phone number in the CRM to {phone}; they gave me the new number on a call this morning.{also}",
            f"{first} has a new phone number: {phone}. Can you put it in the CRM?{also}",
        )

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
