"""What the resource families read out of a user's files: the columns of a sheet that hold amounts, groups or
references; the facts a document states ('Venue: Lakeside Lodge'); the invoice number and amount of a mail; and
a regex for an amount however a reply or a file writes it. Pure functions of the loaded records."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from coworkenv.synth.generate.resources.model import Document, Mail, Sheet, number

MAX_SUMMARY_ROWS = 500
MAX_RECONCILE_ROWS = 40
_FACT = re.compile(r"^\s{0,3}(?:[-*+]\s+)?(?:\*\*)?([A-Za-z][A-Za-z /&'()-]{1,38}?)(?:\*\*)?\s*:\s*(?:\*\*)?(.+?)\s*$")
_MONEY = re.compile(
    r"(?:[$€£]\s?|\b(?:USD|EUR|GBP)\s?)(\d[\d,]*(?:\.\d{1,2})?)|\b(\d[\d,]*(?:\.\d{2})?)\s?(?:USD|EUR|GBP)\b"
)
_INVOICE_NO = re.compile(
    r"\binvoice\s*(?:no\.?|number|num\.?|#)?\s*[:#]?\s*([A-Z]{0,6}-?\d[A-Z0-9-]{1,20})\b|\b([A-Z]{2,6}-\d{2,12})\b",
    re.IGNORECASE,
)
_DUE = re.compile(r"\b(?:total|amount due|balance due|amount|due)\b", re.IGNORECASE)


def amount_rx(value: Decimal) -> str:
    """A regex for an amount however it is written: 1234.5 → '1,234.50', '1234.5', '$1,234.50'; 1200 → '1,200',
    '1200.00' (not part of a longer number)."""
    whole, frac = f"{abs(value.quantize(Decimal('0.01'))):.2f}".split(".")
    body = f"{int(whole):,}".replace(",", ",?")
    if frac == "00":
        tail = r"(?:\.00?)?"
    elif frac[1] == "0":
        tail = rf"\.{frac[0]}0?"
    else:
        tail = rf"\.{frac}"
    return rf"(?<![\d.]){body}{tail}(?![\d]|\.\d)"


def shown(value: Decimal) -> str:
    """1234.5 → '1,234.50'; 1200 → '1,200'."""
    q = value.quantize(Decimal("0.01"))
    return f"{q:,.2f}" if q != q.to_integral_value() else f"{int(q):,}"


# ---------------------------------------------------------------------------------------------- sheets
def _values(sheet: Sheet, column: str) -> list[str]:
    return [v.strip() for v in sheet.column(column)]


def amount_columns(sheet: Sheet) -> list[str]:
    """Columns every row of which holds a number with at most two decimals, not all of them the same."""
    out = []
    for col in sheet.header:
        values = [number(v) for v in _values(sheet, col)]
        if values and all(v is not None and v.as_tuple().exponent in (0, -1, -2) for v in values):
            nums = [v for v in values if v is not None]
            if len(set(nums)) > 1 and not _looks_like_years(nums):
                out.append(col)
    return out


def _looks_like_years(values: list[Decimal]) -> bool:
    return all(v == v.to_integral_value() and 1900 <= v <= 2100 for v in values)


def group_columns(sheet: Sheet) -> list[str]:
    """Text columns (no numbers, no dates) with 2 to 8 different non-empty values, each used by a row at least."""
    out = []
    for col in sheet.header:
        values = _values(sheet, col)
        distinct = {v.casefold() for v in values}
        plain = all(v and number(v) is None and not re.match(r"^\d{1,4}[-/.]\d", v) and len(v) <= 40 for v in values)
        if plain and 2 <= len(distinct) <= 8 and len(distinct) < len(values):
            out.append(col)
    return out


def reference_columns(sheet: Sheet) -> list[str]:
    """Columns whose values are all different and look like references (a digit, 3-30 characters, no spaces)."""
    out = []
    for col in sheet.header:
        values = _values(sheet, col)
        ok = all(3 <= len(v) <= 30 and " " not in v and any(c.isdigit() for c in v) for v in values)
        ok = ok and not any(re.match(r"^\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}$", v) for v in values)
        if ok and len({v.casefold() for v in values}) == len(values) and not all(number(v) for v in values):
            out.append(col)
    return out


def name_columns(sheet: Sheet) -> list[str]:
    """Text columns of names (letters in every value, no numbers)."""
    return [
        col
        for col in sheet.header
        if all(re.search(r"[A-Za-z]{2}", v) and number(v) is None and len(v) <= 60 for v in _values(sheet, col))
    ]


@dataclass(frozen=True)
class Summary:
    """A sheet summed: the total of ``amount`` per value of ``group`` (in order of first appearance)."""

    sheet: Sheet
    group: str
    amount: str
    totals: tuple[tuple[str, Decimal], ...]

    @property
    def total(self) -> Decimal:
        return sum((t for _, t in self.totals), Decimal(0))


def summaries(sheet: Sheet) -> list[Summary]:
    """Every (group column, amount column) pair a sheet can be summarised by."""
    if not 3 <= len(sheet.rows) <= MAX_SUMMARY_ROWS:
        return []
    out = []
    for group in group_columns(sheet):
        for amount in amount_columns(sheet):
            totals: dict[str, tuple[str, Decimal]] = {}
            for g, a in zip(_values(sheet, group), _values(sheet, amount), strict=True):
                name, was = totals.get(g.casefold(), (g, Decimal(0)))
                totals[g.casefold()] = (name, was + (number(a) or Decimal(0)))
            out.append(Summary(sheet, group, amount, tuple(totals.values())))
    return out


@dataclass(frozen=True)
class Ledger:
    """A sheet of payable rows: a reference per row, an amount (cents) and, where the sheet has one, a payee."""

    sheet: Sheet
    reference: str
    amount: str
    payee: str | None
    rows: tuple[tuple[str, int, str], ...]
    """(reference, cents, payee or '')"""


def ledger(sheet: Sheet) -> Ledger | None:
    """The sheet as a ledger to reconcile with payouts: 3 to 40 rows, a reference column and an amount column of
    positive amounts (the first of each)."""
    refs, amounts = reference_columns(sheet), amount_columns(sheet)
    if not (3 <= len(sheet.rows) <= MAX_RECONCILE_ROWS and refs and amounts):
        return None
    names = [c for c in name_columns(sheet) if c not in refs]
    payee = names[0] if names else None
    rows = []
    for i in range(len(sheet.rows)):
        value = number(_values(sheet, amounts[0])[i]) or Decimal(0)
        cents = int((value * 100).to_integral_value())
        if cents <= 0 or cents > 100_000_000_00:
            return None
        rows.append((_values(sheet, refs[0])[i], cents, _values(sheet, payee)[i] if payee else ""))
    return Ledger(sheet, refs[0], amounts[0], payee, tuple(rows))


def invoice_log_columns(header: Sequence[str]) -> tuple[str, str] | None:
    """(invoice column, amount column) of a sheet's header that logs invoices, by its words."""
    inv = [c for c in header if re.search(r"invoice|inv\b|number|ref", c, re.IGNORECASE)]
    amt = [c for c in header if re.search(r"amount|total|sum|usd|eur|price", c, re.IGNORECASE)]
    return (inv[0], amt[0]) if inv and amt and inv[0] != amt[0] else None


