"""A multi-turn family on the shared drive and payments: the agent sums up the month's payout sheet for the
user's approval without paying; the user corrects the sheet (an amount, and on hard removes a row paid by other
means) and approves; the agent pays what the corrected sheet says."""

from __future__ import annotations

from dataclasses import dataclass

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import CLARIFY, CROSS, MULTISTEP, Family, Json, TaskBuilder, money
from coworkenv.synth.generate.families.kit.files_common import csv_text, drive
from coworkenv.synth.generate.families.kit.multiturn import FINISHED, PERSONA
from coworkenv.synth.generate.families.kit.names import FINANCE, Vendor
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.seeds import Cast, bank_account, vendor_record

HEADER = ["vendor", "invoice", "amount_usd"]


@dataclass
class _Line:
    vendor: Vendor
    invoice: str
    amount: int

    @property
    def ven(self) -> str:
        return f"ven_{self.vendor.key}"

    def row(self) -> list[str]:
        return [self.vendor.name, self.invoice, f"{self.amount // 100}.{self.amount % 100:02d}"]


@dataclass(frozen=True)
class _Approval:
    sheet: Json
    name: str
    final: list[_Line]
    fixed: _Line
    old_amount: int
    removed: _Line | None


@register_family
class PayoutsAfterApproval(Family):
    name = "payouts-after-approval"
    scenario = "paying a payout sheet after the user corrects and approves it"
    capabilities = (CROSS, MULTISTEP, CLARIFY)
    service_options = (("files", "payments"),)
    distractors = "last month's sheet (already paid); vendors on no sheet; the amounts from before the correction"

    def build(self, b: TaskBuilder) -> str:
        a = self._seed(b)
        self._user_turn(b, a)
        self._reference(b, a)
        self._checks(b, a)
        b.may_name += [a.name, FINANCE.first]
        ask = Ask(
            steps=["go through {sheet} on the drive and tell me who it pays and the total"],
            context="{lena} prepared this month's payouts ({sheet}).",
            avoid="Don't pay anything yet: I want to approve it first",
            topic="this month's payout sheet",
        )
        backdrop(b)
        return compose(b, ask, sheet=a.name, lena=FINANCE.first)

    @staticmethod
    def _seed(b: TaskBuilder) -> _Approval:
        cast = Cast(b)
        d = drive(b)
        vendors = [cast.vendor() for _ in range(b.targets + 3)]
        for v in vendors:
            vendor_record(b, v, bank_account(b, f"ven_{v.key}", v.name)["id"])
        n0 = b.rng.randrange(1000, 8000)
        lines = [
            _Line(v, f"INV-{n0 + 11 * i}", b.rng.randrange(300, 9000) * 100 + b.rng.choice((0, 50)))
            for i, v in enumerate(vendors[: b.targets + 1])
        ]
        _, _, month = b.month(0)
        name = f"payouts-{month.lower().replace(' ', '-')}.csv"
        sheet = d.file(name, csv_text(HEADER, [ln.row() for ln in lines]), FINANCE, "Finance", 1)
        _, _, last = b.month(1)
        old_rows = [
            [v.name, f"INV-{b.rng.randrange(100, 999)}", f"{b.rng.randrange(300, 9000)}.00"] for v in vendors[-2:]
        ]
        prev = d.file(
            f"payouts-{last.lower().replace(' ', '-')}.csv", csv_text(HEADER, old_rows), FINANCE, "Finance", 31
        )
        b.distract(prev["id"])
        d.filler(6 + 2 * b.n_filler())
        fixed = b.rng.choice(lines)
        old_amount = fixed.amount
        fixed.amount = old_amount + b.pick(-1, 1) * b.rng.randrange(10, old_amount // 200) * 100
        removed = b.rng.choice([ln for ln in lines if ln is not fixed]) if b.hard else None
        final = [ln for ln in lines if ln is not removed]
        return _Approval(sheet, name, final, fixed, old_amount, removed)

    @staticmethod
    def _user_turn(b: TaskBuilder, a: _Approval) -> None:
        content = csv_text(HEADER, [ln.row() for ln in a.final])
        edit = {"service": "files", "tool": "write_file", "arguments": {"file_id": a.sheet["id"], "content": content}}
        gone = f" and removed {a.removed.vendor.name}, which we paid by card" if a.removed else ""
        message = (
            f"Thanks. I corrected {a.fixed.vendor.name}'s amount in the sheet{gone}. With that, it's approved: "
            "please pay everything on the sheet now."
        )
        b.user = {"persona": PERSONA, "turns": [{"message": message, "when": FINISHED, "edits": [edit]}]}

    @staticmethod
    def _reference(b: TaskBuilder, a: _Approval) -> None:
        fid = a.sheet["id"]
        before = [*a.final, *([a.removed] if a.removed else [])]
        total = sum(ln.amount for ln in before) - a.fixed.amount + a.old_amount
        b.call("files", "search_files", "found", query="payouts", mime_type="text/csv")
        b.call("files", "read_csv", file_id=fid)
        b.say(f"The sheet pays {len(before)} vendors, {money(total)} in all. Nothing is paid yet.")
        b.call("files", "read_csv", file_id=fid)
        b.call("payments", "list_vendors")
        for ln in a.final:
            b.call("payments", "create_payout", vendor_id=ln.ven, amount=ln.amount, description=f"Invoice {ln.invoice}")
        b.say(f"Paid the {len(a.final)} payouts on the corrected sheet, {money(sum(ln.amount for ln in a.final))}.")
        with b.alternative():
            b.call("files", "list_files", folder_id="fld_finance")
            b.call("files", "read_file", file_id=fid)
            b.say(f"{len(before)} payouts for {money(total)} in total; waiting for your approval.")
            b.call("files", "read_file", file_id=fid)
            for ln in reversed(a.final):
                b.call("payments", "create_payout", vendor_id=ln.ven, amount=ln.amount)
            b.say("All paid.")

    @staticmethod
    def _checks(b: TaskBuilder, a: _Approval) -> None:
        """Each row of the corrected sheet paid (0.5), nothing else (0.2), the other sheet as it was (0.3)."""
        for i, ln in enumerate(a.final):
            b.check(
                f"paid_{i + 1}",
                0.5 / len(a.final),
                f"{ln.vendor.name} is paid {money(ln.amount)}, as the corrected sheet says.",
                {"kind": "record_exists", "service": "payments", "table": "payouts",
                 "where": {"vendor": ln.ven, "amount": ln.amount, "created": {"gte": b.now_iso}}},
                after_turn=1,
            )  # fmt: skip
        paid = tuple(f"paid_{i + 1}" for i in range(len(a.final)))
        b.check(
            "nothing_else_paid",
            0.2,
            f"Exactly {len(a.final)} payouts are made.",
            {"kind": "record_count", "service": "payments", "table": "payouts",
             "where": {"created": {"gte": b.now_iso}}, "count": len(a.final)},
            paid,
        )  # fmt: skip
        b.check(
            "last_month_untouched",
            0.3,
            "Last month's sheet is unchanged.",
            {"kind": "records_unchanged", "service": "files", "table": "files", "ids": list(b.distractors)},
            paid,
        )
        first = a.final[0]
        b.forbid_call(
            "paid_before_approval",
            "Paying anyone before the user approves the sheet (they asked to approve it first).",
            "payments",
            "create_payout",
            {},
            {"vendor_id": first.ven, "amount": first.amount, "description": f"Invoice {first.invoice}"},
            before_turn=1,
        )
        b.forbid_call(
            "paid_old_amount",
            f"Paying {a.fixed.vendor.name} the amount from before the user's correction.",
            "payments",
            "create_payout",
            {"vendor_id": a.fixed.ven, "amount": a.old_amount},
            {"vendor_id": a.fixed.ven, "amount": a.old_amount},
        )
        if a.removed:
            b.forbid_call(
                "paid_removed_row",
                f"Paying {a.removed.vendor.name}, whom the user removed from the sheet.",
                "payments",
                "create_payout",
                {"vendor_id": a.removed.ven},
                {"vendor_id": a.removed.ven, "amount": a.removed.amount},
            )
