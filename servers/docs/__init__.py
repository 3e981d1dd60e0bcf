"""docs: a Google-Docs/Drive-like shared workspace — documents with revision history, comments, sharing."""

from coworkenv.servers.docs.models import TABLES, check_seed
from coworkenv.servers.docs.sensitive import SENSITIVE
from coworkenv.servers.docs.tools import TOOLS
from coworkenv.servers.kit import Service

SERVICE = Service(
    name="docs",
    title="Documents",
    instructions=(
        "A shared workspace of documents (policies, procedures, plans, meeting notes, reports), like Google Docs. "
        "Search by text, owner, folder or edit time; read a document for its full content and current revision; "
        "create documents; edit them exactly (replace a passage, append, insert under a heading) or replace the "
        "whole content, passing the revision you read as base_revision so no one else's edit is overwritten. "
        "Every edit is kept in the revision history. Comment on passages, resolve comments, and share documents "
        "with people as viewer, commenter or editor. Tools act as the workspace's primary user, the "
        "person you work for."
    ),
    tables=TABLES,
    check_seed=check_seed,
    tools=TOOLS,
    sensitive=SENSITIVE,
)
