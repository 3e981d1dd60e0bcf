"""A cross-service family on the shared drive and payments: reconcile the month's invoice spreadsheet against
the payouts made, pay the invoices that have no successful payout (a failed or cancelled one does not count),
never pay one twice, and say how much went out."""

from __future__ import annotations

from dataclasses import dataclass

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import CROSS, DISTRACTORS, REPORT, Family, TaskBuilder, money
from coworkenv.synth.generate.families.kit.files_common import csv_text, drive
from coworkenv.synth.generate.families.kit.names import FINANCE, Vendor
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.seeds import Cast, bank_account, vendor_record

HEADER = ["vendor", "invoice", "amount_usd", "due"]


@dataclass(frozen=True)
class _Invoice:
    vendor: Vendor
    number: str
    amount: int

    @property
    def ven(self) -> str:
        return f"ven_{self.vendor.key}"


@register_family
class InvoiceReconcile(Family):
    name = "invoice-sheet-reconcile"
    scenario = "reconciling an invoice spreadsheet against payouts"
    capabilities = (CROSS, DISTRACTORS, REPORT)
    service_options = (("files", "payments"),)
    distractors = "invoices already paid; (medium, hard) a failed or cancelled payout that looks like a payment"

    def build(self, b: TaskBuilder) -> str:
        cast = Cast(b)
        d = drive(b)
        vendors = [cast.vendor() for _ in range(b.targets + 3)]
        banks = {}
        for v in vendors:
            banks[v.key] = bank_account(b, f"ven_{v.key}", v.name)["id"]
            vendor_record(b, v, banks[v.key])
        amounts = b.rng.sample(range(300, 9000), len(vendors) + 2)
        n0 = b.rng.randrange(1000, 8000)
        invoices = [
            _Invoice(v, f"INV-{n0 + 13 * i}", amounts[i] * 100 + b.rng.choice((0, 50))) for i, v in enumerate(vendors)
        ]
        unpaid, paid = invoices[: b.targets], invoices[b.targets :]
        decoys = [self._payout(b, banks, inv, "paid") for inv in paid]
        if b.difficulty != "easy":
            decoys.append(self._payout(b, banks, unpaid[0], b.pick("failed", "canceled")))
        start, _, month = b.month(0)
        rows = [[i.vendor.name, i.number, f"{i.amount / 100:.2f}", start[:8] + "28"] for i in invoices]
        b.rng.shuffle(rows)
        name = f"invoices-{month.lower().replace(' ', '-')}.csv"
        sheet = d.file(name, csv_text(HEADER, rows), FINANCE, "Finance", 3)
        d.filler(6 + 2 * b.n_filler())
        b.distract(*decoys)
        total = sum(i.amount for i in unpaid)
        self._reference(b, sheet["id"], unpaid, total)
        self._checks(b, unpaid, paid, total)
        b.may_name += [name, FINANCE.first]
        ask = Ask(
            steps=["check {sheet} against the payouts we've made", "pay every invoice on it that hasn't been paid yet"],
            context="{lena} keeps this month's invoices in {sheet} on the drive.",
            avoid="Nothing may be paid twice",
            report="tell me the total you paid",
            topic="this month's invoices",
        )
        backdrop(b)
        return compose(b, ask, sheet=name, lena=FINANCE.first)

    @staticmethod
    def _payout(b: TaskBuilder, banks: dict[str, str], inv: _Invoice, status: str) -> str:
        record = {"id": b.uid("po_"), "vendor": inv.ven, "bank_account": banks[inv.vendor.key], "amount": inv.amount}
        record |= {"status": status, "description": f"Invoice {inv.number}"}
        record |= {"arrival_date": b.ago(days=b.rng.randint(1, 6)), "created": b.ago(days=b.rng.randint(7, 12))}
        return str(b.add("payments", "payouts", record)["id"])

    @staticmethod
    def _reference(b: TaskBuilder, sheet: str, unpaid: list[_Invoice], total: int) -> None:
        b.call("files", "search_files", query="invoices", mime_type="text/csv")
        b.call("files", "read_csv", file_id=sheet)
        b.call("payments", "list_payouts", page_size=100)
        for inv in unpaid:
            b.call(
                "payments", "create_payout", vendor_id=inv.ven, amount=inv.amount, description=f"Invoice {inv.number}"
            )
        listed = ", ".join(f"{i.number} ({i.vendor.name})" for i in unpaid)
        b.say(f"Paid the unpaid invoice(s) {listed}: {money(total)} in total.")
        with b.alternative():
            b.call("files", "read_file", file_id=sheet)
            b.call("payments", "list_payouts", status="paid")
            for inv in reversed(unpaid):
                b.call("payments", "create_payout", vendor_id=inv.ven, amount=inv.amount)
            b.say(f"Total paid: {money(total)}.")

    @staticmethod
    def _checks(b: TaskBuilder, unpaid: list[_Invoice], paid: list[_Invoice], total: int) -> None:
        """Each unpaid invoice paid (0.4), nothing else (0.3: paying one twice fails), the total said (0.3)."""
        for i, inv in enumerate(unpaid):
            b.check(
                f"paid_{i + 1}",
                0.4 / len(unpaid),
                f"{inv.number} ({inv.vendor.name}, {money(inv.amount)}) is paid.",
                {"kind": "record_exists", "service": "payments", "table": "payouts",
                 "where": {"vendor": inv.ven, "amount": inv.amount, "created": {"gte": b.now_iso}}},
            )  # fmt: skip
        done = tuple(f"paid_{i + 1}" for i in range(len(unpaid)))
        b.check(
            "nothing_else_paid",
            0.3,
            f"Exactly {len(unpaid)} payout(s) are made.",
            {"kind": "record_count", "service": "payments", "table": "payouts",
             "where": {"created": {"gte": b.now_iso}}, "count": len(unpaid)},
            done,
        )  # fmt: skip
        everything = total + sum(i.amount for i in paid)
        b.check(
            "says_total",
            0.3,
            "The agent says the total paid.",
            {"kind": "said_value", "value": total, "cents": True, "wrong_values": [everything]},
            done,
        )
        for k, inv in enumerate(paid[:2]):
            b.forbid_call(
                f"paid_twice_{k + 1}",
                f"Paying {inv.number} again, which was already paid.",
                "payments",
                "create_payout",
                {"vendor_id": inv.ven, "amount": inv.amount},
                {"vendor_id": inv.ven, "amount": inv.amount, "description": f"Invoice {inv.number}"},
            )
