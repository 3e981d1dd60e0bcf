"""Contesting a card dispute with the customer's own email as evidence (payments + email)."""

from __future__ import annotations

from dataclasses import dataclass

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import (
    CROSS,
    DISTRACTORS,
    MULTISTEP,
    WINDOW,
    Family,
    Json,
    TaskBuilder,
    possessive,
)
from coworkenv.synth.generate.families.kit.names import USER, Company, Person
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.seeds import Cast, charge, filler_charges, filler_mail, mail
from coworkenv.synth.generate.families.kit.texts import PLANS

_PRAISES = (
    ("the {plan} has been working great for our team so far", r"working great|works great"),
    ("we've been using the {plan} every day since we signed up", r"every ?day|daily"),
    ("the {plan} is up and running and the team loves it", r"up and running|loves? it"),
)
"""What the customer wrote about using the plan, and a pattern for its telling words (quoted or paraphrased)."""
_DISPUTE_REASONS = {
    "product_not_received": "they never received the service",
    "unrecognized": "they don't recognise the charge",
    "subscription_canceled": "they had cancelled the subscription",
}


@dataclass(frozen=True)
class _Chargeback:
    """A customer's card dispute to contest, and their email that shows they use what they paid for."""

    company: Company
    plan: str
    reason: str
    paid: str
    dispute: Json
    decoys: list[Json]
    praise: str
    words: str
    """A pattern for the telling words of the praise."""
    usage: Json
    """The customer's email about using the plan."""
    dispute_customer: str


