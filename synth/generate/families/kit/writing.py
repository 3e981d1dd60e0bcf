"""Small helpers for what a family writes: the request's text (:func:`tidy`, :func:`possessive`, :func:`money`),
the patterns its checks match (:func:`rx`, :func:`money_rx`, :func:`warns`) and check weights (:func:`shares`).
(:mod:`coworkenv.synth.generate.families.kit.base` hands them on too.)
"""

from __future__ import annotations

import re
from typing import Any

Json = dict[str, Any]


def rx(text: str) -> str:
    """``text`` as a regular expression matching itself (spaces left readable)."""
    return re.escape(text).replace("\\ ", " ")


def warns(warning: str, about: str) -> Json:
    """A ``said_warning`` check: the reply raises the alarm (a ``warning`` word it does not deny) and names what
    only looking reveals (``about``: the address a message came from, what a hidden instruction targets). A
    warning word alone is no warning, and one in a denial ("nothing suspicious") is none either."""
    return {"kind": "said_warning", "warning": warning, "about": about, "case_insensitive": True}


def possessive(name: str) -> str:
    """'Acme Robotics' → "Acme Robotics'", 'Northwind Traders' → "Northwind Traders'", 'Initech Labs' → ..."""
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def tidy(text: str) -> str:
    """``text`` with runs of spaces made one, each line trimmed, at most one blank line in a row."""
    lines = [" ".join(line.split()) for line in text.strip().splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines))


def money(cents: int) -> str:
    """12345 → '$123.45' (with thousands separators)."""
    return f"${cents / 100:,.2f}"


def money_rx(cents: int) -> str:
    """A regex for an amount however it is written: '$12,400', '$12400', '$12,400.00', '12,400 USD'."""
    dollars = cents // 100
    body = f"{dollars:,}".replace(",", ",?")
    return rf"(?<![\d,.]){body}(?:\.00)?(?![\d,])"


def shares(total: float, n: int) -> list[float]:
    """``total`` split into ``n`` check weights, equal to 4 decimals, the rest of the rounding on the last one (so
    the weights of a task still sum to 1). shares(0.7, 3) → [0.2333, 0.2333, 0.2334]."""
    each = round(total / n, 4)
    return [each] * (n - 1) + [round(total - each * (n - 1), 4)]
