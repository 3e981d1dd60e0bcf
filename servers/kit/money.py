"""Money: a strict, bounded integer number of cents, the one type every service uses for amounts.

A tool argument or a record field of type :data:`Cents` (or :data:`PositiveCents`) accepts only a JSON
integer: a numeric string (``"100000"``), a decimal number (``100000.0``) or a boolean is refused with a
message saying what to send instead, so what the tool runs with is exactly what the caller wrote and the
audit log and the grader read the same value. The bounds are in the input schema the agent sees; a huge
value (``2**63`` and beyond, past what SQLite stores) is an invalid-arguments answer, never a crash.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field
from pydantic_core import PydanticCustomError

MAX_CENTS = 10**15
"""The largest amount any service takes: $10 trillion in cents, well inside what JSON keeps exactly (2**53)."""


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    if isinstance(value, float):
        return f"the decimal number {value!r}"
    return f"a {type(value).__name__}"


def _suggestion(value: Any) -> str:
    text = value.strip() if isinstance(value, str) else value
    if isinstance(text, str) and text.lstrip("-").isdigit() and len(text) <= 20:
        return f"send {int(text)} (no quotes)"
    if isinstance(text, float) and text.is_integer() and abs(text) <= MAX_CENTS:
        return f"send {int(text)} (no decimal point)"
    return "send a whole number of cents"


def _whole_cents(value: Any) -> Any:
    """Let only a true integer through (``bool`` is an ``int`` in Python, so it is named apart)."""
    if type(value) is int:
        return value
    raise PydanticCustomError(
        "cents_type",
        "amounts are whole numbers of cents written as a JSON integer, not {got}: {hint} (2500 means $25.00)",
        {"got": _describe(value), "hint": _suggestion(value)},
    )


Cents = Annotated[int, Field(strict=True, ge=0, le=MAX_CENTS), BeforeValidator(_whole_cents)]
"""An amount of money in cents, zero or more. Example: 2500 (= $25.00)"""

PositiveCents = Annotated[int, Field(strict=True, gt=0, le=MAX_CENTS), BeforeValidator(_whole_cents)]
"""An amount of money in cents, above zero (what a refund or a payout moves). Example: 2500 (= $25.00)"""

__all__ = ["MAX_CENTS", "Cents", "PositiveCents"]
