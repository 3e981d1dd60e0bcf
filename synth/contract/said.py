"""Reading what the agent said to the user: a capped reply, amounts however written, stated answers.

**The reply cap.** Checks on what was said read at most :data:`REPLY_CAP` characters: the *last* 4000
characters of the agent's messages to the user (cut at a space, so no number is read half). The final
answer is at the end of the reply, so a correct answer of any natural length is read whole, while
padding a reply (a dump of every record, every integer from 0 to 100000) buys nothing: what lies before
the window is never read, and what lies in it is judged by the rules below. Reading a bounded text also
bounds grading time: a 1 MB reply costs what a 4 kB one does, and an accepted pattern
(:mod:`coworkenv.synth.contract.regex_bounds`) takes milliseconds on a natural reply (a fraction of a second on one
built to be slow). A *forbidden* said check (where
passing means the agent said what it must not) cannot be cleared by a window, so a reply over the cap
counts as having said it.

**Amounts** are read as :mod:`.amounts` says (``$1,234.50``, ``1.234,50 €``, ``18500 cents``; not dates, ids or phone numbers).

**Stating a value** (:func:`judge_value`). A number states the value when it equals it; with ``cents`` a
money amount states it in dollars (``$12,500.00`` for 1250000) and a bare number in cents (``1250000``)
or, written with decimals, in dollars (``12500.00``; a bare ``3`` never states 300 cents). Then, in this
order:

1. *Wrong values.* If the reply states any declared wrong value *as its answer*, the check fails and says which
   one. A wrong figure given as the input the answer came from is context, not an answer: with a label, any
   mention but the amount stated after the label; without one, a mention inside parentheses or brackets ("The
   net is $X (gross $Y minus refunds $Z)") or after the value's own statement in the same clause with a word of
   working between them ("$X, from the sheet's $Y"; of, from, minus, less, plus, before, after, excluding,
   including, =, +), or before it with such a word and then a word of result ("$Y minus $Z gives $X"), and no
   hedge near it ("or", "maybe", "perhaps", "else", "alternatively", "instead", "/": "$X (or maybe $Y)" offers $Y as
   an answer); a figure alone in brackets is offered, not worked ("[$Y] [$X]"). "The total is $Y" states it as the answer. A wrong figure given as context is not counted
   among the candidates of rule 3 either.
2. *Label.* With a label ("total", "refund amount"), the statement that counts is the one after the first
   occurrence of the label (whole words, any case) that is followed, within :data:`LABEL_WINDOW`
   characters of the same clause (up to a line break, ``;`` or the end of the sentence), by an amount:
   with ``cents`` the first money amount there (a bare number if the clause has none), else the first
   amount. That amount must state the value; numbers elsewhere do not matter.
3. *No hedges.* Any other figure offered beside the stated value as the answer — tied to it by a hedge in the same
   clause ("$U or $X", "$X (else $U)", "$X / $U"), set alone in brackets beside it, or floated in a clause of its
   own ("It could also be $U.") — fails the check, declared wrong or not.
4. *No label: no lists of candidates.* Amounts are of two kinds, money and plain numbers. Take the kind
   in which the value is stated, and count the distinct values of that kind in the reply. The answer has
   ``n`` values of that kind (the distinct numbers the task's completion ``said_value`` checks with the
   same ``cents`` ask for, at least 1); the reply may state at most ``n + 1`` (one more for context, such
   as the charge that was *not* refunded). More than that is a list of candidates, and the check fails.
   So "The total refunded in March was $1,234.50 across 3 refunds (re_1, re_2, re_3)." states 123450
   cents (one money amount; 3 is a plain number and ``re_1`` an id), and a reply listing every integer,
   or every charge of the customer, states nothing.

A text value is stated when it occurs with whole-word edges, ignoring case, spaces and punctuation
(``GB29 MRDN 6016`` is stated by ``gb29mrdn-6016``); a declared wrong text counts only where it is not part
of an occurrence of the value itself, so the right "Acme Corp" never states the wrong "Acme".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from coworkenv.servers.kit.text import regex
from coworkenv.synth.contract.amounts import Amount, amounts_of, states_number

REPLY_CAP = 4000
"""Characters of the agent's reply that checks read: the last 4000 (the final answer is at the end)."""

LABEL_WINDOW = 80
"""How far after a label its amount may be stated (and never past the end of the clause)."""

Value = str | int | float

