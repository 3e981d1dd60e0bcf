"""tickets: a Zendesk-like helpdesk — organizations, users, tickets with a status life cycle, comments."""

from coworkenv.servers.kit import Service
from coworkenv.servers.tickets.models import TABLES
from coworkenv.servers.tickets.sensitive import SENSITIVE
from coworkenv.servers.tickets.tools import TOOLS

SERVICE = Service(
    name="tickets",
    title="Helpdesk tickets",
    instructions=(
        "A customer-support helpdesk. Tickets belong to a requester and an organization and move through "
        "new → open → pending/hold → solved → closed. Search with filters, read a ticket for its comments, "
        "reply publicly or leave internal notes, assign to agents, escalate when needed."
    ),
    tables=TABLES,
    tools=TOOLS,
    sensitive=SENSITIVE,
)
