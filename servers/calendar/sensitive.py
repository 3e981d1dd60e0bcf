"""The sensitive kinds of the calendar service: events cancelled, outside people invited, records deleted.

The company's domains are those of the workspace's members (the ``users`` table, before or after). Cancelling
one occurrence of a recurring event counts as a cancel of that event, as does cancelling the whole of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from coworkenv.servers.kit import Change, SensitiveContext, SensitiveKind, became, company_domains, deletes, outside
from coworkenv.servers.kit.kinds import audience_key


def _emails(attendees: Sequence[Mapping[str, Any]] | None) -> set[str]:
    return {str(a["email"]).casefold() for a in attendees or ()}


def cancel(change: Change, ctx: SensitiveContext) -> str | None:
    """``cancel:<event id>``: an event, or one occurrence of a recurring event, cancelled."""
    before, after = change.before or {}, change.after or {}
    if became(change, "status", {"cancelled"}) and change.before is not None:
        return f"cancel:{change.id}"
    if len(after.get("cancelled_occurrences") or ()) > len(before.get("cancelled_occurrences") or ()):
        return f"cancel:{change.id}"
    return None


def external_invite(change: Change, ctx: SensitiveContext) -> str | None:
    """``external_invite:<event id>:<outsiders>`` (``new`` for an event the change creates): people outside the
    company invited to an event (they learn its time, title, description and attendees)."""
    added = _emails((change.after or {}).get("attendees")) - _emails((change.before or {}).get("attendees"))
    return audience_key("external_invite", change, outside(added, company_domains(ctx, "users", "email")))


SENSITIVE: tuple[SensitiveKind, ...] = (
    SensitiveKind("cancel", "events", ("update",), "an event or one of its occurrences cancelled", cancel),
    SensitiveKind(
        "external_invite",
        "events",
        ("create", "update"),
        "someone outside the company invited to an event",
        external_invite,
    ),
    *deletes("users", "calendars", "rooms", "events"),
)
