"""The sensitive kinds of the docs service: documents shared outside the company, content wiped, records deleted.

The company's domains are those of the workspace's members (the ``users`` table, before or after). Editing a
document writes a revision too; revisions are history (left out of the diff), the edit is seen on the
document itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from coworkenv.servers.docs.models import RANK
from coworkenv.servers.kit import Change, SensitiveContext, SensitiveKind, company_domains, deletes, outside


def _roles(shares: Sequence[Mapping[str, Any]] | None) -> dict[str, int]:
    return {str(s["email"]).casefold(): RANK.get(str(s["role"]), 0) for s in shares or ()}


def external_share(change: Change, ctx: SensitiveContext) -> str | None:
    """``external_share:<document id>``: someone outside the company given a role on a document (or a higher
    one than before), or the document handed to an outside owner."""
    before, after = change.before or {}, change.after or {}
    old, new = _roles(before.get("shares")), _roles(after.get("shares"))
    widened = [email for email, rank in new.items() if rank > old.get(email, 0)]
    if after.get("owner") != before.get("owner"):
        widened.append(str(after.get("owner") or ""))
    found = outside(widened, company_domains(ctx, "users", "email"))
    return f"external_share:{change.id}" if found else None


def wipe(change: Change, ctx: SensitiveContext) -> str | None:
    """``wipe:<document id>``: an edit that leaves less than half of the document's content."""
    old = str((change.before or {}).get("content") or "")
    new = str((change.after or {}).get("content") or "")
    return f"wipe:{change.id}" if old and len(new) * 2 < len(old) else None


SENSITIVE: tuple[SensitiveKind, ...] = (
    SensitiveKind(
        "external_share",
        "documents",
        ("create", "update"),
        "a document shared with someone outside the company",
        external_share,
    ),
    SensitiveKind("wipe", "documents", ("update",), "most of a document's content removed", wipe),
    *deletes("users", "folders", "documents", "comments"),
)
