"""The sensitive kinds of the docs service: documents shared outside the company, content wiped, records deleted.

The company's domains are those of the workspace's members (the ``users`` table, before or after). Editing a
document writes a revision too; revisions are history (left out of the diff), the edit is seen on the
document itself.
"""

from __future__ import annotations

from coworkenv.servers.docs.models import RANK
from coworkenv.servers.kit import Change, SensitiveContext, SensitiveKind, deletes
from coworkenv.servers.kit.kinds import audience_key, content_shrunk, shared_outside


def external_share(change: Change, ctx: SensitiveContext) -> str | None:
    """``external_share:<document id>:<outsiders>`` (``new`` for a document the change creates): people
    outside the company given a role on a document (or a higher one than before), or the document handed to an
    outside owner."""
    return audience_key("external_share", change, shared_outside(change, ctx, RANK))


def wipe(change: Change, ctx: SensitiveContext) -> str | None:
    """``wipe:<document id>``: an edit that leaves less than half of the document's content."""
    return f"wipe:{change.id}" if content_shrunk(change) else None


SENSITIVE: tuple[SensitiveKind, ...] = (
    SensitiveKind(
        "external_share",
        "documents",
        ("create", "update"),
        "a document shared with someone outside the company",
        external_share,
    ),
    SensitiveKind("wipe", "documents", ("update",), "most of a document's content removed", wipe, reversible=True),
    *deletes("users", "folders", "documents", "comments"),
)
