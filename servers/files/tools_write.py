"""Writing tools of the files service: create files and folders, replace or append content, move, trash.

Every change of content is a new version (number + 1) holding the full resulting content, with its author and
time, so earlier versions stay readable with read_file(version=...). A CSV file must stay a table: a write or
append that would leave it malformed is refused and nothing changes.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from coworkenv.servers.files import table
from coworkenv.servers.files.access import (
    BaseVersion,
    FileId,
    FolderRef,
    acting_user,
    check_base,
    file,
    folder_id_of,
    folder_view,
    name_taken,
    path_of,
    save,
    view,
)
from coworkenv.servers.files.models import NAME_PATTERN, FileView, FolderView, type_of
from coworkenv.servers.kit import ServiceError, ToolContext, tool

FileName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=255,
        pattern=NAME_PATTERN,
        description="The name with its extension (.txt, .md or .csv); no '/'. Example: 'payouts-feb.csv'",
    ),
]
Content = Annotated[str, Field(description="The full text. Example: 'vendor,amount\\nStellar Print,1200\\n'")]


def _check_name(ctx: ToolContext, folder_id: str | None, name: str, but: str | None = None) -> None:
    if type_of(name) is None:
        raise ServiceError(f"{name!r} has no supported extension.", "Name it .txt, .md or .csv.")
    clash = name_taken(ctx, folder_id, name, but)
    if clash is not None:
        raise ServiceError(
            f"{path_of(ctx, folder_id, clash['name'])} already exists ({clash['id']}).",
            "Write to that file with write_file or append_to_file, or choose another name.",
        )


def _check_csv(name: str, content: str) -> None:
    if type_of(name) == "text/csv" and content.strip():
        table.parse(content)


@tool()
def create_file(
    ctx: ToolContext,
    name: FileName,
    content: Content = "",
    folder_id: FolderRef = None,
) -> FileView:
    """Create a new file owned by you, at version 1, in a folder (the top when omitted). Every workspace member
    can edit it; give others access with share_file. A name already used in the folder is refused."""
    user = acting_user(ctx)
    parent = folder_id_of(ctx, folder_id)
    _check_name(ctx, parent, name)
    _check_csv(name, content)
    now = ctx.now_iso()
    file_id = ctx.new_id("files")
    row = ctx.table("files").insert(
        {
            "id": file_id,
            "name": name,
            "folder_id": parent,
            "content": content,
            "owner": user["email"],
            "created_at": now,
            "updated_at": now,
            "last_modified_by": user["email"],
        }
    )
    ctx.table("versions").insert(
        {
            "id": ctx.new_id("versions"),
            "file_id": file_id,
            "number": 1,
            "content": content,
            "author": user["email"],
            "created_at": now,
            "summary": "Created the file",
        }
    )
    return view(ctx, row, "owner")


@tool(destructive=True, idempotent=True)
def write_file(ctx: ToolContext, file_id: FileId, content: Content, base_version: BaseVersion = None) -> FileView:
    """Replace a file's whole content (needs editor access); the old content stays readable as the previous
    version. To add at the end use append_to_file instead. Pass base_version (the version you read) so you never
    overwrite someone else's newer change."""
    user = acting_user(ctx)
    row, role = file(ctx, file_id, user, need="editor")
    check_base(row, base_version)
    if content == row["content"]:
        return view(ctx, row, role)
    _check_csv(row["name"], content)
    return view(ctx, save(ctx, row, user, content, "Replaced the content"), role)


@tool()
def append_to_file(
    ctx: ToolContext,
    file_id: FileId,
    text: Annotated[
        str, Field(min_length=1, description="What to add; for a CSV, whole rows. Example: 'Globex,480\\n'")
    ],
    base_version: BaseVersion = None,
) -> FileView:
    """Add text at the end of a file (needs editor access), on a new line when the file does not end with one,
    as a new version. For a CSV, append whole rows with as many fields as the header."""
    user = acting_user(ctx)
    row, role = file(ctx, file_id, user, need="editor")
    check_base(row, base_version)
    old = row["content"]
    content = old + ("\n" if old and not old.endswith("\n") else "") + text
    _check_csv(row["name"], content)
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    return view(ctx, save(ctx, row, user, content, f"Appended {lines} line{'s' if lines != 1 else ''}"), role)


@tool(idempotent=True)
def move_file(
    ctx: ToolContext,
    file_id: FileId,
    folder_id: FolderRef = None,
    name: Annotated[
        str | None,
        Field(
            min_length=1,
            max_length=255,
            pattern=NAME_PATTERN,
            description="A new name, to rename it too (keep the extension). Example: 'payouts-feb-final.csv'",
        ),
    ] = None,
) -> FileView:
    """Move a file into a folder (the top when folder_id is omitted or 'root'), and rename it if name is given
    (needs editor access). The folder must exist: create it first with create_folder. Content and versions stay."""
    user = acting_user(ctx)
    row, role = file(ctx, file_id, user, need="editor")
    parent = folder_id_of(ctx, folder_id)
    new_name = row["name"] if name is None else name
    if type_of(new_name) != row["mime_type"]:
        raise ServiceError(f"{new_name!r} changes the file's type ({row['mime_type']}).", "Keep the extension.")
    if (parent, new_name) == (row["folder_id"], row["name"]):
        return view(ctx, row, role)
    _check_name(ctx, parent, new_name, but=row["id"])
    return view(ctx, ctx.table("files").update(row["id"], {"folder_id": parent, "name": new_name}), role)


@tool()
def create_folder(
    ctx: ToolContext,
    name: Annotated[
        str, Field(min_length=1, max_length=255, pattern=NAME_PATTERN, description="No '/'. Example: 'Payouts'")
    ],
    parent_id: FolderRef = None,
) -> FolderView:
    """Create a folder (at the top, or inside parent_id). A folder of the same name already there is refused."""
    acting_user(ctx)
    parent = folder_id_of(ctx, parent_id, "parent_id")
    same = ctx.table("folders").select("parent_id IS ? AND casefold(name) = ?", [parent, name.casefold()], limit=1)
    if same:
        raise ServiceError(
            f"{path_of(ctx, same[0]['id'])} already exists ({same[0]['id']}).", "Use that folder's id instead."
        )
    row = ctx.table("folders").insert(
        {"id": ctx.new_id("folders"), "name": name, "parent_id": parent, "created_at": ctx.now_iso()}
    )
    return folder_view(ctx, row)


@tool(destructive=True, idempotent=True)
def delete_file(ctx: ToolContext, file_id: FileId) -> FileView:
    """Move a file to the trash (needs editor access): it leaves folder listings and searches, but can still be
    read by id. Deleting a file already in the trash changes nothing."""
    user = acting_user(ctx)
    row, role = file(ctx, file_id, user)
    if row["trashed"]:
        return view(ctx, row, role)
    row, role = file(ctx, file_id, user, need="editor")
    return view(ctx, ctx.table("files").update(row["id"], {"trashed": True, "updated_at": ctx.now_iso()}), role)
