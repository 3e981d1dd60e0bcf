"""Money that email asks us to move: paying a vendor's new invoice once (email + payments), and contesting a
card dispute with the customer's own email as evidence (payments + email)."""

from __future__ import annotations

from dataclasses import dataclass

from coworkenv.synth.generate.families.backdrop import backdrop
from coworkenv.synth.generate.families.base import (
    CROSS,
    DISTRACTORS,
    MULTISTEP,
    REPORT,
    WINDOW,
    Family,
    Json,
    TaskBuilder,
    money,
    possessive,
)
from coworkenv.synth.generate.families.names import USER, Company, Person, Vendor
from coworkenv.synth.generate.families.phrasing import Ask, compose
from coworkenv.synth.generate.families.registry import register_family
from coworkenv.synth.generate.families.seeds import (
    Cast,
    bank_account,
    charge,
    filler_charges,
    filler_mail,
    mail,
    vendor_record,
)
from coworkenv.synth.generate.families.texts import PLANS


def _invoice(
    b: TaskBuilder, v: Vendor, number: str, amount: int, date: str, unread: bool, reminder: bool = False
) -> Json:
    subject = f"{'Reminder: ' if reminder else ''}Invoice {number} from {v.name}"
    body = (
        f"Hello,\n\nPlease find attached invoice {number} for {v.kind} ({money(amount)}), due within 30 days.\n\n"
        f"Kind regards,\nAccounts team, {v.name}"
    )
    if reminder:
        body = (
            f"Hello,\n\nOur records show invoice {number} ({money(amount)}) as still open. Please pay it.\n\n{v.name}"
        )
    return mail(b, (f"{v.name} Billing", f"billing@{v.domain}"), subject, body, date, unread=unread)


