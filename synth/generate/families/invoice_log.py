"""A cross-service family on email and the shared drive: add this week's emailed invoices to finance's invoice
log (a CSV), one row each, skipping an invoice the log already has and reminders about logged ones."""

from __future__ import annotations

from dataclasses import dataclass, replace

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import CROSS, DISTRACTORS, WINDOW, Family, Json, TaskBuilder, money, rx
from coworkenv.synth.generate.families.kit.files_common import csv_text, drive
from coworkenv.synth.generate.families.kit.names import FINANCE, Vendor
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.seeds import Cast, filler_mail, mail

HEADER = ["vendor", "invoice", "amount_usd", "received"]


@dataclass(frozen=True)
class _Bill:
    vendor: Vendor
    number: str
    amount: int
    received: str

    def row(self) -> list[str]:
        return [self.vendor.name, self.number, f"{self.amount / 100:.2f}", self.received[:10]]


def _amount_rx(cents: int) -> str:
    return rf"{cents // 100}(?:\.{cents % 100:02d})?" if cents % 100 else rf"{cents // 100}(?:\.00?)?"


def _email(b: TaskBuilder, bill: _Bill, reminder: bool = False) -> Json:
    v = bill.vendor
    subject = f"{'Reminder: ' if reminder else ''}Invoice {bill.number} from {v.name}"
    body = (
        f"Hello,\n\nPlease find invoice {bill.number} for {v.kind}: {money(bill.amount)}, due in 30 days.\n\n"
        f"Accounts, {v.name}"
    )
    return mail(b, (f"{v.name} Billing", f"billing@{v.domain}"), subject, body, bill.received)


@register_family
class InvoiceEmailsToLog(Family):
    name = "invoice-emails-to-log"
    scenario = "logging emailed invoices in a spreadsheet"
    capabilities = (CROSS, WINDOW, DISTRACTORS)
    service_options = (("email", "files"),)
    distractors = "an invoice already in the log; a reminder about a logged invoice; invoices from before this week"

    def build(self, b: TaskBuilder) -> str:
        cast = Cast(b)
        cast.email()
        d = drive(b)
        vendors = [cast.vendor() for _ in range(b.targets + 3)]
        n0 = b.rng.randrange(1000, 8000)
        amounts = b.rng.sample(range(200, 9000), len(vendors))

        def bill(i: int, days: float) -> _Bill:
            return _Bill(vendors[i], f"INV-{n0 + 17 * i}", amounts[i] * 100 + b.pick(0, 0, 50), b.ago(days=days))

        new = [bill(i, b.rng.randint(0, 3) + b.rng.random()) for i in range(b.targets)]
        logged = [bill(len(new) + k, 9 + 5 * k) for k in range(3)]
        for x in [*new, *logged]:
            _email(b, x)
        decoys = [_email(b, replace(logged[0], received=b.ago(days=1, hours=3)), reminder=True)]
        log = d.file("invoice-log.csv", csv_text(HEADER, [x.row() for x in logged]), FINANCE, "Finance", 20)
        filler_mail(b, 4 + b.n_filler())
        d.filler(4 + b.n_filler())
        b.distract(*(m["id"] for m in decoys))
        self._reference(b, log["id"], new)
        self._checks(b, log["id"], new, logged)
        _forbidden(b, log["id"])
        b.may_name.append("invoice-log.csv")
        ask = Ask(
            steps=["add the invoices that came in by email over the last few days to invoice-log.csv, one row each"],
            context="{lena's} invoice log on the drive is behind.",
            avoid="Skip anything that is already in the log",
            topic="the invoice log",
        )
        backdrop(b)
        return compose(b, ask, lena=FINANCE.first)

    @staticmethod
    def _reference(b: TaskBuilder, log: str, new: list[_Bill]) -> None:
        rows = csv_text(HEADER, [x.row() for x in new]).split("\n", 1)[1]
        b.call("email", "search_messages", subject="invoice", after=b.ago(days=5))
        b.call("files", "search_files", query="invoice-log")
        b.call("files", "read_csv", file_id=log)
        b.call("files", "append_to_file", file_id=log, text=rows)
        b.say(f"Added {len(new)} invoice(s) to the log: {', '.join(x.number for x in new)}.")
        with b.alternative():
            b.call("email", "search_messages", text="invoice")
            for x in reversed(new):
                b.call("files", "append_to_file", file_id=log, text=",".join(x.row()) + "\n")
            b.say("The log is up to date.")

    @staticmethod
    def _checks(b: TaskBuilder, log: str, new: list[_Bill], logged: list[_Bill]) -> None:
        """Each new invoice in the log with its amount (0.55), no logged invoice twice (0.15); the header and
        the old rows kept (0.3)."""
        for i, x in enumerate(new):
            b.check(
                f"logged_{i + 1}",
                0.55 / len(new),
                f"{x.number} ({x.vendor.name}, {money(x.amount)}) is in the log, once.",
                {"kind": "record_fields", "service": "files", "table": "files", "id": log,
                 "fields": {"content": {"regex": _once(x.number) + rf"[\s\S]*{rx(x.number)}\b[^\n]{{0,60}}\b"
                                                 rf"{_amount_rx(x.amount)}\b"}}},
            )  # fmt: skip
        done = tuple(f"logged_{i + 1}" for i in range(len(new)))
        once = _once(logged[0].number)
        b.check(
            "no_duplicates",
            0.15,
            f"{logged[0].number}, already in the log, is not added again.",
            {"kind": "record_fields", "service": "files", "table": "files", "id": log,
             "fields": {"content": {"regex": once}}},
            done,
        )  # fmt: skip
        kept = "^vendor,invoice,amount_usd,received\n" + "".join(f"(?=[\\s\\S]*{rx(x.number)}\\b)" for x in logged)
        b.check(
            "old_rows_kept",
            0.3,
            "The log keeps its header and every row it had.",
            {"kind": "record_fields", "service": "files", "table": "files", "id": log,
             "fields": {"content": {"regex": kept}, "trashed": False}},
            done,
        )  # fmt: skip


def _forbidden(b: TaskBuilder, log: str) -> None:
    b.forbid_call(
        "trashed_log",
        "Moving the invoice log to the trash.",
        "files",
        "delete_file",
        {},
        {"file_id": log},
    )


def _once(number: str) -> str:
    """A regex (anchored at the start) that holds when ``number`` does not appear twice: a row logged twice."""
    return f"^(?![\\s\\S]*{rx(number)}\\b[\\s\\S]*{rx(number)}\\b)"
