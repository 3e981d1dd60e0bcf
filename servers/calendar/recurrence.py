"""Occurrences of events and the busy times they make (pure functions; the tools wrap them).

A recurring event is expanded in its own time zone: each occurrence starts at the first one's local wall time
on its date, so a weekly 09:30 meeting in Europe/Berlin stays at 09:30 Berlin time across a daylight-saving
change. ``count`` counts from the first occurrence, cancelled ones included (as RFC 5545 counts EXDATEs).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Any

from coworkenv.servers.calendar.models import MAX_EVENT_DAYS, WEEKDAYS, zone
from coworkenv.servers.kit import parse_time

Row = Mapping[str, Any]
Span = tuple[datetime, datetime]


def _period_starts(event: Row, after: datetime | None) -> Iterator[datetime]:
    """Start times of every occurrence of a recurring event in order (cancelled ones too), beginning near
    ``after`` when the rule has no count (periods wholly before it are skipped, not walked)."""
    rule = event["recurrence"]
    tz = zone(event["timezone"])
    local = parse_time(event["start"]).astimezone(tz)
    wall = local.time().replace(tzinfo=None)
    weekly = rule["frequency"] == "weekly"
    period = 7 * rule["interval"] if weekly else rule["interval"]
    origin = local.date() - timedelta(days=local.weekday()) if weekly else local.date()
    days = ([WEEKDAYS.index(d) for d in rule["by_day"]] or [local.weekday()]) if weekly else [0]
    k = 0
    if after is not None and rule["count"] is None:
        behind = (after.astimezone(tz).date() - origin).days - MAX_EVENT_DAYS - 1
        k = max(0, behind // period)
    while True:
        try:
            base = origin + timedelta(days=period * k)
        except OverflowError:
            return
        for offset in days:
            try:
                day: date = base + timedelta(days=offset)
            except OverflowError:
                return
            if day < local.date():
                continue
            yield datetime.combine(day, wall, tzinfo=tz).astimezone(UTC)
        k += 1


def starts(event: Row, after: datetime | None = None) -> Iterator[datetime]:
    """Start times of the event's occurrences in order, cancelled occurrences left out; endless for a rule
    without until or count (the caller stops)."""
    rule = event.get("recurrence")
    if not rule:
        yield parse_time(event["start"])
        return
    until = parse_time(rule["until"]) if rule.get("until") else None
    cancelled = {parse_time(t) for t in event.get("cancelled_occurrences") or ()}
    for n, start in enumerate(_period_starts(event, after), start=1):
        if until is not None and start > until:
            return
        if rule.get("count") is not None and n > rule["count"]:
            return
        if start not in cancelled:
            yield start


def duration(event: Row) -> timedelta:
    return parse_time(event["end"]) - parse_time(event["start"])


def occurrences(event: Row, time_min: datetime, time_max: datetime) -> list[Span]:
    """The occurrences of an event that overlap [time_min, time_max), in order."""
    length = duration(event)
    out: list[Span] = []
    for start in starts(event, time_min):
        if start >= time_max:
            break
        if start + length > time_min:
            out.append((start, start + length))
    return out


def is_occurrence(event: Row, when: datetime) -> bool:
    """True when an occurrence of the event (not cancelled) starts exactly at ``when``."""
    for start in starts(event, when):
        if start >= when:
            return start == when
    return False


def upcoming(event: Row, now: datetime, limit: int = 5) -> list[datetime]:
    """Start times of the next ``limit`` occurrences that have not ended by ``now``."""
    length = duration(event)
    out: list[datetime] = []
    for start in starts(event, now):
        if start + length > now:
            out.append(start)
            if len(out) >= limit:
                break
    return out


# ---------------------------------------------------------------------------------------------- busy times
def blocks(event: Row, email: str) -> bool:
    """Whether the event makes this person busy: it is not cancelled nor shown as free, and they organize it or
    are invited to it and have not declined."""
    if event["status"] == "cancelled" or event["transparency"] == "transparent":
        return False
    answer = next((a["response_status"] for a in event["attendees"] if a["email"] == email), None)
    if answer is not None:
        return answer != "declined"
    return bool(event["organizer"] == email)


def merge(spans: Iterable[Span]) -> list[Span]:
    """Overlapping or touching spans joined into one, sorted."""
    out: list[Span] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def busy(events: Iterable[Row], time_min: datetime, time_max: datetime) -> list[Span]:
    """The merged busy spans of these events within [time_min, time_max), clipped to it."""
    spans = [
        (max(s, time_min), min(e, time_max)) for event in events for s, e in occurrences(event, time_min, time_max)
    ]
    return merge(spans)


def overlaps(spans: list[Span], start: datetime, end: datetime) -> bool:
    """Whether [start, end) meets any of the sorted, disjoint spans (only the last span starting before ``end``
    can: every earlier one ends before that one starts)."""
    index = bisect_left(spans, (end,)) - 1
    return index >= 0 and spans[index][1] > start