@register_family
class VendorInvoicePayout(Family):
    name = "vendor-invoice-payout"
    scenario = "paying a supplier"
    capabilities = (CROSS, DISTRACTORS, MULTISTEP, REPORT)
    service_options = (("email", "payments"),)
    distractors = (
        "the vendor's previous invoice, already paid (a payout exists); another vendor's invoice nobody asked "
        "to pay; (hard) a reminder claiming the paid invoice is still open"
    )

    def build(self, b: TaskBuilder) -> str:
        cast = Cast(b)
        v, w = cast.vendor(), cast.vendor()
        cast.email(colleagues=False)
        bills = self._seed(b, v, w)
        self._reference(b, v, bills)
        self._checks(b, v, w, bills)
        ask = Ask(
            steps=(b.pick("pay it", "pay the latest {vendor} invoice from my inbox", "settle their new invoice"),),
            context=b.pick(
                "{vendor} sent us a new invoice.",
                "There's a new invoice from {vendor} in my inbox.",
                "{vendor} is waiting on payment for their latest invoice.",
            ),
            avoid=b.pick(
                "Don't pay anything we've already paid.",
                "Make sure we haven't paid it already.",
                "Only pay it if it isn't paid yet.",
            ),
            report=b.pick("tell me how much went out", "tell me the amount", "let me know what you paid"),
            topic="{vendor} invoice",
        )
        backdrop(b)
        return compose(b, ask, vendor=v.name)

    @staticmethod
    def _reference(b: TaskBuilder, v: Vendor, bills: _Bills) -> None:
        b.call("email", "search_messages", "invoices", from_address=v.name.split()[0])
        b.call("email", "get_message", message_id=bills.new_id)
        b.call("payments", "list_vendors", "vendors", query=v.name.split()[0])
        b.call("payments", "list_payouts", "paid", vendor={"$ref": "vendors.items.0.id"})
        b.call(
            "payments", "create_payout", vendor_id=bills.ven, amount=bills.amount, description=f"Invoice {bills.new_no}"
        )
        extra = f" {bills.old_no} was already paid, so I did not pay it again." if b.hard else ""
        b.say(
            f"I paid {possessive(v.name)} invoice {bills.new_no}: {money(bills.amount)} to the account on file.{extra}"
        )
        with b.alternative():  # payouts checked first, the invoice found by its number's subject, the vendor read
            b.call("payments", "list_payouts", vendor=bills.ven)
            b.call("email", "search_messages", "bills", subject="Invoice", is_unread=True)
            b.call("email", "get_message", message_id=bills.new_id)
            b.call("payments", "get_vendor", vendor_id=bills.ven)
            b.call("payments", "create_payout", vendor_id=bills.ven, amount=bills.amount, description=bills.new_no)
            b.say(f"Paid {bills.new_no}: {money(bills.amount)}.")

    @staticmethod
    def _seed(b: TaskBuilder, v: Vendor, w: Vendor) -> _Bills:
        """Both vendors with bank accounts; v's old invoice (paid: a payout exists) and new one; w's invoice;
        (hard) a reminder about v's old, paid invoice; filler mail."""
        accounts = {}
        for vendor in (v, w):
            ba = bank_account(b, f"ven_{vendor.key}", vendor.name)
            vendor_record(b, vendor, ba["id"])
            accounts[vendor.key] = ba["id"]
        ven, other = f"ven_{v.key}", f"ven_{w.key}"
        n0 = b.rng.randrange(1000, 8000)
        old_no, new_no, w_no = f"INV-{n0}", f"INV-{n0 + b.rng.randint(3, 40)}", f"INV-{b.rng.randrange(100, 999)}"
        old_amount = b.rng.randrange(200, 9000) * 100 + b.rng.choice((0, 50))
        amount = old_amount + b.rng.randrange(5, 80) * 100
        w_amount = b.rng.randrange(200, 9000) * 100
        _invoice(b, v, old_no, old_amount, b.ago(days=b.rng.randint(25, 40)), unread=False)
        payout = {"id": b.uid("po_"), "vendor": ven, "bank_account": accounts[v.key], "amount": old_amount}
        payout |= {"status": "paid", "description": f"Invoice {old_no}"}
        payout |= {"arrival_date": b.ago(days=b.rng.randint(5, 12)), "created": b.ago(days=b.rng.randint(14, 20))}
        b.add("payments", "payouts", payout)
        new = _invoice(b, v, new_no, amount, b.ago(days=b.rng.randint(1, 4)), unread=True)
        decoys = [_invoice(b, w, w_no, w_amount, b.ago(days=b.rng.randint(1, 6)), unread=True)]
        if b.hard:
            decoys.append(_invoice(b, v, old_no, old_amount, b.ago(hours=b.rng.randint(2, 20)), True, reminder=True))
        b.distract(*(d["id"] for d in decoys), other)
        filler_mail(b, b.n_filler())
        return _Bills(ven, other, old_no, new_no, old_amount, amount, w_amount, new["id"])

    @staticmethod
    def _checks(b: TaskBuilder, v: Vendor, w: Vendor, bills: _Bills) -> None:
        """The new invoice paid (0.5), once (0.2), and the amount said (0.3: the answer is part of the task, so
        paying and saying only "Done." scores 0.7); paying the old invoice again or the other vendor is
        forbidden."""
        ven, amount, old_amount = bills.ven, bills.amount, bills.old_amount
        b.check(
            "invoice_paid",
            0.5,
            f"{possessive(v.name)} new invoice is paid in full.",
            {"kind": "record_exists", "service": "payments", "table": "payouts",
             "where": {"vendor": ven, "amount": amount, "created": {"gte": b.now_iso}}},
        )  # fmt: skip
        b.check(
            "paid_once",
            0.2,
            "Exactly one payout is made.",
            {"kind": "record_count", "service": "payments", "table": "payouts",
             "where": {"created": {"gte": b.now_iso}}, "count": 1},
            ("invoice_paid",),
        )  # fmt: skip
        # Both invoices together is a wrong answer (the other vendor's amount is not: a helpful agent may
        # mention that invoice as left unpaid).
        wrong = [amount + old_amount] if amount + old_amount != bills.w_amount else []
        b.check(
            "says_amount",
            0.3,
            "The agent says how much was paid.",
            {"kind": "said_value", "value": amount, "cents": True, "wrong_values": wrong},
            ("invoice_paid",),
        )
        b.forbid_call(
            "paid_twice",
            f"Paying {bills.old_no} again, which was already paid.",
            "payments",
            "create_payout",
            {"vendor_id": ven, "amount": old_amount},
            {"vendor_id": ven, "amount": old_amount},
        )
        b.forbid_call(
            "paid_other_vendor",
            f"Paying {w.name}, which nobody asked for.",
            "payments",
            "create_payout",
            {"vendor_id": bills.other},
            {"vendor_id": bills.other, "amount": bills.w_amount},
        )


@dataclass(frozen=True)
class _Bills:
    """The vendor invoices of one task: the vendor paid (ven) and the other one, v's old (paid) and new invoice."""

    ven: str
    other: str
    old_no: str
    new_no: str
    old_amount: int
    amount: int
    w_amount: int
    new_id: str


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