_SEPARATORS = re.compile(r"[\s\-_.,:;/()'\"`]+")
_SEP_CLASS = r"[\s\-_.,:;/()'\"`]*"
_CLAUSE_END = re.compile(r"\n|;|[.!?](?:\s|$)")


@dataclass(frozen=True)
class Reply:
    """What the checks read: the last :data:`REPLY_CAP` characters of the reply, and how long it was."""

    text: str
    length: int

    @property
    def cut(self) -> bool:
        return len(self.text) < self.length


def reply_window(said: str, cap: int = REPLY_CAP) -> Reply:
    """The last ``cap`` characters of the reply, starting after a space when the cut falls inside a word."""
    if len(said) <= cap:
        return Reply(said, len(said))
    tail = said[-cap:]
    space = None if said[-cap - 1].isspace() else re.search(r"\s", tail)
    if space is not None and space.start() < 40:
        tail = tail[space.end() :]
    return Reply(tail, len(said))


# ---------------------------------------------------------------------------------------------- text
def normalise_text(text: str) -> str:
    """Case-folded, with spaces, dashes and punctuation removed: 'DE89 3704-0044' → 'de8937040044'."""
    return _SEPARATORS.sub("", text.casefold())


@lru_cache(maxsize=256)
def text_pattern(value: str) -> re.Pattern[str] | None:
    """Where a text value is stated: its letters and digits in order, any separators between, whole-word edges."""
    chars = [ch for ch in value.casefold() if not _SEPARATORS.fullmatch(ch)]
    if not chars:
        return None
    body = _SEP_CLASS.join(re.escape(ch) for ch in chars)
    head = r"(?<![^\W_])" if chars[0].isalnum() else ""
    tail = r"(?![^\W_])" if chars[-1].isalnum() else ""
    return re.compile(head + body + tail, re.IGNORECASE)


def states_text(text: str, value: str) -> bool:
    pattern = text_pattern(value)
    return pattern is not None and pattern.search(text) is not None


def states_value(text: str, value: Value, cents: bool = False) -> bool:
    """Is the value mentioned anywhere in the text (no answer rules: what a forbidden check asks)?"""
    if isinstance(value, str):
        return states_text(text, value)
    if isinstance(value, bool):
        return False
    return any(states_number(a, float(value), cents) for a in amounts_of(text))


# ---------------------------------------------------------------------------------------------- answers
def _shown(text: str, a: Amount) -> str:
    return text[a.start : a.end].strip()


_ASIDE = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
_WORKING = re.compile(
    r"\b(?:from|of|out of|minus|less|plus|gross|before|after|excluding|including|subtracting|deducting|because|"
    r"since|leaving|over|on)\b|[=+−]",
    re.IGNORECASE,
)


_HEDGE = re.compile(
    r"\b(?:or|maybe|perhaps|possibly|might|could|either|probably|likely|else|otherwise|alternatively|alternative|"
    r"instead|unless|depending)\b|/|\?",
    re.IGNORECASE,
)
_RESULT = re.compile(r"\b(?:gives?|gave|giving|yields?|leaves|makes|equals|comes? to|results? in|brings? it to)\b|=")
"""Words that lead from the figures an answer came from to the answer ("$W minus $D gives $R")."""


def _as_context(text: str, hit: Amount, value: Value | None, cents: bool, label: str | None) -> bool:
    """Is this mention of a declared wrong figure the input an answer came from, not the answer (rule 1)?"""
    if value is None or isinstance(value, str | bool):
        return False
    if label is not None:
        return all(
            first is not hit
            for first in (_labelled_amount(text, [span], cents) for span in _label_clauses(text, label))
        )
    for m in _ASIDE.finditer(text):
        if m.start() < hit.start and hit.end <= m.end():  # an aside is context only when it shows working
            aside = text[m.start() + 1 : m.end() - 1]
            return _WORKING.search(aside) is not None and _HEDGE.search(aside) is None
    for a in amounts_of(text):
        if a.end <= hit.start and states_number(a, float(value), cents):
            between = text[a.end : hit.start]
            if _CLAUSE_END.search(between) is None and _WORKING.search(between) and not _HEDGE.search(between):
                return True
        if a.start >= hit.end and states_number(a, float(value), cents):  # "$W minus $D gives $R"
            between = text[hit.end : a.start]
            if (
                _CLAUSE_END.search(between) is None
                and _WORKING.search(between)
                and _RESULT.search(between)
                and not _HEDGE.search(between)
            ):
                return True
    return False


