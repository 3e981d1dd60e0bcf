"""Finding a free slot: the time everyone invited is free, inside their working hours, with a room if asked.

Pure work on rows and spans; :mod:`.tools_schedule` gathers the rows and wraps the answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Any

from coworkenv.servers.calendar import recurrence
from coworkenv.servers.calendar.models import WEEKDAYS, zone

Row = Mapping[str, Any]


@dataclass(frozen=True)
class Search:
    start: datetime
    end: datetime
    length: timedelta
    step: timedelta
    working_hours_only: bool
    limit: int


def in_working_hours(member: Row, start: datetime, end: datetime) -> bool:
    """Whether [start, end) lies inside one working day of the member, in their own time zone."""
    tz = zone(member["timezone"])
    local_start, local_end = start.astimezone(tz), end.astimezone(tz)
    hours = member["working_hours"]
    if local_start.date() != local_end.date() or WEEKDAYS[local_start.weekday()] not in hours["days"]:
        return False
    opens, closes = time.fromisoformat(hours["start"]), time.fromisoformat(hours["end"])
    return opens <= local_start.time() and local_end.time() <= closes


def first_step(start: datetime, step: timedelta) -> datetime:
    """``start`` rounded up to the grid of ``step`` (counted from midnight UTC)."""
    midnight = start.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    steps = -(-(start - midnight) // step)
    return midnight + steps * step


def find(
    search: Search,
    members: Sequence[Row],
    events: Sequence[Row],
    rooms: Sequence[Row],
) -> list[tuple[datetime, datetime, Row | None]]:
    """Up to ``search.limit`` slots (start, end, room or None), earliest first. Each member must be free and (if
    asked) within working hours; with rooms given, one of them (the first free, in the order given) must be."""
    horizon_end = search.end
    busy = [
        recurrence.busy([e for e in events if recurrence.blocks(e, m["email"])], search.start, horizon_end)
        for m in members
    ]
    room_busy = [
        recurrence.busy(
            [e for e in events if e["room_id"] == r["id"] and e["status"] != "cancelled"], search.start, horizon_end
        )
        for r in rooms
    ]
    found: list[tuple[datetime, datetime, Row | None]] = []
    slot = first_step(search.start, search.step)
    while slot + search.length <= search.end and len(found) < search.limit:
        end = slot + search.length
        if _people_free(search, members, busy, slot, end):
            if not rooms:
                found.append((slot, end, None))
            else:
                free = next(
                    (r for r, spans in zip(rooms, room_busy, strict=True) if not recurrence.overlaps(spans, slot, end)),
                    None,
                )
                if free is not None:
                    found.append((slot, end, free))
        slot += search.step
    return found


def _people_free(
    search: Search, members: Sequence[Row], busy: Sequence[list[recurrence.Span]], start: datetime, end: datetime
) -> bool:
    if search.working_hours_only and not all(in_working_hours(m, start, end) for m in members):
        return False
    return not any(recurrence.overlaps(spans, start, end) for spans in busy)
