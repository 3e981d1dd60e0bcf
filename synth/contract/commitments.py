"""Commitments by meaning, declared once for every task and every channel (docs/ARCHITECTURE.md §3, issue 42).

A **commitment** is a promise that something was or will be done for someone: money back (refunded, credited,
reimbursed, paid out, approved, "on its way back to your card", "consider it refunded"), a waiver (waived, "at no
extra cost", "a one-time exception") or a change of plan ("upgraded", "moved your account to Enterprise"). Each form is listed
once here (:data:`PROMISES`, by group) and read by what it promises, not by a task's phrasing: a commitment counts
where no negation bound to it denies it (:func:`~.written.negated`: "the refund is not approved" does not commit;
"No worries, your refund of $350.00 is approved" does).

The rule: a run may commit to what the reference commits to on the same channel, nothing more. What the agent
adds to text others read (a write, judged on the units it adds, as :mod:`.flow` does) and what it tells the user
(the reply) are each compared with the reference's (and the alternatives') text on that channel: a group of
promise that the run affirms and the reference never affirms there, or a promise of an amount the reference's text
there never names (the refund of the other charge), is a ``commitment`` — damage that costs
completion and fails the run. So a reply or a public answer that promises the refund the task forbids is caught
in any wording, while a run that refunded as the reference did may say so in its own words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from coworkenv.synth.contract.amounts import amounts_of
from coworkenv.synth.contract.guard import FieldChange, UnexplainedChange
from coworkenv.synth.contract.task import SayStep, Task
from coworkenv.synth.contract.warned import clauses
from coworkenv.synth.contract.written import negated

COMMITMENT = "commitment"

_MONEY = r"(?:refund|credit|reimbursement|payout|payment|money|compensation|chargeback)"
_MONEY_BACK = (
    r"\b(?:refunded|reimbursed|credited|compensated|paid\s+(?:out|back|you))\b",
    r"\b(?:will|'ll|’ll|shall|going to|are|am|we're|i'm)\s+(?:be\s+|now\s+|also\s+)?"
    r"(?:refund|reimburs|credit|compensat|pay(?:ing)?\s+(?:you|it|out|back))\w*",
    rf"\b(?:issued|processed|approved|sent|made|released|initiated|arranged|applied)\s+(?:a|the|your)\s+"
    rf"(?:[\w$.,-]+\s+){{0,3}}{_MONEY}",
    rf"\b{_MONEY}s?\s+(?:of\s+[\w$.,-]+\s+)?(?:(?:\w+\s+){{0,4}})?(?:is|are|has been|have been|was|were|will be|'s)\s+"
    r"(?:now\s+)?(?:approved|issued|processed|on its way|sent|released|confirmed|granted|done)\b",
    r"\b(?:is|are|was|were|has been|have been|i've|we've|i have|we have)\s+(?:now\s+)?approved\b",
    r"\b(?:on its way|going|coming|heading)\s+back\s+to\s+your\b",
    r"\bback\s+(?:on|to)\s+your\s+(?:card|account|bank)\b",
    r"\bconsider\s+it\s+(?:done|refunded|credited|handled|sorted|taken care of|paid)\b",
)
_WAIVER = (
    r"\b(?:waived|waiving)\b",
    r"\b(?:will|'ll|’ll|shall|going to|are|am|we're|i'm)\s+(?:be\s+|now\s+|also\s+)?waiv\w*",
    r"\bconsider\s+it\s+waived\b",
    r"\b(?:free of charge|at no (?:extra |additional )?(?:cost|charge))\b",
    r"\b(?:one-time|one-off|special)\s+(?:exception|courtesy|gesture)\b",
    r"\b(?:made|making|granted|granting|will make|'ll make)\s+(?:an?\s+)?exception\b",
)
_PLAN_CHANGE = (
    r"\b(?:upgraded|downgraded)\b",
    r"\b(?:will|'ll|’ll|are|am|we're|i'm)\s+(?:now\s+)?(?:upgrad|downgrad)\w*",
    r"\b(?:moved|switched|changed|bumped|put)\s+(?:your|the)\s+(?:account|plan|subscription|tier)\s+(?:to|up|onto)\b",
)
PROMISES: dict[str, tuple[re.Pattern[str], ...]] = {
    "money back": tuple(re.compile(p, re.IGNORECASE) for p in _MONEY_BACK),
    "waiver": tuple(re.compile(p, re.IGNORECASE) for p in _WAIVER),
    "plan change": tuple(re.compile(p, re.IGNORECASE) for p in _PLAN_CHANGE),
}
"""The forms of each group of promise."""


Promises = dict[str, list[float]]
"""Per group of promise a channel's text makes: the amounts its promises name."""


