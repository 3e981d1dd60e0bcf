"""files: a Google-Drive-like shared drive — folders, text/markdown/CSV files with versions, sharing."""

from coworkenv.servers.files.models import TABLES, check_seed
from coworkenv.servers.files.sensitive import SENSITIVE
from coworkenv.servers.files.tools import TOOLS
from coworkenv.servers.kit import Service

SERVICE = Service(
    name="files",
    title="Shared drive",
    instructions=(
        "The team's shared drive, like Google Drive: folders of plain-text, markdown and CSV files. List a folder, "
        "search by name or content, read a file (or any earlier version of it), and read a CSV as rows with its "
        "header. Create files and folders, replace a file's content or append to it (each write is a new version, "
        "and passing the version you read as base_version keeps you from overwriting someone's newer change), "
        "move or rename files, move them to the trash, and share them with people as viewer or editor. Tools act as "
        "the workspace's primary user, the person you work for."
    ),
    tables=TABLES,
    check_seed=check_seed,
    tools=TOOLS,
    sensitive=SENSITIVE,
)
