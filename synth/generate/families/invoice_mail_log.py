"""A resource family on email and the shared drive: find the invoice a sender emailed (one of the user's own .eml
files with ``--from``, else a stand-in) and log it in the invoice log — the user's own log sheet where their
files have one, else finance's invoice-log.csv — one row with its number and amount, keeping the rows already
there. An earlier invoice of the same sender, already in the log, is the distractor."""

from __future__ import annotations

import csv
import io
import re

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import CROSS, DISTRACTORS, Json, TaskBuilder, rx
from coworkenv.synth.generate.families.kit.files_common import csv_text
from coworkenv.synth.generate.families.kit.names import FINANCE, USER
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.resources_common import ResourceFamily, ground_time, grounding, place
from coworkenv.synth.generate.families.kit.resources_facts import Invoice, amount_rx, invoice_log_columns, invoice_of
from coworkenv.synth.generate.families.kit.seeds import mail
from coworkenv.synth.generate.resources.loader import key_of
from coworkenv.synth.generate.resources.model import Mail, ResourceSet

HEADER = ["vendor", "invoice", "amount", "received"]
_WHO = re.compile(r"vendor|supplier|payee|from|name|company", re.IGNORECASE)
_WHEN = re.compile(r"date|received|when", re.IGNORECASE)


def _logged(rs: ResourceSet) -> set[str]:
    """The invoice numbers the user's log sheets hold already."""
    out: set[str] = set()
    for s in rs.sheets:
        columns = invoice_log_columns(s.header)
        out |= {n.casefold() for n in s.column(columns[0])} if columns else set()
    return out


def _columns(header: list[str]) -> tuple[str, str]:
    columns = invoice_log_columns(header)
    assert columns is not None  # a log sheet is chosen by having them
    return columns


def _earlier(number: str, k: int) -> str:
    """Another number of the same series: 'CC-2291' → 'CC-2288'."""
    m = re.match(r"^(.*?)(\d+)$", number)
    if m is None:
        return f"{number}-{k}"
    digits = m.group(2)
    return f"{m.group(1)}{max(1, int(digits) - k):0{len(digits)}d}"


def _earlier_invoice(b: TaskBuilder, inv: Invoice, number: str, days: int) -> list[str]:
    """A log row for an earlier invoice of the sender, its mail (a distractor) in the inbox."""
    cents = b.rng.randrange(20_000, 400_000)
    body = f"Hello,\n\nInvoice {number} is attached.\nAmount due: ${cents / 100:,.2f}.\n"
    sender = (inv.mail.from_name, inv.mail.from_address)
    old = mail(b, sender, f"Invoice {number}", body, b.ago(days=days), unread=False)
    b.distract(old["id"])
    return [inv.sender, number, f"{cents / 100:.2f}", b.ago(days=days)[:10]]


