"""How parity reads both sides' answers before comparing them (the rules, one by one).

Claw-Eval's mocks run on the wall clock and some move their fixtures to it; our import runs on the task's simulated
clock with the fixtures as written. So a value is compared as it reads **in the task's own time**, and values that
each side makes up for itself are compared by role, not by text:

1. **Shifted fixture dates.** Two mocks move their fixtures when they load them (at start and at each ``/reset``):
   gmail moves every email's ``date`` so the newest is one day before the reset; calendar moves every event's
   ``start_time``/``end_time`` so the earliest starts the next day at its own local hour and minute. Both write the
   moved time as its local wall time with a ``Z`` (09:00+08:00 moved by whole days shows as 09:00Z), and our
   profiles store what they show (calendar: whole days left out). Parity works out each mock's move from the
   fixtures and the instant of the ``/reset`` it sent (:func:`mock_shifts`); a date-time the mock answers that,
   moved back, is a fixture time as our profile shows it (or a time the sequence passed; within 2 s: gmail truncates
   to the second) reads as that time. Date and time arguments sent to a shifted service's tools are moved forward
   for the mock (:func:`shift_arguments`; whole days for a date), as an agent reading its dates would, and an answer
   that echoes one (``Invalid date format: ...``, a created event's times) reads as the sequence wrote it. Our side
   is read the same way where the import moved a service's fixtures to the task's one clock (``moved_seconds``).
2. **Now.** A date-time that is no fixture value nor argument and lies within 10 minutes of the side's clock while
   the sequence ran (the mock: the wall clock; ours: the simulated clock) reads ``<now>``; a date (``YYYY-MM-DD``)
   that is none of those and is the side's today reads ``<today>`` (before rule 1: no moved fixture time lies
   within minutes of its side's clock). So creation stamps and audit timestamps agree.
3. **Date-times as instants.** Any other date-time is compared as the instant it names, in UTC to the second
   (``2026-03-01T06:00:00+08:00`` and ``2026-02-28T22:00:00Z`` agree); dates and all other strings as text.
4. **Made-up ids.** A string under an id key (``id``, ``*_id``, items of ``*_ids``) that is no fixture value nor
   argument is an id that side made; it reads ``<new-id:N>``, N counting that side's new ids in the order they
   first appear in the sequence (its later mentions read the same). ``todo_012`` and ``TODO-12`` agree.
5. **Unordered lists.** A list a mock builds from a Python set (:data:`UNORDERED`: rss feeds' ``categories``)
   compares as a set, since its order changes with the mock's hash seed.
6. **Invalid arguments.** A 422 answer is compared by its status alone: FastAPI's validation body and ours differ
   in shape by design. Every other answer is compared whole (status, and the JSON after the rules above; key order
   and ``1`` against ``1.0`` do not count).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from coworkenv.harness.claw_eval.parity_calls import id_key

UNORDERED = frozenset({("rss", "categories")})
"""(service, key) of lists a mock builds from a Python set, in an order that changes from run to run (rss's feeds
list their categories as ``list(set)``): compared as sets."""
NOW_TOLERANCE = timedelta(minutes=10)
SHIFT_TOLERANCE = timedelta(seconds=2)
_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:?\d{2})?$")
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True)
class Shift:
    """How one mock moves its fixture dates when it loads them."""

    fields: tuple[str, ...]
    """The fields it moves."""
    anchor_field: str
    newest: bool
    """The anchor is the newest value of ``anchor_field`` (else the earliest)."""
    offset: timedelta
    """Where the anchor lands, from the instant of loading."""
    keep_time_of_day: bool
    """The anchor keeps its hour and minute (the shift is whole days then)."""
    shown_at_anchor_offset: bool = False
    """Our profile shows the times as the mock does, whole days left out (calendar): a time reads back as its wall
    time plus the anchor's UTC offset; otherwise as its wall time (the mocks write the shifted local wall time with a
    ``Z``, and our profiles store that wall time)."""


SHIFTS = {
    "gmail": Shift(("date",), "date", newest=True, offset=timedelta(days=-1), keep_time_of_day=False),
    "calendar": Shift(
        ("start_time", "end_time"),
        "start_time",
        newest=False,
        offset=timedelta(days=1),
        keep_time_of_day=True,
        shown_at_anchor_offset=True,
    ),
}
"""The Claw-Eval mocks that move their fixtures, and how (read from their ``_load_fixtures``)."""


def as_time(text: str) -> datetime | None:
    """The instant a date-time string names (naive: UTC), or None when it is not one."""
    found = as_aware(text)
    return found.astimezone(UTC) if found is not None else None


def as_day(text: str) -> date | None:
    if not _DAY.match(text):
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def canonical(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _records(document: Any) -> list[dict[str, Any]]:
    if isinstance(document, list):
        return [r for r in document if isinstance(r, dict)]
    if isinstance(document, dict):
        return [r for v in document.values() if isinstance(v, list) for r in v if isinstance(r, dict)]
    return []


def as_aware(text: str) -> datetime | None:
    """The date-time a string names in its own zone (naive: UTC), or None when it is not one."""
    if len(text) > 40 or not _TIME.match(text):
        return None
    cleaned = text.replace(" ", "T", 1)
    try:
        found = datetime.fromisoformat(cleaned[:-1] + "+00:00" if cleaned.endswith("Z") else cleaned)
    except ValueError:
        return None
    return found if found.tzinfo else found.replace(tzinfo=UTC)


def _wall(moment: datetime) -> datetime:
    """A date-time's local wall time read as UTC (what a mock writes after shifting it)."""
    return moment.replace(tzinfo=UTC)


