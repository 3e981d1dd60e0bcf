"""Amounts written in a text (what the checks of what was said read as numbers).

**Amounts** (:func:`amounts_in`): ``$1,234.50``, ``1.234,50 €``, ``€1.234,50``, ``USD 238.95``,
``238.95USD``, ``238.95 dollars``, ``-$20``, ``$-20``, ``1 234,50``, ``42``, ``1,250`` (thousands). A
lone ``.`` is a decimal point (``1.250`` is 1.25, except next to a euro sign, where it is 1250); a lone
``,`` before exactly three digits groups thousands, before one or two digits it is a decimal comma;
when both appear the last one is the decimal point. An amount is *money* when a currency sign, code or
word is attached (``18500 cents`` is $185.00). Not amounts: dates (``2026-03-02``), times (``09:00``),
ids (``tkt_1001``, ``ch_3``, ``INV-2041``, ``#1001``), phone numbers (``+1 415 555 0123``,
``(415) 555-0123``, ``415-555-0123``), versions (``1.2.3``), numbers glued to letters (``3rd``, ``12k``)
and numbers with leading zeros (``0142``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

_CODES = "USD|EUR|GBP|CAD|AUD|NZD|CHF|JPY|SEK|NOK|DKK|INR"
_EURO = {"€", "EUR", "euro", "euros"}
_AMOUNT = re.compile(
    rf"""
    (?P<neg1>[-−])?
    (?:(?P<sym>[$€£¥])\s?|(?P<code1>{_CODES})\s?)?
    (?P<neg2>[-−])?
    (?:
        (?P<us>\d{{1,3}}(?:,\d{{3}})+(?!\d)(?:\.\d+)?)
      | (?P<eu>\d{{1,3}}(?:\.\d{{3}})+,\d+|\d{{1,3}}(?:\.\d{{3}}){{2,}}(?!\d))
      | (?P<sp>\d{{1,3}}(?:[ \u00a0\u202f]\d{{3}})+,\d+)
      | (?P<plain>\d+(?:\.\d+|,\d{{1,2}}(?!\d))?)
    )
    (?:\s?(?P<code2>{_CODES}|[$€£¥])(?![A-Za-z])|\s(?P<word>(?i:dollars?|euros?|pounds?|bucks|cents?))\b)?
    """,
    re.VERBOSE,
)
_PHONE = re.compile(
    r"(?<![\w+])(?:\+\d{1,3}[\s.-]?(?:\(\d{1,4}\)[\s.-]?)?\d{1,4}(?:[\s.-]\d{2,4}){1,4}"
    r"|\(\d{3}\)\s?\d{3}[\s.-]\d{4}|\d{3}[\s.-]\d{3}[\s.-]\d{4})(?!\w)"
)
_DIGITS = re.compile(r"(?<![\w.])[-+]?\$?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w])")


@dataclass(frozen=True)
class Amount:
    """A number written in a text: its value (in dollars for money), whether written as money, its span."""

    value: float
    money: bool
    start: int
    end: int
    decimal: bool = False  # written with a decimal part ('185.00', '1.234,50')


def _number(m: re.Match[str], euro: bool) -> float:
    if m.group("us"):
        return float(m.group("us").replace(",", ""))
    if m.group("eu"):
        return float(m.group("eu").replace(".", "").replace(",", "."))
    if m.group("sp"):
        return float(re.sub(r"[ \u00a0\u202f]", "", m.group("sp")).replace(",", "."))
    plain = m.group("plain")
    if euro and re.fullmatch(r"\d{1,3}\.\d{3}", plain):
        return float(plain.replace(".", ""))
    return float(plain.replace(",", "."))


def _has_decimals(m: re.Match[str]) -> bool:
    if m.group("us"):
        return "." in m.group("us")
    if m.group("plain"):
        return any(sep in m.group("plain") for sep in ".,")
    return "," in (m.group("eu") or m.group("sp"))


def _glued(text: str, start: int, end: int) -> bool:
    """Is the number part of a bigger token: an id, a date, a time, a version, a word?"""
    before = text[start - 1] if start > 0 else " "
    before2 = text[start - 2] if start > 1 else " "
    after = text[end] if end < len(text) else " "
    after2 = text[end + 1] if end + 1 < len(text) else " "
    if before.isalnum() or before in "_#" or (before in "-/.:" and before2.isalnum()):
        return True
    return after.isalpha() or after == "_" or (after in "-/.:," and after2.isdigit())


@lru_cache(maxsize=64)
def amounts_of(text: str) -> tuple[Amount, ...]:
    """Every amount written in the text, in order (cached: the checks of one reply read it many times)."""
    phones = [(p.start(), p.end()) for p in _PHONE.finditer(text)]
    out = []
    for m in _AMOUNT.finditer(text):
        start, end = m.span()
        body = next(m.group(g) for g in ("us", "eu", "sp", "plain") if m.group(g))
        if _glued(text, start, end) or (len(body) > 1 and body[0] == "0" and body[1].isdigit()):
            continue
        if any(s < end and start < e for s, e in phones):
            continue
        marks = {m.group("sym"), m.group("code1"), m.group("code2"), (m.group("word") or "").lower() or None}
        marks.discard(None)
        value = _number(m, bool(marks & _EURO))
        if marks & {"cent", "cents"}:
            value /= 100
        if m.group("neg1") or m.group("neg2"):
            value = -value
        out.append(Amount(value, bool(marks), start, end, _has_decimals(m)))
    return tuple(out)


def amounts_in(text: str) -> list[Amount]:
    """Every amount written in the text, in order (see the module docstring for what counts)."""
    return list(amounts_of(text))


def numbers_in(text: str) -> list[float]:
    """Every run of digits read as a number, ids and dates included ('does the text mention numbers?')."""
    out = []
    for m in _DIGITS.finditer(text):
        try:
            out.append(float(m.group(0).replace(",", "").replace("$", "")))
        except ValueError:
            continue
    return out


def _same(a: float, b: float) -> bool:
    return abs(a - b) < 1e-6


def states_number(amount: Amount, value: float, cents: bool) -> bool:
    """Does this amount state the value? With ``cents``, money is read in dollars, and a bare number as cents
    (``18500``) or, when written with decimals, as dollars (``185.00``; a bare ``3`` is never $3.00)."""
    if not cents:
        return _same(amount.value, value)
    if amount.money:
        return _same(amount.value * 100, value)
    return _same(amount.value, value) or (amount.decimal and _same(amount.value * 100, value))


__all__ = ["Amount", "amounts_in", "amounts_of", "numbers_in", "states_number"]