@register_family
class InvoiceMailToLog(ResourceFamily):
    name = "invoice-mail-to-log"
    scenario = "finding an emailed invoice and logging it in a spreadsheet"
    capabilities = (CROSS, DISTRACTORS)
    service_options = (("email", "files"),)
    distractors = "an earlier invoice of the same sender, already in the log; the user's other mail"

    @classmethod
    def fits(cls, rs: ResourceSet) -> bool:
        logged = _logged(rs)
        return any((inv := invoice_of(m)) and inv.number.casefold() not in logged for m in rs.mails)

    def stand_in(self, b: TaskBuilder) -> ResourceSet:
        mails = []
        for k in range(2 + b.targets):
            v = b.names.vendor()
            number, cents = f"{v.name[:2].upper()}-{b.rng.randrange(1000, 9999)}", b.rng.randrange(20_000, 900_000)
            body = f"Hello,\n\nInvoice {number} for {v.kind} is attached.\nAmount due: ${cents / 100:,.2f}.\n\n{v.name}"
            path = f"invoice-{k + 1}.eml"
            sender = (f"billing@{v.domain}", f"{v.name} Billing")
            mails.append(
                Mail(key_of(path), path, *sender, (USER.email,), (), f"Invoice {number}", b.ago(days=k + 1), body)
            )
        return ResourceSet("stand-in", mails=tuple(mails))

    def build(self, b: TaskBuilder) -> str:
        rs, own = grounding(self, b)
        if own:
            ground_time(b, rs)
        logged = _logged(rs)
        options = [i for m in rs.mails if (i := invoice_of(m)) and i.number.casefold() not in logged]
        inv = options[b.rng.randrange(len(options))]
        placed = place(b, rs, inv.mail.id)
        logs = [s for s in rs.sheets if invoice_log_columns(s.header) and s.id in placed.sheets]
        logs.sort(key=lambda s: "log" not in s.name.casefold())
        log = self._log(b, placed.sheets[logs[0].id] if logs else None, inv)
        if placed.drive is not None:
            placed.drive.filler(2 + b.n_filler())
        row = self._row(log, inv)
        self._reference(b, log, inv, row)
        self._checks(b, log, inv)
        b.forbid_call(
            "trashed_log", "Moving the invoice log to the trash.", "files", "delete_file", {}, {"file_id": log["id"]}
        )
        b.may_name += [log["name"], inv.sender, log["name"].rsplit(".", 1)[0]]
        ask = Ask(
            steps=["find the invoice {sender} emailed me that isn't in {log} yet", "add it to the log, one row"],
            context="{lena} asked me to keep {log} on the drive up to date.",
            avoid="Keep the rows that are already there.",
            topic="the invoice from {sender}",
        )
        backdrop(b)
        return compose(b, ask, sender=inv.sender, log=log["name"], lena=FINANCE.first)

    @staticmethod
    def _log(b: TaskBuilder, own: str | None, inv: Invoice) -> Json:
        """The user's log sheet, else finance's invoice-log.csv with earlier invoices of the sender in it (one; two
        at medium and hard) and their mails in the inbox."""
        if own is not None:
            return next(r for r in b.rows("files", "files") if r["id"] == own)
        rows = []
        for k in range(1 + b.n_distractors()):
            v = b.names.vendor()
            rows.append(
                [
                    v.name,
                    f"{v.name[:2].upper()}-{b.rng.randrange(1000, 9999)}",
                    f"{b.rng.randrange(50, 4000)}.00",
                    b.ago(days=40 + k)[:10],
                ]
            )
        for k in sorted(b.rng.sample(range(2, 10), 1 if b.difficulty == "easy" else 2), reverse=True):
            rows.append(_earlier_invoice(b, inv, _earlier(inv.number, k), 33 + k))
        record: Json = {"id": b.uid("file_", "invoice log"), "name": "invoice-log.csv", "folder_id": "fld_finance"}
        record |= {
            "content": csv_text(HEADER, rows),
            "owner": FINANCE.email,
            "shares": [],
            "created_at": b.ago(days=60),
        }
        return b.add("files", "files", record)

    @staticmethod
    def _row(log: Json, inv: Invoice) -> str:
        header = next(csv.reader(io.StringIO(log["content"])))
        columns = _columns(header)
        values = []
        for name in header:
            if name == columns[0]:
                values.append(inv.number)
            elif name == columns[1]:
                values.append(f"{inv.amount:.2f}")
            elif _WHO.search(name):
                values.append(inv.sender)
            elif _WHEN.search(name):
                values.append(inv.mail.date[:10])
            else:
                values.append("")
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerow(values)
        return out.getvalue()

    @staticmethod
    def _reference(b: TaskBuilder, log: Json, inv: Invoice, row: str) -> None:
        b.call("email", "search_messages", "found", from_address=inv.mail.from_address, text="invoice")
        b.call("email", "get_message", message_id=f"msg_{inv.mail.id}")
        b.call("files", "read_csv", file_id=log["id"], limit=500)
        b.call("files", "append_to_file", file_id=log["id"], text=row)
        b.say(f"Logged invoice {inv.number} from {inv.sender} ({inv.amount:.2f}) in {log['name']}.")
        with b.alternative():  # the sender's mail listed, the log read whole and written back with the row added
            b.call("email", "search_messages", from_address=inv.mail.from_address)
            b.call("email", "get_message", message_id=f"msg_{inv.mail.id}")
            b.call("files", "read_file", file_id=log["id"])
            old = str(log["content"])
            b.call("files", "write_file", file_id=log["id"], content=old + ("" if old.endswith("\n") else "\n") + row)
            b.say(f"Added {inv.number} ({inv.amount:.2f}) from {inv.sender} to {log['name']}.")

    @staticmethod
    def _checks(b: TaskBuilder, log: Json, inv: Invoice) -> None:
        """The invoice on one line of the log with its amount (0.55), once (0.15); the log's rows kept (0.3)."""
        header = next(csv.reader(io.StringIO(log["content"])))
        inv_col, amt_col = _columns(header)
        number, amount = rx(inv.number), amount_rx(inv.amount)
        line = (
            f"{number}[^\\n]{{0,160}}{amount}"
            if header.index(inv_col) < header.index(amt_col)
            else f"{amount}[^\\n]{{0,160}}{number}"
        )
        where: Json = {"kind": "record_fields", "service": "files", "table": "files", "id": log["id"]}
        b.check(
            "logged",
            0.55,
            f"{inv.number} ({inv.amount:.2f}) is a row of the log.",
            {**where, "fields": {"content": {"regex": line, "case_insensitive": True}}},
        )
        once = f"^(?![\\s\\S]*{number}\\b[\\s\\S]*{number}\\b)"
        b.check(
            "logged_once",
            0.15,
            f"{inv.number} is in the log once.",
            {**where, "fields": {"content": {"regex": once, "case_insensitive": True}}},
            ("logged",),
        )
        first = log["content"].split("\n", 1)[0]
        olds = [r[header.index(inv_col)] for r in list(csv.reader(io.StringIO(log["content"])))[1:11] if r]
        kept = "^" + rx(first) + "".join(f"(?=[\\s\\S]*{rx(o)})" for o in olds if o)
        b.check(
            "rows_kept",
            0.3,
            "The log keeps its header and its rows.",
            {**where, "fields": {"content": {"regex": kept}, "trashed": False}},
            ("logged",),
        )