Span = tuple[int, int]
_DIGIT_RUN = re.compile(r"(?<![\w.,])\d{2,}(?![\w]|[.,]\d)")


def _hedged(text: str, stated: Sequence[Span], others: Sequence[Span]) -> Span | None:
    """Another figure the text offers beside the value as the answer: one tied to a statement of the value by a
    hedge in the same clause ("$U or $R", "$R (else $W)", "$R / $U"), one set alone in brackets beside it
    ("[$W] [$R]"), or one floated in a clause of its own ("It could also be $W.")."""
    if not stated:
        return None
    for a in others:  # a figure floated in a clause of its own: "It could also be $W."
        if a not in stated and _floated(text, a):
            return a
    for s in stated:
        for a in others:
            if a in stated:
                continue
            lo, hi = (a[1], s[0]) if a[1] <= s[0] else (s[1], a[0])
            between = text[lo:hi]
            if _CLAUSE_END.search(between) is not None:
                continue
            if (_HEDGE.search(between) and not _WORKING.search(between)) or _alone_in_brackets(text, a):
                return a
    return None


def hedge_in(text: str, value: Value, cents: bool = False, label: str | None = None) -> str | None:
    """The other figure a text offers beside its statement of the value as the answer (after the label, with
    one), as written; None when it offers none (:func:`_hedged`). Digits said as a figure ('0629', the end of an
    account) are weighed against the other runs of digits."""
    spans = _label_clauses(text, label) if label is not None else [(0, len(text))]

    def inside(a: Span) -> bool:
        return any(s <= a[0] < e for s, e in spans)

    if isinstance(value, str) and value.strip().isdigit():
        runs = [(m.start(), m.end()) for m in _DIGIT_RUN.finditer(text)]
        stated = [r for r in runs if text[r[0] : r[1]] == value.strip() and inside(r)]
        other = _hedged(text, stated, runs)
    elif isinstance(value, str | bool):
        return None
    else:
        amounts = amounts_of(text)
        hits = [a for a in amounts if states_number(a, float(value), cents) and inside((a.start, a.end))]
        kinds = {a.money for a in hits}
        other = _hedged(text, [(a.start, a.end) for a in hits], [(a.start, a.end) for a in amounts if a.money in kinds])
    return None if other is None else text[other[0] : other[1]].strip()


_MODAL = re.compile(
    r"\b(?:could|might|maybe|perhaps|possibly|probably|alternatively|otherwise|instead|unless)\b", re.IGNORECASE
)


def _floated(text: str, a: Span) -> bool:
    """Whether a figure stands in a clause that offers it as a possibility (a modal hedge, no word of working)."""
    ends = [m.end() for m in _CLAUSE_END.finditer(text, 0, a[0])]
    start = ends[-1] if ends else 0
    after = _CLAUSE_END.search(text, a[1])
    clause = text[start : after.start() if after else len(text)]
    return _MODAL.search(clause) is not None and _WORKING.search(clause) is None


def _alone_in_brackets(text: str, a: Span) -> bool:
    for m in _ASIDE.finditer(text):
        if m.start() < a[0] and a[1] <= m.end():
            return not text[m.start() + 1 : a[0]].strip(" $€£") and not text[a[1] : m.end() - 1].strip(" $€£")
    return False


def _wrong_stated(
    text: str, value: Value | None, wrong: Sequence[Value], cents: bool, label: str | None = None
) -> str | None:
    """The first declared wrong value the text states as an answer (a wrong text inside the value itself, or a
    wrong figure given as context, :func:`_as_context`, does not count)."""
    rest = text
    if isinstance(value, str) and (pattern := text_pattern(value)) is not None:
        rest = pattern.sub(" \x00 ", text)
    for w in wrong:
        if isinstance(w, str):
            if states_text(rest, w):
                return repr(w)
        elif not isinstance(w, bool):
            hits = (a for a in amounts_of(text) if states_number(a, float(w), cents))
            hit = next((a for a in hits if not _as_context(text, a, value, cents, label)), None)
            if hit is not None:
                return f"{w!r} (as {_shown(text, hit)!r})"
    return None


def _context_figure(text: str, a: Amount, value: Value, wrong: Sequence[Value], cents: bool) -> bool:
    """Is this amount a declared wrong figure given as context (it does not count as a candidate answer)?"""
    return any(not isinstance(w, str | bool) and states_number(a, float(w), cents) for w in wrong) and _as_context(
        text, a, value, cents, None
    )


