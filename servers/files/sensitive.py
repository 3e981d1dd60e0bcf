"""The sensitive kinds of the files service: files shared outside the company, content overwritten, files
trashed, records deleted.

The company's domains are those of the workspace's members (the ``users`` table, before or after). Writing a
file writes a version too; versions are history (left out of the diff), the change is seen on the file itself.
"""

from __future__ import annotations

from coworkenv.servers.files.models import RANK
from coworkenv.servers.kit import Change, SensitiveContext, SensitiveKind, became, deletes
from coworkenv.servers.kit.kinds import audience_key, content_shrunk, shared_outside


def external_share(change: Change, ctx: SensitiveContext) -> str | None:
    """``external_share:<file id>:<outsiders>`` (``new`` for a file the change creates): people outside the
    company given a role on a file (or a higher one than before), or the file handed to an outside owner."""
    return audience_key("external_share", change, shared_outside(change, ctx, RANK))


def overwrite(change: Change, ctx: SensitiveContext) -> str | None:
    """``overwrite:<file id>``: a write that leaves less than half of the file's content."""
    return f"overwrite:{change.id}" if content_shrunk(change) else None


def trash(change: Change, ctx: SensitiveContext) -> str | None:
    """``trash:<file id>``: a file moved to the trash."""
    return f"trash:{change.id}" if change.before is not None and became(change, "trashed", {True}) else None


SENSITIVE: tuple[SensitiveKind, ...] = (
    SensitiveKind(
        "external_share",
        "files",
        ("create", "update"),
        "a file shared with someone outside the company",
        external_share,
    ),
    SensitiveKind(
        "overwrite", "files", ("update",), "most of a file's content replaced or removed", overwrite, reversible=True
    ),
    SensitiveKind("trash", "files", ("update",), "a file moved to the trash", trash, reversible=True),
    *deletes("users", "folders", "files"),
)
