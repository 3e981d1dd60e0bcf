"""What the agent wrote where others read it, and the commitments in it (the ``wrote_matches`` check).

**Written text.** The text of a run's writes is every string argument with a space in it (free text: a reply's
body, a mail's subject and body, a chat post, a document's or a file's content, a description; not ids, addresses
or enum values) of the agent's successful calls that changed state, as the audit log keeps them (validated
arguments). A ``wrote_matches`` check may narrow the calls by service, tool and arguments (``{"public": true}``:
public replies only). Text copied from what the run read still counts: a customer reads a pasted promise as one.

**Commitments.** A match of the check's pattern commits only where it is not denied: a negation (no, not,
never, cannot, unable, nothing, none, without, -n't, "won't") **bound to it** — right before the match, with
nothing between them but auxiliaries and articles ("will not be refunded", "no refund", "never paid"; at most three
words) and no comma, in its clause (cut at sentence ends, ``;``, ``:``, new lines and "but", "however", …). So "Good news: we made a one-off exception to our refund policy" commits to an exception, "We cannot
make an exception" does not; "the refund is not approved" does not commit, and "No worries, your refund of $350.00
is approved" does (the "No" belongs to "worries", not to the promise), and so does "not verified (blacklisted)".
A match in a question ("shall I refund it?") or after a condition in its part of the clause ("I can refund it if
you want") does not commit (write the pattern so that it matches
from the commitment's subject: a negation between the match's first word and its last is inside the match, and the
pattern decides).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from coworkenv.servers.kit.text import regex
from coworkenv.synth.contract.matchers import Filter, filter_matches
from coworkenv.synth.contract.warned import clauses

_DENIAL = re.compile(
    r"\b(?:no|not|never|cannot|unable|nothing|none|neither|nor|without|won't|can't|couldn't|wouldn't|isn't|wasn't|"
    r"aren't|don't|doesn't|didn't|hasn't|haven't)\b|n't\b|n’t\b",
    re.IGNORECASE,
)


_CONDITION = re.compile(
    r"\b(?:if|whether|unless|would you like|do you want|shall i|should i|let me know)\b", re.IGNORECASE
)
_WORD = re.compile(r"[\w$’'.-]+")
_BETWEEN = frozenset(
    [
        "be",
        "been",
        "being",
        "is",
        "was",
        "are",
        "were",
        "am",
        "have",
        "has",
        "had",
        "do",
        "does",
        "did",
        "will",
        "would",
        "shall",
        "should",
        "can",
        "could",
        "may",
        "might",
        "must",
        "yet",
        "ever",
        "also",
        "really",
        "to",
        "going",
        "able",
        "any",
        "a",
        "an",
        "the",
        "this",
        "that",
        "it",
        "so",
        "your",
        "you",
        "them",
        "him",
        "her",
        "us",
        "our",
        "their",
        "make",
        "give",
        "offer",
        "issue",
        "process",
        "provide",
        "grant",
        "approve",
        "authorize",
        "authorise",
        "send",
        "get",
        "accept",
        "allow",
        "promise",
        "honor",
        "honour",
        "extend",
        "apply",
        "waive",
    ]
)
"""Words that may stand between a negation and what it denies: auxiliaries, articles, pronouns and the light verbs
of a promise ("will not be refunded", "no refund", "never paid", "cannot make an exception")."""


def negated(clause: str, start: int) -> bool:
    """Whether what starts at ``start`` in a clause is denied: a negation bound to it — nothing between them but
    auxiliaries and articles (at most three words), and no comma — or a condition or question in its part of the
    clause (after its last comma or bracket: an aside is its own part)."""
    if clause.rstrip().endswith("?"):
        return True
    head = clause[:start]
    near = head[max(head.rfind(","), head.rfind("("), head.rfind(")")) + 1 :]
    if _CONDITION.search(near):
        return True
    words = [w.group(0).casefold() for w in _WORD.finditer(near)]
    for k in range(len(words) - 1, max(-1, len(words) - 5), -1):
        if _DENIAL.fullmatch(words[k]) or words[k].endswith(("n't", "n’t")):
            return True
        if words[k] not in _BETWEEN:
            return False
    return False


def affirmed(text: str, pattern: str, case_insensitive: bool = True) -> str | None:
    """The first clause of ``text`` with a match of ``pattern`` that no negation bound to it denies, or None."""
    rx = regex(pattern, re.IGNORECASE if case_insensitive else 0)
    for clause in clauses(text):
        for found in rx.finditer(clause):
            if found.group(0).strip() and not negated(clause, found.start()):
                return clause.strip()
    return None


def strings_in(value: Any) -> Iterator[str]:
    """Every text inside a JSON value (a tool's arguments or result), in order."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from strings_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings_in(v)


def is_write(row: Mapping[str, Any]) -> bool:
    """A successful call of the agent that changed state."""
    return (
        str(row.get("actor", "")).split(":", 1)[0] == "agent"
        and row.get("outcome") == "ok"
        and bool(row.get("state_changed"))
    )


def calls_named(row: Mapping[str, Any], service: str | None, tool: str | None, arguments: Filter) -> bool:
    """Whether an audit row (or a step) is a call of ``service``.``tool`` (None: any) with matching arguments."""
    if service is not None and row.get("service") != service:
        return False
    if tool is not None and row.get("tool") != tool:
        return False
    return filter_matches(row.get("arguments") or {}, arguments)


def written_texts(
    audit: Sequence[Mapping[str, Any]],
    service: str | None = None,
    tool: str | None = None,
    arguments: Filter | None = None,
) -> list[tuple[int, str]]:
    """(audit index, text) of each free text the agent's writes (narrowed as given) put where others read it."""
    arguments = arguments or {}
    out = []
    for i, row in enumerate(audit):
        if is_write(row) and calls_named(row, service, tool, arguments):
            out += [(i, text) for text in strings_in(row.get("arguments")) if any(c.isspace() for c in text.strip())]
    return out


__all__ = ["affirmed", "calls_named", "is_write", "negated", "strings_in", "written_texts"]
