"""Bounded regular expressions: every pattern a task gives is checked when the task loads.

A task's patterns (``said_matches``, the ``regex`` matcher) run on text an agent wrote, so a pattern that
backtracks badly would let a reply stall grading: ``(a+)+`` is exponential in the text's length and
``.*a.*b`` cubic (24 s on 4000 characters). Patterns are parsed with the standard library's own parser and
the tree is walked; rejected, with a message saying how to rewrite:

- longer than :data:`MAX_PATTERN` characters;
- backreferences (``\\1``, ``(?P=name)``) and conditional groups;
- a repeated group holding a repeat that is not closed by a character it cannot match
  (``(a+)+``, ``(.*)*``, ``(\\s*\\w+)+``; ``(\\w+\\s)+`` is fine);
- a repeat of something that can already match nothing (``(a?)*``, ``(?:\\s*)?``, ``(?=x)?``);
- a repeated group whose alternatives can match the same text (``(a|a)*``, ``(a|ab)*``, ``(ab|\\wb)+``);
- a lookaround with a repeat of more than :data:`LOOKAROUND_REPEAT` (``(?=.*x)`` rescans the rest of the
  text at every position), unless it stands at the top of a pattern anchored at the start, after nothing
  that can match in several ways (``(?s)^(?=.*x)(?=.*y)``, ``\\A``; not with multiline ``^``): that runs
  once, one scan per lookaround;
- repeats in a row that can match the same characters, whose ways to split the text multiply past
  :data:`MAX_SPLITS` (``.*a.*b``, ``\\w+\\s*\\w+x``); one ``.*`` in a run is fine, and so are bounded gaps
  (``refund.{0,60}total``) and a run pinned by a character one side cannot match (``.*\\$\\d+``). A pattern
  anchored at the start is tried at one position only, so it may hold two (``^(?=[\\s\\S]*a[\\s\\S]*b)``).

What is accepted costs at most about the square of the text's length, and the text is bounded: a reply
by :data:`~coworkenv.synth.contract.said.REPLY_CAP`, record fields by their models. On a capped reply that is a
few milliseconds for a natural one and, on a reply built to be slow, a few tenths of a second at worst.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from coworkenv.servers.kit.text import regex
from coworkenv.synth.contract.said import REPLY_CAP

if TYPE_CHECKING:
    import sre_parse as _sre
else:
    from re import _parser as _sre

MAX_PATTERN = 500
"""Longest pattern accepted (characters)."""

LOOKAROUND_REPEAT = 100
"""Largest repeat allowed inside a lookaround."""

MAX_SPLITS = 2 * REPLY_CAP
"""How many ways a run of overlapping repeats may split a text: one unbounded repeat (REPLY_CAP), next to
at most one optional character (``refunds?.*total``)."""

_REPEATS = {_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT}
_SAMPLE = [*range(0x250), 0x2028, 0x3000, 0x0660, 0x4E00, 0xAC00, 0xFF10, 0x1F600]
_SAMPLE_SET = frozenset(_SAMPLE)

_NESTED = (
    "a repeated group holds a repeat that can end anywhere ((a+)+, (.*)*, (\\s*\\w+)+), which backtracks "
    "exponentially; repeat one level only ([\\w\\s]+ rather than (\\w+\\s?)+), or close each inner repeat with a "
    "character it cannot match ((\\w+\\s)+)"
)
_ALTERNATIVES = (
    "a repeated group has alternatives that can match the same text ((a|a)*, (a|ab)*, (ab|\\wb)+), which "
    "backtracks exponentially; make the alternatives start with different characters, or use a class ([ab]+)"
)
_LOOKAROUND = (
    f"a lookaround holds a repeat of more than {LOOKAROUND_REPEAT} ((?=.*x)), which rescans the rest of the text "
    "at every position; to require several things in any order, anchor the pattern at the start so the "
    "lookarounds run once ((?s)^(?=.*x)(?=.*y)), use one check per thing, or bound the gap "
    f"(?=.{{0,{LOOKAROUND_REPEAT}}}x)"
)
_NULLABLE = (
    "a repeat of something that can already match nothing ((a?)*, (?:\\s*)?, (?=x)?) only adds ways to "
    "backtrack; drop the outer repeat"
)
_BACKREF = "backreferences (\\1, (?P=name)) and conditional groups can take exponential time; match the text itself"
_SPLITS = (
    "repeats in a row can match the same characters (.*a.*b, \\w+\\s*\\w+), so matching grows with a power of the "
    "text's length; keep one unbounded repeat per run, bound the others (.{0,60}), or separate them with a "
    "character they cannot match"
)


class PatternError(ValueError):
    """A pattern that could stall grading (or does not compile), with how to rewrite it."""


@dataclass(frozen=True)
class _Item:
    chars: tuple[tuple[Any, Any], ...]  # the single-character sets the item can consume
    splits: int  # ways it can match one stretch of text (1: one way)
    nullable: bool


def check_pattern(pattern: str) -> None:
    """Raise :class:`PatternError` when the pattern is too long, does not compile, or could backtrack badly."""
    problem = pattern_problem(pattern)
    if problem is not None:
        raise PatternError(problem)


@lru_cache(maxsize=1024)
def pattern_problem(pattern: str) -> str | None:
    """What is wrong with the pattern (how to rewrite it), or None when it is accepted."""
    if len(pattern) > MAX_PATTERN:
        return f"pattern is {len(pattern)} characters; at most {MAX_PATTERN} are allowed"
    try:
        parsed = _sre.parse(pattern)
        regex(pattern)
    except Exception as exc:  # re.error, RecursionError, OverflowError
        return f"pattern {pattern!r} does not compile: {exc}"
    data = list(parsed.data)
    start = data[0] if data else None
    once = start in ((_sre.AT, _sre.AT_BEGINNING_STRING), (_sre.AT, _sre.AT_BEGINNING)) and not (
        start == (_sre.AT, _sre.AT_BEGINNING) and parsed.state.flags & re.MULTILINE
    )
    problem = _problem(data, in_repeat=False, in_look=False, runs_once=once)
    return None if problem is None else f"pattern {pattern!r} is not allowed: {problem}"


# ---------------------------------------------------------------------------------------------- the walk
def _problem(seq: Sequence[Any], in_repeat: bool, in_look: bool, runs_once: bool = False) -> str | None:
    """``runs_once``: the sequence is a whole pattern anchored at the start, tried at one position only."""
    fixed = runs_once  # everything so far has one way to match: a lookaround here runs once
    for i, (op, av) in enumerate(seq):
        if fixed and op in (_sre.ASSERT, _sre.ASSERT_NOT):  # a lookaround run once costs one scan
            problem = _problem(list(av[1]), in_repeat=False, in_look=False, runs_once=True)
        else:
            problem = _item_problem(op, av, in_repeat, in_look)
        fixed = fixed and _info([(op, av)]).splits == 1
        if problem is not None:
            return problem
        if in_repeat and op in _REPEATS and av[0] != av[1] and not _closed(seq, i):
            return _NESTED
    return _splits_problem(seq, MAX_SPLITS * REPLY_CAP if runs_once else MAX_SPLITS)


def _item_problem(op: Any, av: Any, in_repeat: bool, in_look: bool) -> str | None:
    if op in (_sre.GROUPREF, _sre.GROUPREF_EXISTS):
        return _BACKREF
    if op in _REPEATS:
        lo, hi, body = av
        if in_look and lo != hi and hi > LOOKAROUND_REPEAT:
            return _LOOKAROUND
        repeated = hi > 1
        if lo != hi and _info(list(body)).nullable:
            return _NULLABLE
        return _problem(list(body), in_repeat or repeated, in_look)
    if op is _sre.SUBPATTERN:
        return _problem(list(av[3]), in_repeat, in_look)
    if op is _sre.ATOMIC_GROUP:
        return _problem(list(av), in_repeat, in_look)
    if op in (_sre.ASSERT, _sre.ASSERT_NOT):
        return _problem(list(av[1]), in_repeat=False, in_look=True)
    if op is _sre.BRANCH:
        alternatives = [list(alt) for alt in av[1]]
        if in_repeat and _ambiguous(alternatives):
            return _ALTERNATIVES
        for alt in alternatives:
            problem = _problem(alt, in_repeat, in_look)
            if problem is not None:
                return problem
    return None


def _closed(seq: Sequence[Any], i: int) -> bool:
    """Is the repeat at ``i`` followed by a required character it cannot match?"""
    if i + 1 >= len(seq):
        return False
    after = _info([seq[i + 1]])
    return not after.nullable and after.splits == 1 and not _overlap(_info([seq[i]]).chars, after.chars)


def _ambiguous(alternatives: list[list[Any]]) -> bool:
    firsts = []
    for alt in alternatives:
        first = _first(alt)
        if first is None:
            return True
        firsts.append(first)
    return any(_overlap(a, b) for i, a in enumerate(firsts) for b in firsts[i + 1 :])


def _first(seq: list[Any]) -> tuple[tuple[Any, Any], ...] | None:
    """The characters the sequence can start with; None when it can match nothing at all."""
    chars: tuple[tuple[Any, Any], ...] = ()
    for item in seq:
        info = _info([item])
        chars += info.chars
        if not info.nullable:
            return chars
    return None


@dataclass
class _Run:
    chars: tuple[tuple[Any, Any], ...]
    splits: int
    between: list[tuple[tuple[Any, Any], ...]]  # required characters since the run's last repeat


def _flat(seq: Sequence[Any]) -> list[Any]:
    """The sequence with plain groups opened (so a required character inside one still pins a run)."""
    out: list[Any] = []
    for op, av in seq:
        out.extend(_flat(list(av[3])) if op is _sre.SUBPATTERN else [(op, av)])
    return out


def _splits_problem(seq: Sequence[Any], budget: int) -> str | None:
    """Multiply the ways consecutive repeats can split a stretch of text, unless a required character pins them.

    The budget is :data:`MAX_SPLITS`, times the text's length for a pattern tried at one position only
    (anchored at the start). A required character pins a run when the run's repeats cannot match it (their stretch ends there), or
    when the next repeat cannot (its stretch starts there): ``.*\\$\\d+`` is one split per ``$``.
    """
    runs: list[_Run] = []
    for item in _flat(seq):
        info = _info([item])
        if info.splits > 1:
            joined = False
            for run in runs:
                if _overlap(run.chars, info.chars) and all(_overlap(m, info.chars) for m in run.between):
                    run.splits, run.chars, run.between = run.splits * info.splits, run.chars + info.chars, []
                    joined = True
                    if run.splits > budget:
                        return _SPLITS
            if not joined:
                runs.append(_Run(info.chars, info.splits, []))
        elif not info.nullable:
            runs = [r for r in runs if _overlap(r.chars, info.chars)]
            for run in runs:
                run.between.append(info.chars)
    return None


def _info(seq: list[Any]) -> _Item:
    chars: tuple[tuple[Any, Any], ...] = ()
    splits, nullable = 1, True
    for op, av in seq:
        if op in (_sre.LITERAL, _sre.NOT_LITERAL, _sre.ANY):
            item = _Item(((op, av),), 1, False)
        elif op is _sre.IN:
            item = _Item(((op, tuple(av)),), 1, False)
        elif op in _REPEATS:
            lo, hi, body = av
            inner = _info(list(body))
            ways = 1 if op is _sre.POSSESSIVE_REPEAT else (min(hi, REPLY_CAP) - lo + 1)
            item = _Item(inner.chars, min(ways * inner.splits, REPLY_CAP), lo == 0 or inner.nullable)
        elif op is _sre.SUBPATTERN:
            item = _info(list(av[3]))
        elif op is _sre.ATOMIC_GROUP:
            inner = _info(list(av))
            item = _Item(inner.chars, 1, inner.nullable)
        elif op is _sre.BRANCH:
            alts = [_info(list(alt)) for alt in av[1]]
            joined = tuple(c for a in alts for c in a.chars)
            item = _Item(joined, max((a.splits for a in alts), default=1), any(a.nullable for a in alts))
        else:  # anchors, lookarounds, references: they consume nothing
            item = _Item((), 1, True)
        chars += item.chars
        splits = min(splits * item.splits, REPLY_CAP)
        nullable = nullable and item.nullable
    return _Item(chars, splits, nullable)


# ---------------------------------------------------------------------------------------------- characters
def _overlap(a: tuple[tuple[Any, Any], ...], b: tuple[tuple[Any, Any], ...]) -> bool:
    """Can some character be consumed by both sets? Case is ignored (a conservative answer).

    The characters tried are a fixed sample of the code points (:data:`_SAMPLE`) and those next to the sets' own
    characters. Which sample characters a set consumes is worked out once per set (:func:`_sample_members`: a
    pattern's sets are mostly the same few, ``.`` ``\\s`` ``\\w`` and letters, across patterns)."""
    if not a or not b:
        return False
    try:
        return _overlap_cached(a, b)
    except TypeError:  # an atom that cannot be hashed (never made by :func:`_info`): worked out afresh
        return _overlap_of(a, b, _sample_of(a), _sample_of(b))


@lru_cache(maxsize=16384)
def _overlap_cached(a: tuple[tuple[Any, Any], ...], b: tuple[tuple[Any, Any], ...]) -> bool:
    return _overlap_of(a, b, _sample_members(a), _sample_members(b))


def _overlap_of(
    a: tuple[tuple[Any, Any], ...], b: tuple[tuple[Any, Any], ...], sample_a: frozenset[int], sample_b: frozenset[int]
) -> bool:
    if not sample_a.isdisjoint(sample_b):
        return True
    in_a, in_b = _holds(a), _holds(b)
    for code in (_codes(a) | _codes(b)) - _SAMPLE_SET:
        if not 0 <= code <= 0x10FFFF:
            continue
        forms = _forms(code)
        if in_a(forms) and in_b(forms):
            return True
    return False


@lru_cache(maxsize=8192)
def _sample_members(atoms: tuple[tuple[Any, Any], ...]) -> frozenset[int]:
    return _sample_of(atoms)


def _sample_of(atoms: tuple[tuple[Any, Any], ...]) -> frozenset[int]:
    """The characters of :data:`_SAMPLE` the set consumes (in one of their case forms)."""
    holds = _holds(atoms)
    return frozenset(code for code in _SAMPLE_SET if holds(_forms(code)))


@lru_cache(maxsize=4096)
def _forms(code: int) -> frozenset[str]:
    ch = chr(code)
    return frozenset(f for f in (ch, ch.lower(), ch.upper()) if len(f) == 1)


def _holds(atoms: tuple[tuple[Any, Any], ...]) -> Callable[[frozenset[str]], bool]:
    """Whether the set consumes one of these forms of a character; a run of plain literals (most of a
    pattern's text) is a set lookup instead of a walk over every atom."""
    if all(op is _sre.LITERAL for op, _ in atoms):
        chars = frozenset(chr(av) for _, av in atoms)
        return lambda forms: not chars.isdisjoint(forms)
    return lambda forms: any(_has(atoms, f) for f in forms)


def _codes(atoms: tuple[tuple[Any, Any], ...]) -> set[int]:
    out: set[int] = set()
    for op, av in atoms:
        if op in (_sre.LITERAL, _sre.NOT_LITERAL):
            out |= {av - 1, av, av + 1}
        elif op is _sre.IN:
            for sub_op, sub_av in av:
                if sub_op in (_sre.LITERAL, _sre.NOT_LITERAL):
                    out |= {sub_av - 1, sub_av, sub_av + 1}
                elif sub_op is _sre.RANGE:
                    out |= {sub_av[0] - 1, sub_av[0], sub_av[1], sub_av[1] + 1}
    return out


def _has(atoms: tuple[tuple[Any, Any], ...], ch: str) -> bool:
    return any(_atom_has(op, av, ch) for op, av in atoms)


def _atom_has(op: Any, av: Any, ch: str) -> bool:
    if op is _sre.ANY:
        return True
    if op is _sre.LITERAL:
        return ord(ch) == av
    if op is _sre.NOT_LITERAL:
        return ord(ch) != av
    negate = bool(av) and av[0][0] is _sre.NEGATE
    hit = any(_class_has(sub_op, sub_av, ch) for sub_op, sub_av in (av[1:] if negate else av))
    return hit != negate


def _class_has(op: Any, av: Any, ch: str) -> bool:
    if op is _sre.LITERAL:
        return ord(ch) == av
    if op is _sre.NOT_LITERAL:
        return ord(ch) != av
    if op is _sre.RANGE:
        return bool(av[0] <= ord(ch) <= av[1])
    if op is _sre.CATEGORY:
        name = str(av).removeprefix("CATEGORY_")
        word = ch.isalnum() or ch == "_"
        tests = {"DIGIT": ch.isdecimal(), "SPACE": ch.isspace(), "WORD": word}
        for key, value in tests.items():
            if name.endswith(key):
                return value != name.startswith("NOT_")
    return True  # anything unknown: assume it can match
