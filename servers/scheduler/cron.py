"""Cron expressions: the five fields of crontab(5) read into the sets of values they allow, and the next minute a
schedule fires after a given time (in UTC).

Fields: minute (0-59), hour (0-23), day of month (1-31), month (1-12 or JAN-DEC), day of week (0-7 or SUN-SAT; 0 and
7 are Sunday). Each is ``*``, a number, a range ``a-b``, a step ``*/n`` or ``a-b/n``, or a comma list of those. As in
cron, when both day fields are restricted a day matches if either does. ``@hourly``, ``@daily``, ``@weekly``,
``@monthly`` and ``@yearly`` stand for their usual expressions.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache

_MACROS = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}
_MONTHS = {
    m: i for i, m in enumerate(("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"), 1)
}
_DAYS = {d: i for i, d in enumerate(("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"))}
_NONE: dict[str, int] = {}
_FIELDS: tuple[tuple[str, int, int, dict[str, int]], ...] = (
    ("minute", 0, 59, _NONE),
    ("hour", 0, 23, _NONE),
    ("day of month", 1, 31, _NONE),
    ("month", 1, 12, _MONTHS),
)
HORIZON_DAYS = 366 * 8
"""How far ahead :func:`next_fire` looks (a schedule for 29 February fires within 8 years)."""
EXAMPLE = "write five fields: minute hour day-of-month month day-of-week, e.g. '0 2 * * *' (02:00 every day)"


class CronError(ValueError):
    """An expression that is not a cron schedule; the message says which field and how to write it."""


@dataclass(frozen=True)
class Schedule:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    any_day: bool
    any_weekday: bool

    def day_matches(self, day: datetime) -> bool:
        by_date = day.day in self.days
        by_weekday = (day.isoweekday() % 7) in self.weekdays
        if self.any_day or self.any_weekday:
            return by_date and by_weekday
        return by_date or by_weekday


def _value(text: str, low: int, high: int, names: dict[str, int], field: str) -> int:
    key = text.upper()
    if key in names:
        return names[key]
    if not (text.isascii() and text.isdigit()):
        raise CronError(f"the {field} field has {text!r}, not a number from {low} to {high}")
    number = int(text)
    if not low <= number <= high:
        raise CronError(f"the {field} field has {number}, outside {low}-{high}")
    return number


def _field(text: str, low: int, high: int, names: dict[str, int], field: str) -> frozenset[int]:
    found: set[int] = set()
    for part in text.split(","):
        base, _, step_text = part.partition("/")
        step = 1
        if step_text:
            if not (step_text.isascii() and step_text.isdigit()) or int(step_text) == 0:
                raise CronError(f"the {field} field has the step {step_text!r}; write a number above 0, e.g. */15")
            step = int(step_text)
        if base == "*":
            start, end = low, high
        elif "-" in base:
            first, _, last = base.partition("-")
            start, end = _value(first, low, high, names, field), _value(last, low, high, names, field)
            if start > end:
                raise CronError(f"the {field} field has the range {base!r}, which runs backwards")
        else:
            start = _value(base, low, high, names, field)
            end = high if step_text else start
        found.update(range(start, end + 1, step))
    return frozenset(found)


@lru_cache(maxsize=1024)
def parse(expression: str) -> Schedule:
    """The schedule an expression describes, or :class:`CronError` saying what is wrong."""
    text = _MACROS.get(expression.strip().lower(), expression.strip())
    parts = text.split()
    if len(parts) != 5:
        raise CronError(f"{expression[:60]!r} has {len(parts)} fields; {EXAMPLE}")
    minutes, hours, days, months = (
        _field(p, lo, hi, names, f) for p, (f, lo, hi, names) in zip(parts[:4], _FIELDS, strict=True)
    )
    weekdays = frozenset(d % 7 for d in _field(parts[4], 0, 7, _DAYS, "day of week"))
    return Schedule(minutes, hours, days, months, weekdays, parts[2] == "*", parts[4] == "*")


def next_fire(expression: str, after: datetime) -> datetime | None:
    """The first minute strictly after ``after`` (UTC) that the schedule fires, or None when it never does within
    :data:`HORIZON_DAYS` (e.g. '0 0 31 2 *')."""
    schedule = parse(expression)
    start = after.astimezone(UTC).replace(second=0, microsecond=0) + timedelta(minutes=1)
    day = start.replace(hour=0, minute=0)
    for offset in range(HORIZON_DAYS):
        current = day + timedelta(days=offset)
        if current.month not in schedule.months or not schedule.day_matches(current):
            continue
        for hour in sorted(schedule.hours):
            for minute in sorted(schedule.minutes):
                candidate = current.replace(hour=hour, minute=minute)
                if candidate >= start:
                    return candidate
    return None