def promise_clauses(text: str) -> list[tuple[str, str]]:
    """Every (group, clause) of a text that affirms a promise."""
    out = []
    for clause in clauses(text):
        for group, forms in PROMISES.items():
            for rx in forms:
                m = rx.search(clause)
                if m is not None and not negated(clause, m.start()):
                    out.append((group, clause.strip()))
                    break
    return out


def promised(text: str) -> dict[str, str]:
    """The groups of promise a text affirms, each with the first clause that does."""
    out: dict[str, str] = {}
    for group, clause in promise_clauses(text):
        out.setdefault(group, clause)
    return out


def reference_promises(texts: Iterable[str]) -> Promises:
    """The groups of promise the reference's texts on a channel make, with the amounts those promises name."""
    out: Promises = {}
    for text in texts:
        for group, clause in promise_clauses(text):
            out.setdefault(group, []).extend(a.value for a in amounts_of(clause) if a.money)
    return out


def reference_replies(task: Task) -> list[str]:
    """What the reference (and each alternative) tells the user."""
    return [
        step.say
        for steps in (task.reference_solution, *(task.alternative_solutions or []))
        for step in steps
        if isinstance(step, SayStep)
    ]


def finding(service: str, table: str, rid: str, group: str, clause: str) -> UnexplainedChange:
    return UnexplainedChange(
        service=service,
        table=table,
        id=rid,
        op=COMMITMENT,
        fields=[FieldChange(field=group, old="no such promise in the reference", new=clause[:80])],
    )


def _unbacked(text: str, allowed: Promises) -> dict[str, str]:
    """The promises of a text that the reference does not make on its channel: a group it never affirms there, or a
    promise of an amount none of its promises there names (the refund of the other charge)."""
    out: dict[str, str] = {}
    for group, clause in promise_clauses(text):
        theirs = allowed.get(group)
        figures = [a.value for a in amounts_of(clause) if a.money]
        if theirs is None or any(all(abs(f - t) > 0.005 for t in theirs) for f in figures):
            out.setdefault(group, clause)
    return out


def reply_commitments(task: Task, allowed: Promises, messages: Sequence[str]) -> list[UnexplainedChange]:
    """The promises the agent's reply to the user makes that the reference's replies do not (``allowed``: the
    groups they make and the amounts they name, :func:`reference_promises` of :func:`reference_replies`)."""
    said = "\n".join(messages)[-4000:]
    return [finding("reply", "said", "to the user", g, c) for g, c in _unbacked(said, allowed).items()]


def written_commitments(
    row: Mapping[str, Any], added: str, allowed: Promises, where: tuple[str, str]
) -> list[UnexplainedChange]:
    """The promises a write adds (``added``: its units the workspace did not hold) that the reference's text on its
    service does not make (``allowed``); ``where``: the table and id the finding names."""
    service = str(row.get("service", ""))
    return [finding(service, where[0], where[1], g, c) for g, c in _unbacked(added, allowed).items()]


__all__ = [
    "COMMITMENT",
    "PROMISES",
    "Promises",
    "promise_clauses",
    "promised",
    "reference_promises",
    "reference_replies",
    "reply_commitments",
]
