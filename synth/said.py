"""Reading what the agent said to the user: text, patterns and stated values (numbers however formatted)."""

from __future__ import annotations

import re

_NUMBER = re.compile(r"(?<![\w.])[-+]?\$?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w])")
_SEPARATORS = re.compile(r"[\s\-_.,:;/()'\"`]+")


def normalise_text(text: str) -> str:
    """Case-folded, with spaces, dashes and punctuation removed: 'DE89 3704-0044' → 'de8937040044'."""
    return _SEPARATORS.sub("", text.casefold())


def numbers_in(text: str) -> list[float]:
    """Every number written in the text: '1,250', '$12,500.00', '-3.5' (currency signs and commas ignored)."""
    out = []
    for m in _NUMBER.finditer(text):
        raw = m.group(0).replace(",", "").replace("$", "")
        try:
            out.append(float(raw))
        except ValueError:
            continue
    return out


def states_value(text: str, value: str | int | float, cents: bool = False) -> bool:
    """Does the text state the value? Numbers compare as numbers; with ``cents`` dollars count too."""
    if isinstance(value, str):
        needle = normalise_text(value)
        return bool(needle) and needle in normalise_text(text)
    if isinstance(value, bool):
        return False
    wanted = {float(value)}
    if cents:
        wanted.add(round(value / 100, 2))
    return any(abs(n - w) < 1e-9 for n in numbers_in(text) for w in wanted)


def excerpt(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
