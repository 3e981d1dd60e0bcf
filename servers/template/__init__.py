"""notes: the template service (see ``servers/README.md``) — one table of notes, five tools. Copy this folder to
start a service of your own. It is not registered by default: ``register_service(SERVICE)``, or an entry point in
the ``coworkenv.services`` group, makes it one that ``coworkenv serve``, tasks and the harness know."""

from pathlib import Path

from coworkenv.servers.kit import Service
from coworkenv.servers.template.models import TABLES
from coworkenv.servers.template.sensitive import SENSITIVE
from coworkenv.servers.template.tools import TOOLS

EXAMPLE_SEED = Path(__file__).with_name("example.json")
"""A small workspace for this service (``{table: [records]}``), the one its tests and fuzzing start from."""

SERVICE = Service(
    name="notes",
    title="Notes",
    instructions=(
        "Team notes. Each note has a title, a body and an author (an email address); 'me' is the current "
        "user. List or search notes before reading one; deleting a note cannot be undone."
    ),
    tables=TABLES,
    tools=TOOLS,
    sensitive=SENSITIVE,
)
