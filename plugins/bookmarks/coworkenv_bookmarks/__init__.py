"""bookmarks: a coworkenv service from another package — the team's saved links, in folders. The shape of the
template (``servers/template``) with a record update, a reference between tables and a volatile field."""

from pathlib import Path

from coworkenv.servers.kit import Service
from coworkenv_bookmarks.models import TABLES
from coworkenv_bookmarks.sensitive import SENSITIVE
from coworkenv_bookmarks.tools import TOOLS

EXAMPLE_SEED = Path(__file__).with_name("example.json")
"""A small workspace (``{table: [records]}``), shipped as package data; the one the tests and fuzzing start from."""

SERVICE = Service(
    name="bookmarks",
    title="Bookmarks",
    instructions=(
        "The team's saved links. Each bookmark has a URL, a title, tags, an optional folder and a status "
        "(ok, broken, archived). List or search bookmarks before changing one; deleting cannot be undone, "
        "archiving can."
    ),
    tables=TABLES,
    tools=TOOLS,
    sensitive=SENSITIVE,
)