def _anchor(shift: Shift, files: Mapping[str, Any]) -> datetime | None:
    anchors = [
        t
        for document in files.values()
        for record in _records(document)
        if (t := as_aware(str(record.get(shift.anchor_field) or ""))) is not None
    ]
    if not anchors:
        return None
    return max(anchors) if shift.newest else min(anchors)


def shifted_times(service: str, fixtures: Mapping[str, Any]) -> list[datetime]:
    """The fixture times of ``service`` its mock moves, each as an instant and as our profile shows it (empty for a
    mock that moves nothing)."""
    shift = SHIFTS.get(service)
    if shift is None:
        return []
    anchor = _anchor(shift, fixtures)
    extra = (anchor.utcoffset() or timedelta()) if anchor is not None and shift.shown_at_anchor_offset else timedelta()
    out = []
    for document in fixtures.values():
        for record in _records(document):
            for name in shift.fields:
                found = as_aware(str(record.get(name) or ""))
                if found is not None:
                    out += [found.astimezone(UTC), _wall(found) + extra]
    return out


def mock_shifts(fixtures: Mapping[str, Mapping[str, Any]], loaded: datetime) -> dict[str, timedelta]:
    """How far each mock of the task moved its fixtures when it loaded them at ``loaded`` (by service), as a shown
    time is moved back: the mock adds its delta to each aware time and writes the local wall time; we take the
    delta back off (calendar: less the anchor's UTC offset, as our profile shows the mock's time of day)."""
    out: dict[str, timedelta] = {}
    for service, files in fixtures.items():
        shift = SHIFTS.get(service)
        if shift is None:
            continue
        anchor = _anchor(shift, files)
        if anchor is None:
            continue
        target = loaded.astimezone(UTC) + shift.offset
        if shift.keep_time_of_day:
            target = target.replace(hour=anchor.hour, minute=anchor.minute, second=0, microsecond=0)
        delta = target - anchor
        if shift.shown_at_anchor_offset:
            delta -= anchor.utcoffset() or timedelta()
        out[service] = delta
    return out


def shift_arguments(arguments: Mapping[str, Any], by: timedelta | None) -> dict[str, Any]:
    """The arguments as the mock should get them: every date-time moved by ``by``, every date by its whole days."""
    if not by:
        return dict(arguments)
    return {k: _shift_value(v, by) for k, v in arguments.items()}


def _shift_value(value: Any, by: timedelta) -> Any:
    if isinstance(value, list):
        return [_shift_value(v, by) for v in value]
    if isinstance(value, dict):
        return {k: _shift_value(v, by) for k, v in value.items()}
    if not isinstance(value, str):
        return value
    moment = as_time(value)
    if moment is not None:
        return canonical(moment + by)
    day = as_day(value)
    if day is not None:
        return (day + timedelta(days=by.days)).isoformat()
    return value