@register_family
class DisputeEvidence(Family):
    name = "dispute-evidence"
    scenario = "contesting a card dispute"
    capabilities = (CROSS, WINDOW, MULTISTEP, DISTRACTORS)
    service_options = (("payments", "email"),)
    distractors = (
        "another customer's dispute already under review; (medium+) another customer's dispute that also needs "
        "a response; the same customer's older, unrelated email"
    )

    def build(self, b: TaskBuilder) -> str:
        case = self._seed(b)
        self._reference(b, case)
        x, p = case.company, case.company.contacts[0]
        self._checks(b, x, p, case.dispute, case.decoys, case.usage, case.words)
        ask = Ask(
            steps=(
                b.pick("contest the dispute", "fight the chargeback", "submit evidence against the dispute"),
                b.pick("include that email as evidence", "use their email as evidence", "cite their email in it"),
            ),
            context=b.pick(
                "{company} disputed a charge with their bank, saying {said}. {first} emailed us afterwards about "
                "how they use it.",
                "We got a chargeback from {company} ({said}). That's not true - {first} wrote to me about using "
                "the {plan}.",
                "{company's} bank says {said}, but {first} told me by email how much they use the {plan}.",
            ),
            avoid=b.pick("Don't accept the dispute.", "Leave the other disputes alone.", ""),
            topic="{company} chargeback",
        )
        backdrop(b)
        return compose(b, ask, company=x.name, said=_DISPUTE_REASONS[case.reason], first=p.first, plan=case.plan)

    def _seed(self, b: TaskBuilder) -> _Chargeback:
        """The disputed charge and its dispute; other customers' disputes (decoys), filler charges; the
        customer's email about using the plan (see :meth:`_mails`)."""
        cast = Cast(b)
        x = cast.company(contacts=1)
        others = [cast.company(contacts=1) for _ in range(2)]
        cast.payments()
        cast.email(colleagues=False)
        p = x.contacts[0]
        plan, amount = b.rng.choice(PLANS)
        reason = b.rng.choice(sorted(_DISPUTE_REASONS))
        paid = b.ago(days=b.rng.randint(20, 40))
        ch = charge(b, cast.cus(x), amount, paid, plan, receipt=x.email(p))
        ch["disputed"] = True
        dp = self._dispute(b, ch, reason, "needs_response")
        decoys = []
        for i, o in enumerate(others[: 1 + (b.difficulty != "easy")]):
            oplan, oamount = b.rng.choice(PLANS)
            och = charge(b, cast.cus(o), oamount, b.ago(days=b.rng.randint(15, 50)), oplan)
            och["disputed"] = True
            status = "under_review" if i == 0 else "needs_response"
            decoys.append(self._dispute(b, och, b.rng.choice(sorted(_DISPUTE_REASONS)), status))
        b.distract(*(d["id"] for d in decoys))
        filler_charges(b, [cast.cus(c) for c in cast.companies], b.n_filler())
        praise, words = b.pick(*_PRAISES)
        praise = praise.format(plan=plan)
        usage = self._mails(b, x, p, plan, praise)
        return _Chargeback(x, plan, reason, paid, dp, decoys, praise, words, usage, cast.cus(x))

    @staticmethod
    def _reference(b: TaskBuilder, case: _Chargeback) -> None:
        x, p = case.company, case.company.contacts[0]
        b.call("payments", "search_customers", "customer", query=x.name.split()[0])
        b.call("payments", "list_disputes", "open", status=["needs_response", "warning_needs_response"])
        b.call("payments", "get_dispute", dispute_id=case.dispute["id"])
        b.call("email", "search_messages", "mails", from_address=x.domain)
        b.call("email", "get_message", message_id={"$ref": "mails.items.0.id"})
        evidence = {
            "customer_name": p.name,
            "customer_email_address": x.email(p),
            "product_description": f"Brightwave {case.plan}",
            "service_date": case.paid[:10],
            "customer_communication": f"On {b.spoken_day(case.usage['date'])} {p.name} wrote: '{case.praise}'.",
        }
        b.call("payments", "submit_dispute_evidence", dispute_id=case.dispute["id"], evidence=evidence, submit=True)
        with b.alternative():  # the dispute found through the charge; evidence staged, then submitted
            b.call("email", "search_messages", "mails", subject="Thanks for the")
            b.call("email", "get_message", message_id=case.usage["id"])
            b.call("payments", "list_charges", customer=case.dispute_customer, status="succeeded")
            b.call("payments", "list_disputes", charge=case.dispute["charge"])
            quote = {"customer_communication": f"Email of {case.usage['date'][:10]}: {case.praise}."}
            b.call("payments", "submit_dispute_evidence", dispute_id=case.dispute["id"], evidence=quote, submit=False)
            b.call("payments", "submit_dispute_evidence", dispute_id=case.dispute["id"], evidence=quote, submit=True)

    @staticmethod
    def _mails(b: TaskBuilder, x: Company, p: Person, plan: str, praise: str) -> Json:
        """The customer's email about using the plan (returned), an older unrelated one, and filler."""
        usage = mail(
            b,
            (p.name, x.email(p)),
            f"Thanks for the {plan}",
            f"Hi {USER.first},\n\nJust a note to say {praise}. Thanks for the help with the setup!\n\n{p.name}",
            b.ago(days=b.rng.randint(5, 15)),
            unread=False,
        )
        old = mail(
            b, (p.name, x.email(p)), "Meeting notes", "Notes from our kickoff attached.", b.ago(days=45), unread=False
        )
        b.distract(old["id"])
        filler_mail(b, b.n_filler() // 2)
        return usage

    @staticmethod
    def _checks(b: TaskBuilder, x: Company, p: Person, dp: Json, decoys: list[Json], usage: Json, words: str) -> None:
        """The dispute contested (0.45), with evidence that cites the customer's email (0.55): its telling
        words, its date or its id, which only reading the mailbox gives; forbidden: giving the dispute up or
        touching another customer's."""
        b.check(
            "submitted",
            0.45,
            f"{possessive(x.name)} dispute is contested (evidence submitted, under review).",
            {
                "kind": "record_fields",
                "service": "payments",
                "table": "disputes",
                "id": dp["id"],
                "fields": {"status": "under_review"},
            },
        )
        month, day = b.spoken_day(usage["date"]).split()
        on_day = f"{month[:3]}[a-z]*\\.? {day}(?!\\d)|(?<!\\d){day}(?:st|nd|rd|th)? {month[:3]}"
        cites = f"{words}|{usage['id']}|{usage['date'][:10]}|{on_day}"
        b.check(
            "email_as_evidence",
            0.55,
            f"The evidence's customer communication cites {possessive(p.first)} email: its words, its date or its "
            "id (which only reading the mailbox gives).",
            {
                "kind": "record_fields",
                "service": "payments",
                "table": "disputes",
                "id": dp["id"],
                "fields": {"evidence.customer_communication": {"regex": cites, "case_insensitive": True}},
            },
        )
        b.forbid_call(
            "accepted_dispute",
            "Accepting the dispute (giving the money up) instead of contesting it.",
            "payments",
            "close_dispute",
            {"dispute_id": dp["id"]},
            {"dispute_id": dp["id"]},
        )
        b.forbid_call(
            "touched_other_dispute",
            "Submitting evidence on another customer's dispute.",
            "payments",
            "submit_dispute_evidence",
            {"dispute_id": {"in": [d["id"] for d in decoys]}},
            {"dispute_id": decoys[0]["id"], "evidence": {"uncategorized_text": "Valid charge."}},
        )

    @staticmethod
    def _dispute(b: TaskBuilder, ch: Json, reason: str, status: str) -> Json:
        record = {
            "id": b.uid("dp_"),
            "charge": ch["id"],
            "amount": ch["amount"],
            "reason": reason,
            "status": status,
            "evidence": {"product_description": "Subscription"} if status == "under_review" else {},
            "evidence_due_by": b.ahead(days=b.rng.randint(3, 9)),
            "submission_count": 1 if status == "under_review" else 0,
            "created": b.ago(days=b.rng.randint(2, 6)),
        }
        return b.add("payments", "disputes", record)
