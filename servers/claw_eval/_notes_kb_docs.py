"""What Claw-Eval's notes and kb share on our docs service: each keeps its records as documents of a folder of
its own (owned by a member of its own), so the two live side by side in one docs workspace and each tool sees
only its own."""

from __future__ import annotations

from typing import Any

from coworkenv.servers.claw_eval._fieldmap import checked
from coworkenv.servers.docs.models import Folder, User
from coworkenv.servers.kit import ToolContext
from coworkenv.servers.kit.members import named_member

Row = dict[str, Any]
TITLE_MAX = 300
"""Our documents' longest title."""


def owner_id(kind: str) -> str:
    return f"usr_claw_{kind}"


def folder_id(kind: str) -> str:
    return f"fld_claw_{kind}"


def owner_email(kind: str) -> str:
    return f"{kind}@claw-eval.invalid"


def home(kind: str, title: str) -> dict[str, list[Row]]:
    """The member owning ``kind``'s documents and the folder holding them, as seed tables of docs."""
    user = {"id": owner_id(kind), "email": owner_email(kind), "name": title, "is_primary": False}
    folder = {"id": folder_id(kind), "name": title}
    return {"users": [checked(User, user, kind)], "folders": [checked(Folder, folder, kind)]}


def title_of(value: Any) -> str:
    """A fixture's title as our document title (one is required, and at most 300 characters): the fixture's own
    stays in custom_fields when this differs."""
    text = value.strip() if isinstance(value, str) else ""
    return text[:TITLE_MAX] if text else "(untitled)"


def documents(ctx: ToolContext, kind: str) -> list[Row]:
    """``kind``'s documents in id order (the fixtures' order)."""
    return ctx.table("documents").select("folder_id = ?", [folder_id(kind)])


def document(ctx: ToolContext, kind: str, record_id: str) -> Row | None:
    row = ctx.table("documents").get(record_id)
    return row if row is not None and row["folder_id"] == folder_id(kind) else None


def editor(ctx: ToolContext, kind: str) -> Row:
    """Who an edit is written by: the member the call acts as, the workspace's primary user, or else the owner."""
    named = named_member(ctx)
    if named is not None:
        return named
    rows = ctx.table("users").select("is_primary = 1", limit=1)
    return rows[0] if rows else {"email": owner_email(kind)}
