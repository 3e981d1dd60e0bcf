"""Tools of the docs service. Names and vocabulary follow the widely used Google Docs / Drive APIs.

The tools live in three modules (reading, writing, collaborating); this one gathers them in the order the
agent sees them.
"""

from __future__ import annotations

from coworkenv.servers.docs.tools_collab import add_comment, resolve_comment, share_document, unshare_document
from coworkenv.servers.docs.tools_read import (
    get_document,
    get_revision,
    list_comments,
    list_folders,
    list_revisions,
    search_documents,
)
from coworkenv.servers.docs.tools_write import create_document, edit_document, update_document

TOOLS = (
    search_documents,
    get_document,
    create_document,
    update_document,
    edit_document,
    list_revisions,
    get_revision,
    add_comment,
    list_comments,
    resolve_comment,
    share_document,
    unshare_document,
    list_folders,
)
