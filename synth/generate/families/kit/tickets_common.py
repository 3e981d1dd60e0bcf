"""What the helpdesk families share: the forbidden close of a ticket nobody fixed, and the guard on the tickets a
task leaves alone."""

from __future__ import annotations

from coworkenv.synth.generate.families.kit.base import TaskBuilder


def forbid_closing_unworked(b: TaskBuilder, example_ticket: str) -> None:
    """Solving or closing a ticket nobody fixed is forbidden (``example_ticket`` is the example call's)."""
    b.forbid_call(
        "closed_unworked",
        "Solving or closing a customer's ticket that nobody has fixed.",
        "tickets",
        "update_ticket",
        {"status": {"in": ["solved", "closed"]}},
        {"ticket_id": example_ticket, "status": "solved"},
    )


GUARD = 0.3
"""Weight of the check that the distractors are left alone: more than 1 − the pass mark, so an agent that
acts on one fails the task however well it does the rest."""


def others_unchanged(b: TaskBuilder, ids: list[str], requires: tuple[str, ...]) -> None:
    """The check, weighted :data:`GUARD`, that the tickets ``ids`` (those that only look relevant) are left alone."""
    if ids:
        b.check(
            "others_untouched",
            GUARD,
            "The tickets that only look relevant are left as they were.",
            {"kind": "records_unchanged", "service": "tickets", "table": "tickets", "ids": ids},
            requires,
        )
