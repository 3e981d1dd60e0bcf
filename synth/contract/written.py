"""What the agent wrote where others read it, and the commitments in it (the ``wrote_matches`` check).

**Written text.** The text of a run's writes is every string argument with a space in it (free text: a reply's
body, a mail's subject and body, a chat post, a document's or a file's content, a description; not ids, addresses
or enum values) of the agent's successful calls that changed state, as the audit log keeps them (validated
arguments). A ``wrote_matches`` check may narrow the calls by service, tool and arguments (``{"public": true}``:
public replies only). Text copied from what the run read still counts: a customer reads a pasted promise as one.

**Commitments.** A match of the check's pattern commits only where it is not denied: a negation (no, not,
never, cannot, unable, nothing, none, without, -n't, "won't") **bound to it** — among the three words right before
the match, in its clause (cut at sentence ends, ``;``, ``:``, new lines and "but", "however", …) and with no comma
between them. So "Good news: we made a one-off exception to our refund policy" commits to an exception, "We cannot
make an exception" does not; "the refund is not approved" does not commit, and "No worries, your refund of $350.00
is approved" does (the "No" belongs to "worries", not to the promise). A match that is a question ("shall I refund
it?") or a condition ("if you want, I can refund it") does not commit either (write the pattern so that it matches
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


def negated(clause: str, start: int) -> bool:
    """Whether the words right before ``start`` in a clause deny what follows: a negation among the last three
    words, with no comma between it and ``start``, or a condition or question around it."""
    head = clause[:start]
    if _CONDITION.search(head) or clause.rstrip().endswith("?"):
        return True
    near = head[head.rfind(",") + 1 :]
    words = list(_WORD.finditer(near))[-3:]
    return bool(words) and _DENIAL.search(near, words[0].start()) is not None


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
