"""The calendar reads only the events that can fall in the window a tool checks, and never misses one."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from coworkenv.servers.calendar import SERVICE, recurrence
from coworkenv.servers.calendar.common import live_events
from coworkenv.servers.kit import ServiceState
from coworkenv.servers.kit.context import ToolContext
from tests.conftest import NOW

EXAMPLE = Path(__file__).parents[3] / "servers/examples/calendar.json"


@settings(max_examples=60, deadline=None)
@given(
    start=st.datetimes(min_value=datetime(2026, 1, 1), max_value=datetime(2026, 12, 31), timezones=st.just(UTC)),
    minutes=st.integers(min_value=1, max_value=60 * 24 * 70),
)
def test_the_events_read_for_a_time_window_hold_every_event_with_an_occurrence_in_it(
    start: datetime, minutes: int
) -> None:
    state = ServiceState.open(SERVICE, json.loads(EXAMPLE.read_text()), now=NOW)
    try:
        end = start + timedelta(minutes=minutes)
        everything = state.tables["events"].select("status != 'cancelled'", order_by="start, id")
        meant = [e["id"] for e in everything if recurrence.occurrences(e, start, end)]
        read = [e["id"] for e in live_events(ToolContext(state, "agent"), start, end)]  # type: ignore[arg-type]
        assert set(meant) <= set(read) and read == [i for i in (e["id"] for e in everything) if i in set(read)]
    finally:
        state.close()
