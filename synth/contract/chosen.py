"""Reading which candidate a reply singles out: the one a cue word ("most", "largest", "busiest") is said of.

A ``said_matches`` check for "the customer with the most tickets" (a name and "most" in one clause) is passed by a
reply that says it of every customer: "Acme has the most. Globex has the most. Initech has the most." — a hedge
that names the right one by naming them all. The ``said_choice`` check reads the reply instead: in each sentence
(cut at sentence ends, semicolons and new lines), each cue word is said of the candidate named **nearest** to it
(the one before it on a tie), together with the candidates listed with that one ("Acme and Globex have the most":
both). The check passes when the cue is said of the answer and of no other candidate: "Acme has the most stale
tickets (3), Globex has 1" names Acme; "Acme, Globex and Initech lead" and a sentence per candidate fail. A cue
word with no candidate in its sentence is said of nobody, and so is one with a negation between it and its
candidate ("Globex does not have the most").

Like every said check it reads the capped reply (:mod:`.said`); the cue is a bounded pattern
(:mod:`.regex_bounds`) and the candidates are literal names, so its cost is bounded by the cap.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|[;\n]")
_LISTED = re.compile(r"\s*(?:,\s*)?(?:(?:and|or|&|/|plus|as well as|together with)\s*)?(?:both\s+)?", re.IGNORECASE)
"""What may stand between two candidates of one list: a comma, "and", "or", "&", "/" (nothing else)."""
_NEGATION = re.compile(r"\b(?:not|no|never|nor)\b|n't\b", re.IGNORECASE)


def name_key(name: str) -> str:
    """A name as compared: spaces collapsed, case folded."""
    return " ".join(name.split()).casefold()


def _name_pattern(name: str) -> str:
    words = [re.escape(w) for w in name.split()]
    return r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)"


def _mentions(sentence: str, finder: re.Pattern[str], index: dict[str, int]) -> list[tuple[int, int, int]]:
    """(start, end, candidate) of each candidate named in the sentence, longest name first where names overlap."""
    out = []
    for m in finder.finditer(sentence):
        key = name_key(m.group(0))
        if key in index:
            out.append((m.start(), m.end(), index[key]))
    return out


def _listed_with(mentions: list[tuple[int, int, int]], k: int, sentence: str) -> set[int]:
    """The candidate of mention ``k`` and of every mention listed with it (only separators between them)."""
    group = {mentions[k][2]}
    for step in (-1, 1):
        i = k
        while 0 <= i + step < len(mentions):
            a, b = (mentions[i + step], mentions[i]) if step < 0 else (mentions[i], mentions[i + step])
            gap = sentence[a[1] : b[0]]
            if _LISTED.fullmatch(gap) is None:
                break
            i += step
            group.add(mentions[i][2])
    return group


def chosen(text: str, cue: str, candidates: Sequence[str], case_insensitive: bool = True) -> set[str]:
    """The candidates the cue words of ``text`` are said of (see the module's docstring)."""
    flags = re.IGNORECASE if case_insensitive else 0
    names = sorted(dict.fromkeys(c for c in candidates if c.strip()), key=len, reverse=True)
    if not names:
        return set()
    finder = re.compile("|".join(_name_pattern(n) for n in names), re.IGNORECASE)
    index = {name_key(n): i for i, n in enumerate(names)}
    cue_rx = re.compile(cue, flags)
    found: set[int] = set()
    for sentence in _SENTENCE_END.split(text):
        cues = [m for m in cue_rx.finditer(sentence) if m.group(0).strip()]
        if not cues:
            continue
        mentions = _mentions(sentence, finder, index)
        if not mentions:
            continue
        for c in cues:
            distance = [
                (c.start() - end if end <= c.start() else start - c.end() if start >= c.end() else 0, start > c.start())
                for start, end, _ in mentions
            ]
            k = min(range(len(mentions)), key=lambda i: distance[i])
            start, end, _ = mentions[k]
            between = sentence[end : c.start()] if end <= c.start() else sentence[c.end() : start]
            if _NEGATION.search(between) is None:  # "Globex doesn't have the most": said of nobody
                found |= _listed_with(mentions, k, sentence)
    return {names[i] for i in found}


def judge_choice(
    text: str, answer: str, cue: str, candidates: Sequence[str], case_insensitive: bool = True
) -> tuple[bool, str]:
    """Whether ``text`` singles out ``answer`` (the cue is said of it and of no other candidate); why not when
    it does not."""
    said_of = chosen(text, cue, [answer, *candidates], case_insensitive)
    others = sorted(n for n in said_of if name_key(n) != name_key(answer))
    if others:
        return False, f"it says /{cue}/ of {', '.join(repr(o) for o in others)} too (or instead)"
    if not said_of:
        return False, f"it says /{cue}/ of none of the candidates"
    return True, ""


__all__ = ["chosen", "judge_choice", "name_key"]