# ---------------------------------------------------------------------------------------------- documents
@dataclass(frozen=True)
class Fact:
    """'<key>: <value>' as a document states it; ``answer`` is what a reply must say (the value's core)."""

    document: Document
    key: str
    value: str
    answer: str
    cents: int | None
    """The value as an amount, when it is money (then replies are read for the amount however written)."""


def facts(doc: Document) -> list[Fact]:
    """The facts a document states once each: 'Venue: Lakeside Lodge', '- **Budget:** $8,500'."""
    found: dict[str, Fact] = {}
    repeated: set[str] = set()
    for line in doc.text.splitlines():
        m = _FACT.match(line)
        if not m or line.lstrip().startswith("#") or "://" in line:
            continue
        key, value = " ".join(m.group(1).split()), m.group(2).strip().strip("*").strip()
        fact = _fact(doc, key, value)
        if fact is None:
            continue
        if key.casefold() in found:
            repeated.add(key.casefold())
        found[key.casefold()] = fact
    return [f for k, f in found.items() if k not in repeated]


def _fact(doc: Document, key: str, value: str) -> Fact | None:
    if len(key.split()) > 5 or not 2 <= len(value) <= 120:
        return None
    money = _MONEY.search(value)
    if money:
        amount = number(money.group(1) or money.group(2))
        if amount is None or amount <= 0:
            return None
        return Fact(doc, key, value, money.group(0).strip(), int((amount * 100).to_integral_value()))
    core = re.split(r"[,;(]| - | — ", value, maxsplit=1)[0].strip().rstrip(".")
    if not 3 <= len(core) <= 60 or not re.search(r"[A-Za-z]{3}", core) or re.search(r"\d{1,4}[-/. ]\w", core):
        return None  # dates and times are said too many ways to check as text
    if core.casefold() in key.casefold() or core.casefold() in doc.title.casefold():
        return None
    return Fact(doc, key, value, core, None)


# ---------------------------------------------------------------------------------------------- mail
@dataclass(frozen=True)
class Invoice:
    mail: Mail
    number: str
    amount: Decimal

    @property
    def sender(self) -> str:
        """How the user names who sent it: the sender's name, else their domain."""
        return self.mail.from_name or self.mail.from_address.split("@")[1]


def invoice_of(mail: Mail) -> Invoice | None:
    """The invoice a mail sends: 'invoice' in its subject or body, one invoice number, and one amount (or the one
    on a line of its total / amount due)."""
    text = f"{mail.subject}\n{mail.body}"
    if "invoice" not in text.casefold():
        return None
    numbers = {(m.group(1) or m.group(2)).upper() for m in _INVOICE_NO.finditer(text)}
    numbers = {n for n in numbers if any(c.isdigit() for c in n) and len(n) >= 3}
    if len(numbers) != 1:
        return None
    amounts = _amounts(text)
    if len(amounts) != 1:
        due = [line for line in text.splitlines() if _DUE.search(line)]
        amounts = _amounts("\n".join(due))
    if len(amounts) != 1:
        return None
    return Invoice(mail, numbers.pop(), amounts.pop())


def _amounts(text: str) -> set[Decimal]:
    out = set()
    for m in _MONEY.finditer(text):
        value = number(m.group(1) or m.group(2))
        if value is not None and value > 0:
            out.add(value)
    return out
