"""Money that email asks us to move: paying a vendor's new invoice once (email + payments)."""

from __future__ import annotations

from dataclasses import dataclass

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import (
    CROSS,
    DISTRACTORS,
    MULTISTEP,
    REPORT,
    Family,
    Json,
    TaskBuilder,
    money,
    possessive,
)
from coworkenv.synth.generate.families.kit.names import Vendor
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.seeds import Cast, bank_account, filler_mail, mail, vendor_record


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
