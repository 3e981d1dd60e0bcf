"""The simulated clock of an environment: its own "now", set by the task, so time windows reproduce."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from coworkenv.servers.kit.errors import EnvironmentConfigError

DEFAULT_NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def parse_time(value: str | datetime) -> datetime:
    """Parse an ISO 8601 time; naive times are taken as UTC. Raises a clear error otherwise."""
    if isinstance(value, datetime):
        dt = value
    else:
        text = value.strip()
        if text.endswith("Z"):
            text = text[:-1] + "+00:00"
        try:
            dt = datetime.fromisoformat(text)
        except ValueError as exc:
            raise EnvironmentConfigError(
                f"{value!r} is not an ISO 8601 time; write it like 2026-03-02T09:00:00Z"
            ) from exc
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)


def format_time(dt: datetime) -> str:
    """Canonical text form of a time: UTC, seconds precision, trailing Z (sorts as text)."""
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class SimClock:
    """A clock that only moves when told to. Every record a tool creates is stamped with it."""

    __slots__ = ("_iso", "_now")

    def __init__(self, now: str | datetime = DEFAULT_NOW) -> None:
        self._now = parse_time(now)
        self._iso = format_time(self._now)

    def now(self) -> datetime:
        return self._now

    def iso(self) -> str:
        return self._iso

    def set(self, now: str | datetime) -> None:
        self._now = parse_time(now)
        self._iso = format_time(self._now)

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise EnvironmentConfigError("the simulated clock cannot go backwards")
        self._now = self._now + timedelta(seconds=seconds)
        self._iso = format_time(self._now)