@dataclass
class Reader:
    """One side's reading of its answers over one sequence (see the module's rules)."""

    known: set[str]
    """Strings both sides start from or were given: fixture values and the sequence's arguments (ours)."""
    task_times: list[datetime]
    """Times in the task's own time a shifted value may stand for: moved fixture times and argument times."""
    shifts: Mapping[str, timedelta] = field(default_factory=dict)
    """The mock's shift per service; empty for our side."""
    new_ids: dict[str, str] = field(default_factory=dict)
    aliases: Mapping[str, str] = field(default_factory=dict)
    """Argument texts as the mock was sent them (moved dates) → as the sequence wrote them: an answer that echoes
    one (``Invalid date format: ...``) reads as the sequence wrote it."""

    def read(self, value: Any, service: str, window: tuple[datetime, datetime], key: str = "") -> Any:
        """``value`` as compared: the rules applied to every string in it."""
        if isinstance(value, dict):
            return {k: self.read(v, service, window, str(k)) for k, v in value.items()}
        if isinstance(value, list):
            item_key = key[:-1] if key.endswith("_ids") else key
            items = [self.read(v, service, window, item_key) for v in value]
            return sorted(items, key=str) if (service, key) in UNORDERED else items
        if not isinstance(value, str):
            return value
        return self._string(value, service, window, key)

    def _string(self, text: str, service: str, window: tuple[datetime, datetime], key: str) -> str:
        if text in self.aliases:  # an argument echoed: as the sequence wrote it, an instant as its instant
            written = self.aliases[text]
            moment = as_time(written)
            return canonical(moment) if moment is not None else written
        for sent, written in self.aliases.items():
            if len(sent) >= 10 and sent in text:
                text = text.replace(sent, written)
        moment = as_time(text)
        if moment is not None:
            return self._time(text, moment, service, window)
        day = as_day(text)
        if day is not None:
            return self._day(text, day, service, window)
        if id_key(key) and text not in self.known:
            return self.new_ids.setdefault(text, f"<new-id:{len(self.new_ids) + 1}>")
        return text

    def _time(self, text: str, moment: datetime, service: str, window: tuple[datetime, datetime]) -> str:
        if text not in self.known and window[0] - NOW_TOLERANCE <= moment <= window[1] + NOW_TOLERANCE:
            return "<now>"  # first: no moved fixture time lies within minutes of its side's clock
        shift = self.shifts.get(service)
        if shift:
            back = moment - shift
            for known in self.task_times:
                if abs(back - known) <= SHIFT_TOLERANCE:
                    return canonical(known)
        return canonical(moment)

    def _day(self, text: str, day: date, service: str, window: tuple[datetime, datetime]) -> str:
        shift = self.shifts.get(service)
        if shift:
            back = day - timedelta(days=shift.days)
            if any(back == known.date() for known in self.task_times):
                return back.isoformat()
        if text not in self.known and window[0].date() <= day <= window[1].date():
            return "<today>"
        return text


def strings_of(value: Any) -> set[str]:
    """Every string in a JSON value."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return {s for v in value.values() for s in strings_of(v)}
    if isinstance(value, list):
        return {s for v in value for s in strings_of(v)}
    return set()


def times_of(value: Any) -> list[datetime]:
    """Every date-time (and date, at midnight) in a JSON value."""
    out = []
    for text in strings_of(value):
        moment = as_time(text)
        day = as_day(text) if moment is None else None
        if moment is not None:
            out.append(moment)
        elif day is not None:
            out.append(datetime(day.year, day.month, day.day, tzinfo=UTC))
    return out


def first_difference(mock: Any, ours: Any, path: str = "$") -> tuple[str, Any, Any] | None:
    """The first place two read values differ: (JSON path, the mock's value there, ours), or None when equal."""
    if isinstance(mock, dict) and isinstance(ours, dict):
        for key in sorted(set(mock) | set(ours), key=str):
            if key not in mock or key not in ours:
                return f"{path}.{key}", mock.get(key, "<absent>"), ours.get(key, "<absent>")
            found = first_difference(mock[key], ours[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(mock, list) and isinstance(ours, list):
        for index, (a, b) in enumerate(zip(mock, ours, strict=False)):
            found = first_difference(a, b, f"{path}[{index}]")
            if found:
                return found
        if len(mock) != len(ours):
            return f"{path}.length", len(mock), len(ours)
        return None
    if type(mock) is not type(ours) and not (_number(mock) and _number(ours)):
        return path, mock, ours
    return None if mock == ours else (path, mock, ours)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
