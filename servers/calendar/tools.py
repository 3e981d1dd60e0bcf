"""Tools of the calendar service. Names and vocabulary follow the widely used Google Calendar API (events with
attendees and responseStatus, free/busy queries, recurrence, rooms as resources).

The tools live in three modules (reading, scheduling, writing); this one gathers them in the order the agent
sees them.
"""

from __future__ import annotations

from coworkenv.servers.calendar.tools_read import (
    get_event,
    list_calendars,
    list_events,
    list_rooms,
    list_users,
    query_free_busy,
    search_events,
)
from coworkenv.servers.calendar.tools_schedule import find_free_slot
from coworkenv.servers.calendar.tools_write import cancel_event, create_event, respond_to_event, update_event

TOOLS = (
    list_events,
    search_events,
    get_event,
    query_free_busy,
    find_free_slot,
    create_event,
    update_event,
    cancel_event,
    respond_to_event,
    list_calendars,
    list_rooms,
    list_users,
)
