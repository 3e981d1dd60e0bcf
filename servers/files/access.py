"""Helpers every files tool shares: the acting member, folders and paths, file access by role, versions, views."""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from pydantic import Field

from coworkenv.servers.files.models import RANK, FileSummary, FileView, FolderView
from coworkenv.servers.kit import ServiceError, ToolContext
from coworkenv.servers.kit.members import acting_user as acting_user

Row = dict[str, Any]
T = TypeVar("T")
MAX_DEPTH = 64

FileId = Annotated[
    str, Field(description="The file's id, from list_files or search_files. Example: 'file_payouts_feb'")
]
FolderRef = Annotated[
    str | None,
    Field(description="A folder's id (list_files shows them), or 'root' / null for the top. Example: 'fld_finance'"),
]
BaseVersion = Annotated[
    int | None,
    Field(
        ge=1,
        le=1_000_000_000,
        description="The version you read (read_file's 'version'). If the file has changed since, nothing is written "
        "and you are told to read it again. Omit to skip this check. Example: 3",
    ),
]
VERBS = {"viewer": "read", "editor": "change", "owner": "manage"}


# ---------------------------------------------------------------------------------------------- folders
def folder_id_of(ctx: ToolContext, ref: str | None, argument: str = "folder_id") -> str | None:
    """The id of the folder a reference names (None for the top), or a clear error for a folder that is missing."""
    if ref is None or ref.strip().lower() in ("", "root", "/"):
        return None
    key = ref.strip()
    if ctx.table("folders").get(key) is None:
        raise ServiceError(
            f"{argument}: there is no folder with id {ref[:200]!r}.",
            "Use list_files to see the folders and their ids, or create it first with create_folder.",
        )
    return key


def path_of(ctx: ToolContext, folder_id: str | None, name: str | None = None) -> str:
    """'/Finance/Payouts' for a folder, '/Finance/Payouts/feb.csv' with a file name."""
    parts: list[str] = [] if name is None else [name]
    at, depth = folder_id, 0
    while at is not None and depth < MAX_DEPTH:
        folder = ctx.table("folders").get(at)
        if folder is None:
            break
        parts.append(folder["name"])
        at, depth = folder["parent_id"], depth + 1
    return "/" + "/".join(reversed(parts))


def folder_view(ctx: ToolContext, folder: Row) -> FolderView:
    return FolderView.model_validate({**folder, "path": path_of(ctx, folder["id"])})


def name_taken(ctx: ToolContext, folder_id: str | None, name: str, but: str | None = None) -> Row | None:
    """The live file of this name (any case) in the folder, other than ``but``."""
    where = "folder_id IS ? AND trashed = 0 AND casefold(name) = ? AND id != ?"
    return next(iter(ctx.table("files").select(where, [folder_id, name.casefold(), but or ""], limit=1)), None)


# ---------------------------------------------------------------------------------------------- access
def role_of(file: Row, email: str) -> str | None:
    """The best role ``email`` (a workspace member) has on ``file``, or None."""
    if file["owner"] == email:
        return "owner"
    roles = [s["role"] for s in file["shares"] if s["email"] == email]
    if file["workspace_role"]:
        roles.append(file["workspace_role"])
    return max(roles, key=RANK.__getitem__) if roles else None


def file(ctx: ToolContext, file_id: str, user: Row, need: str = "viewer") -> tuple[Row, str]:
    """The file and the acting user's role on it; a business error when it is missing or the role too low."""
    row = ctx.fetch("files", file_id.strip(), "file", "Use list_files or search_files to find the file's id.")
    role = role_of(row, user["email"])
    if role is None:
        raise ServiceError(f"{user['email']} has no access to file {file_id}.", f"Ask its owner ({row['owner']}).")
    if RANK[role] < RANK[need]:
        raise ServiceError(
            f"{user['email']} is a {role} of file {file_id} and cannot {VERBS[need]} it.",
            f"Ask the owner ({row['owner']}) for {need} access, or save your own copy with create_file.",
        )
    if need != "viewer" and row["trashed"]:
        raise ServiceError(f"File {file_id} is in the trash.", "Create a new file with create_file instead.")
    return row, role


def view(ctx: ToolContext, row: Row, role: str) -> FileView:
    path = path_of(ctx, row["folder_id"], row["name"])
    return FileView.model_validate({**row, "path": path, "your_role": role, "current_version": row["version"]})


def summary(ctx: ToolContext, row: Row, role: str) -> FileSummary:
    snippet = " ".join(row["content"].split())
    keys = ("id", "name", "folder_id", "mime_type", "size", "version", "owner", "updated_at", "last_modified_by")
    return FileSummary.model_validate(
        {
            **{k: row[k] for k in keys},
            "trashed": row["trashed"],
            "path": path_of(ctx, row["folder_id"], row["name"]),
            "snippet": snippet if len(snippet) <= 160 else snippet[:157] + "...",
            "your_role": role,
        }
    )


def check_base(row: Row, base_version: int | None) -> None:
    if base_version is not None and base_version != row["version"]:
        raise ServiceError(
            f"File {row['id']} is at version {row['version']}, not {base_version}: it was changed after you read it, "
            "and nothing was written.",
            f"Read it again with read_file, then make your change with base_version {row['version']}.",
        )


# ---------------------------------------------------------------------------------------------- versions
def versions(ctx: ToolContext, row: Row) -> list[Row]:
    """Every version of a file, newest first. A seeded file whose current version has no stored row shows that
    version from the file itself (its history before it starts there)."""
    rows = ctx.table("versions").select("file_id = ?", [row["id"]], order_by="number DESC, id")
    if not rows or rows[0]["number"] != row["version"]:
        rows.insert(0, current(row))
    return rows


def current(row: Row) -> Row:
    return {
        "file_id": row["id"],
        "number": row["version"],
        "content": row["content"],
        "author": row["last_modified_by"],
        "created_at": row["updated_at"],
        "summary": "",
    }


def version_of(ctx: ToolContext, row: Row, number: int) -> Row:
    history = versions(ctx, row)
    found = next((v for v in history if v["number"] == number), None)
    if found is None:
        kept = ", ".join(str(v["number"]) for v in history)
        raise ServiceError(f"File {row['id']} has no version {number}.", f"Its history holds versions: {kept}.")
    return found


def save(ctx: ToolContext, row: Row, user: Row, content: str, what: str) -> Row:
    """Write a new version of the file (its full content) and return the updated file."""
    store = ctx.table("versions")
    if not store.count("file_id = ? AND number = ?", [row["id"], row["version"]]):
        store.insert({"id": ctx.new_id("versions"), **current(row)})  # keep the seeded version in the history
    number, now = row["version"] + 1, ctx.now_iso()
    store.insert(
        {
            "id": ctx.new_id("versions"),
            "file_id": row["id"],
            "number": number,
            "content": content,
            "author": user["email"],
            "created_at": now,
            "summary": what,
        }
    )
    changes = {"content": content, "version": number, "updated_at": now, "last_modified_by": user["email"]}
    return ctx.table("files").update(row["id"], changes)