def _label_clauses(text: str, label: str) -> list[tuple[int, int]]:
    """After each occurrence of the label (whole words, any case): the rest of its clause, at most LABEL_WINDOW."""
    words = r"\s+".join(re.escape(w) for w in label.split())
    spans = []
    for m in regex(rf"(?<!\w){words}(?!\w)", re.IGNORECASE).finditer(text):
        limit = min(len(text), m.end() + LABEL_WINDOW)
        end = _CLAUSE_END.search(text, m.end(), limit)
        spans.append((m.end(), end.start() if end else limit))
    return spans


def _labelled_amount(text: str, spans: list[tuple[int, int]], cents: bool) -> Amount | None:
    """The amount after the first label with one: with cents its first money amount, else its first amount."""
    for money_only in (cents, False):
        for start, end in spans:
            inside = [a for a in amounts_of(text) if start <= a.start < end and (a.money or not money_only)]
            if inside:
                return inside[0]
    return None


def judge_value(
    text: str,
    value: Value,
    *,
    cents: bool = False,
    label: str | None = None,
    wrong_values: Sequence[Value] = (),
    answer_size: int = 1,
) -> tuple[bool, str]:
    """Does the text state the value as its answer (module docstring)? Returns (passed, what was found)."""
    wrong = _wrong_stated(text, value, wrong_values, cents, label)
    if wrong is not None:
        return False, f"it states {wrong}, a value declared wrong"
    if isinstance(value, str) or label is not None:
        return _judge_labelled_or_text(text, value, cents, label)
    if isinstance(value, bool):
        return False, "a true/false value cannot be stated"
    amounts = tuple(a for a in amounts_of(text) if not _context_figure(text, a, value, wrong_values, cents))
    stated = [a for a in amounts if states_number(a, float(value), cents)]
    if not stated:
        return False, "it does not state the value"
    other = hedge_in(text, value, cents)
    if other is not None:
        return False, f"it hedges: it offers {other!r} beside the answer"
    worst = ""
    for money in sorted({a.money for a in stated}, reverse=True):
        of_kind = [a for a in amounts if a.money == money]
        keys = {"value" if states_number(a, float(value), cents) else f"{a.value:.6f}" for a in of_kind}
        if len(keys) <= answer_size + 1:
            return True, f"it states {_shown(text, stated[0])!r}"
        shown = ", ".join(repr(_shown(text, a)) for a in of_kind[:4])
        kind = "money amounts" if money else "numbers"
        worst = worst or (
            f"it states {len(keys)} different {kind} ({shown}, …) where the answer has {answer_size}: "
            "a list of candidates is not an answer"
        )
    return False, worst


def _judge_labelled_or_text(text: str, value: Value, cents: bool, label: str | None) -> tuple[bool, str]:
    if label is None:
        assert isinstance(value, str)
        return (True, f"it states {value!r}") if states_text(text, value) else (False, "it does not state the value")
    spans = _label_clauses(text, label)
    if not spans:
        return False, f"it never says {label!r}"
    if isinstance(value, str):
        start, end = spans[0]
        clause = excerpt(text[start:end], 80)
        return states_text(text[start:end], value), f"after {label!r} it says {clause!r}"
    first = _labelled_amount(text, spans, cents)
    if first is None:
        return False, f"it states no amount after {label!r}"
    ok = not isinstance(value, bool) and states_number(first, float(value), cents)
    other = hedge_in(text, value, cents, label) if ok else None
    if other is not None:
        return False, f"it hedges: after {label!r} it offers {other!r} beside the answer"
    return ok, f"after {label!r} it states {_shown(text, first)!r}"


def judge_contains(text: str, needle: str, case_insensitive: bool, wrong_values: Sequence[Value]) -> tuple[bool, str]:
    """Does the text contain the needle and state none of the declared wrong values?"""
    haystack, want = (text.casefold(), needle.casefold()) if case_insensitive else (text, needle)
    if want not in haystack:
        return False, "it does not contain the text"
    rest = regex(re.escape(needle), re.IGNORECASE if case_insensitive else 0).sub(" \x00 ", text)
    wrong = _wrong_stated(rest, None, wrong_values, False)
    if wrong is not None:
        return False, f"it states {wrong}, a value declared wrong"
    return True, f"it contains {needle!r}"


def excerpt(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
