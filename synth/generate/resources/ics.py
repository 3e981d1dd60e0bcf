"""An .ics file (iCalendar, RFC 5545) read into :class:`~coworkenv.synth.generate.resources.model.Event` records:
each VEVENT's SUMMARY, DTSTART and DTEND (or DURATION; a date alone is an all-day event), LOCATION, DESCRIPTION,
ORGANIZER and ATTENDEEs (with their CN and PARTSTAT). Folded lines are unfolded and text escapes undone; times
with a TZID are read in that zone and kept in UTC."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from coworkenv.servers.email.models import normalise_address
from coworkenv.servers.kit import format_time
from coworkenv.synth.generate.resources.mail import BadFile
from coworkenv.synth.generate.resources.model import Attendee, Event

MAX_EVENTS = 200
MAX_DAYS = 14
"""The longest event the calendar service holds."""
_DURATION = re.compile(r"^P(?:(\d{1,4})W)?(?:(\d{1,4})D)?(?:T(?:(\d{1,4})H)?(?:(\d{1,4})M)?(?:(\d{1,4})S)?)?$")
_RESPONSES = {"ACCEPTED": "accepted", "DECLINED": "declined", "TENTATIVE": "tentative"}


@dataclass(frozen=True)
class _Line:
    name: str
    params: dict[str, str]
    value: str


def parse_ics(text: str, path: str) -> list[Event]:
    """The events of an iCalendar text (their ids left empty: the loader gives them)."""
    lines = _lines(text)
    if not lines or lines[0].name != "BEGIN" or lines[0].value.upper() != "VCALENDAR":
        raise BadFile("does not start with BEGIN:VCALENDAR")
    blocks: list[list[_Line]] = []
    current: list[_Line] | None = None
    for line in lines:
        if line.name == "BEGIN" and line.value.upper() == "VEVENT":
            if current is not None:
                raise BadFile("has a VEVENT inside another")
            current = []
        elif line.name == "END" and line.value.upper() == "VEVENT":
            if current is None:
                raise BadFile("has END:VEVENT without its BEGIN")
            blocks.append(current)
            current = None
        elif current is not None:
            current.append(line)
    if current is not None:
        raise BadFile("has a VEVENT that never ends (no END:VEVENT)")
    if not blocks:
        raise BadFile("holds no VEVENT")
    if len(blocks) > MAX_EVENTS:
        raise BadFile(f"holds {len(blocks)} events, more than {MAX_EVENTS}")
    return [_event(block, path, n + 1) for n, block in enumerate(blocks)]


def _lines(text: str) -> list[_Line]:
    unfolded: list[str] = []
    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if raw[:1] in (" ", "\t") and unfolded:
            unfolded[-1] += raw[1:]
        elif raw.strip():
            unfolded.append(raw)
    out = []
    for n, line in enumerate(unfolded, start=1):
        head, sep, value = line.partition(":")
        if not sep:
            raise BadFile(f"line {n} has no ':' ({line[:40]!r})")
        name, *params = head.split(";")
        pairs = dict(p.partition("=")[::2] for p in params)
        out.append(_Line(name.strip().upper(), {k.upper(): v.strip('"') for k, v in pairs.items()}, value))
    return out


def _event(block: list[_Line], path: str, n: int) -> Event:
    props = {line.name: line for line in block}
    summary = _unescape(props["SUMMARY"].value).strip() if "SUMMARY" in props else ""
    if not summary:
        raise BadFile(f"event {n} has no SUMMARY")
    if "DTSTART" not in props:
        raise BadFile(f"event {n} ({summary[:40]}) has no DTSTART")
    start, all_day = _time(props["DTSTART"], n)
    if "DTEND" in props:
        end, _ = _time(props["DTEND"], n)
    elif "DURATION" in props:
        end = start + _duration(props["DURATION"].value, n)
    else:
        end = start + (timedelta(days=1) if all_day else timedelta(hours=1))
    if end <= start:
        raise BadFile(f"event {n} ({summary[:40]}) ends before it starts")
    if end - start > timedelta(days=MAX_DAYS):
        raise BadFile(f"event {n} ({summary[:40]}) lasts more than {MAX_DAYS} days")
    organizer, organizer_name = _person(props.get("ORGANIZER"), n)
    attendees: list[Attendee] = []
    for line in block:
        if line.name == "ATTENDEE":
            address, name = _person(line, n)
            if address and address not in [a.email for a in attendees]:
                response = _RESPONSES.get(line.params.get("PARTSTAT", "").upper(), "needsAction")
                attendees.append(Attendee(address, name, response))
    return Event(
        id="",
        path=path,
        summary=summary,
        start=format_time(start),
        end=format_time(end),
        location=_unescape(props["LOCATION"].value).strip() if "LOCATION" in props else "",
        description=_unescape(props["DESCRIPTION"].value).strip() if "DESCRIPTION" in props else "",
        organizer=organizer,
        organizer_name=organizer_name,
        attendees=tuple(attendees),
    )


def _time(line: _Line, n: int) -> tuple[datetime, bool]:
    value = line.value.strip()
    try:
        if line.params.get("VALUE", "").upper() == "DATE" or re.fullmatch(r"\d{8}", value):
            d = date(int(value[:4]), int(value[4:6]), int(value[6:8]))
            return datetime(d.year, d.month, d.day, tzinfo=UTC), True
        moment = datetime.strptime(value.rstrip("Z"), "%Y%m%dT%H%M%S")
    except ValueError:
        raise BadFile(f"event {n}: {line.name} {value[:40]!r} is not a date or time") from None
    if value.endswith("Z"):
        return moment.replace(tzinfo=UTC), False
    zone = line.params.get("TZID")
    if zone:
        try:
            return moment.replace(tzinfo=ZoneInfo(zone)).astimezone(UTC), False
        except (ZoneInfoNotFoundError, ValueError):
            raise BadFile(f"event {n}: {line.name} names the unknown time zone {zone[:40]!r}") from None
    return moment.replace(tzinfo=UTC), False


def _duration(value: str, n: int) -> timedelta:
    m = _DURATION.match(value.strip())
    if not m or not any(m.groups()):
        raise BadFile(f"event {n}: DURATION {value[:40]!r} is not a duration like PT1H30M")
    w, d, h, mi, s = (int(x or 0) for x in m.groups())
    return timedelta(weeks=w, days=d, hours=h, minutes=mi, seconds=s)


def _person(line: _Line | None, n: int) -> tuple[str, str]:
    if line is None:
        return "", ""
    value = line.value.strip()
    address = value[7:] if value.lower().startswith("mailto:") else value
    try:
        return normalise_address(address), " ".join(line.params.get("CN", "").split())
    except ValueError:
        raise BadFile(f"event {n}: {line.name} {value[:60]!r} is not an email address") from None


def _unescape(value: str) -> str:
    return re.sub(r"\\([nN,;\\])", lambda m: "\n" if m.group(1) in "nN" else m.group(1), value)
