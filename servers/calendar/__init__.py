"""calendar: a Google-Calendar-like workspace — calendars, events with attendees and responses, recurrence,
free/busy, rooms, and a free-slot finder."""

from coworkenv.servers.calendar.models import TABLES, check_seed
from coworkenv.servers.calendar.sensitive import SENSITIVE
from coworkenv.servers.calendar.tools import TOOLS
from coworkenv.servers.kit import Service

SERVICE = Service(
    name="calendar",
    title="Calendar",
    instructions=(
        "The workspace's calendars, like Google Calendar. List what is on a calendar in a time range (a recurring "
        "meeting appears once per occurrence), search events, and read one for its attendees and their responses. "
        "See when people and rooms are busy with query_free_busy, or let find_free_slot pick a time when everyone "
        "is free inside their working hours, with a room if needed. Create events and invite people, change or "
        "cancel the events you organize (one occurrence or the whole series), and answer your invitations with "
        "respond_to_event. Times are ISO 8601 in UTC (2026-03-04T14:00:00Z). Tools act as the workspace's primary "
        "user, the person you work for."
    ),
    tables=TABLES,
    check_seed=check_seed,
    tools=TOOLS,
    sensitive=SENSITIVE,
)
