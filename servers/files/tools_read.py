"""Reading tools of the files service: list a folder, search, read a file (any version), read a CSV as rows,
and the version history."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from coworkenv.servers.files import table
from coworkenv.servers.files.access import (
    FileId,
    FolderRef,
    acting_user,
    file,
    folder_id_of,
    folder_view,
    role_of,
    summary,
    version_of,
    versions,
    view,
)
from coworkenv.servers.files.models import CsvRows, FilePage, FileView, MimeType, VersionPage, VersionSummary
from coworkenv.servers.kit import PageSize, PageToken, ServiceError, Timestamp, ToolContext, tool
from coworkenv.servers.kit.members import visible_to

Version = Annotated[
    int | None,
    Field(
        ge=1,
        le=1_000_000_000,
        description="An earlier version to read (list_versions); omit for the current one. Example: 2",
    ),
]


@tool(read_only=True)
def list_files(
    ctx: ToolContext,
    folder_id: FolderRef = None,
    include_trashed: Annotated[bool, Field(description="Also list files in the trash. Example: false")] = False,
    page_size: PageSize = 50,
    page_token: PageToken = None,
) -> FilePage:
    """List one folder of the drive (the top when folder_id is omitted): the folders inside it, and the files
    you can open there by name, each with its path, type, size, version and a snippet."""
    user = acting_user(ctx)
    parent = folder_id_of(ctx, folder_id)
    where = visible_to(user["email"], "files.shares").raw("folder_id IS ?", parent)
    if not include_trashed:
        where.raw("trashed = 0")
    rows, total, nxt = ctx.paginate("files", where.sql, where.params, "casefold(name), id", page_size, page_token)
    folders = ctx.table("folders").select("parent_id IS ?", [parent], order_by="casefold(name), id")
    return FilePage(
        items=[summary(ctx, r, role_of(r, user["email"]) or "viewer") for r in rows],
        total=total,
        next_page_token=nxt,
        folders=[folder_view(ctx, f) for f in folders],
    )


@tool(read_only=True)
def search_files(
    ctx: ToolContext,
    query: Annotated[
        str | None, Field(description="Text to find in the name or content (literal, any case). Example: 'payout'")
    ] = None,
    mime_type: Annotated[MimeType | None, Field(description="Only files of this type. Example: 'text/csv'")] = None,
    folder_id: Annotated[
        str | None, Field(description="Only files directly in this folder. Example: 'fld_finance'")
    ] = None,
    owner: Annotated[
        str | None, Field(description="Only files owned by this email; 'me' for the acting user. Example: 'me'")
    ] = None,
    modified_after: Annotated[
        Timestamp | None, Field(description="Last written at or after this time. Example: '2026-02-01T00:00:00Z'")
    ] = None,
    modified_before: Annotated[
        Timestamp | None, Field(description="Last written before this time. Example: '2026-03-01T00:00:00Z'")
    ] = None,
    include_trashed: Annotated[bool, Field(description="Also find files in the trash. Example: false")] = False,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> FilePage:
    """Find files you can open across the drive, most recently written first. All filters combine (AND); omit one
    to not filter on it. Returns summaries with a snippet; read the content with read_file or read_csv."""
    user = acting_user(ctx)
    where = visible_to(user["email"], "files.shares").text(["name", "content"], query)
    if owner:
        where.raw("owner = ?", user["email"] if owner.strip().lower() == "me" else owner.strip().lower())
    where.eq("mime_type", mime_type).eq("folder_id", folder_id)
    where.gte("updated_at", modified_after).lt("updated_at", modified_before)
    if not include_trashed:
        where.raw("trashed = 0")
    rows, total, nxt = ctx.paginate("files", where.sql, where.params, "updated_at DESC, id", page_size, page_token)
    items = [summary(ctx, r, role_of(r, user["email"]) or "viewer") for r in rows]
    return FilePage(items=items, total=total, next_page_token=nxt)


@tool(read_only=True)
def read_file(ctx: ToolContext, file_id: FileId, version: Version = None) -> FileView:
    """Read a file: its name, path, full content, owner, sharing and version number (pass that number as
    base_version when you write, so a change made in between is not overwritten). Give version to read an
    earlier version; current_version is always the newest."""
    row, role = file(ctx, file_id, acting_user(ctx))
    if version is None or version == row["version"]:
        return view(ctx, row, role)
    old = version_of(ctx, row, version)
    shown = {"content": old["content"], "version": old["number"], "updated_at": old["created_at"]}
    current = view(ctx, row, role)
    return FileView.model_validate({**current.model_dump(), **shown, "last_modified_by": old["author"]})


@tool(read_only=True)
def read_csv(
    ctx: ToolContext,
    file_id: FileId,
    version: Version = None,
    offset: Annotated[
        int, Field(ge=0, le=1_000_000, description="Skip this many data rows (next_offset of a call). Example: 0")
    ] = 0,
    limit: Annotated[int, Field(ge=1, le=500, description="The most rows to return. Example: 100")] = 100,
) -> CsvRows:
    """Read a CSV file as a table: its header and its rows, each row as {column: value} (values are text as
    written). A malformed file (a line with the wrong number of fields, a broken quote) is refused with the line
    to fix."""
    row, _ = file(ctx, file_id, acting_user(ctx))
    if row["mime_type"] != "text/csv":
        raise ServiceError(f"{row['name']} is not a CSV file ({row['mime_type']}).", "Read it with read_file.")
    number = row["version"] if version is None else version
    content = row["content"] if number == row["version"] else version_of(ctx, row, number)["content"]
    header, rows = table.parse(content)
    chunk = rows[offset : offset + limit]
    end = offset + len(chunk)
    return CsvRows(
        file_id=row["id"],
        version=number,
        header=header,
        rows=[dict(zip(header, r, strict=True)) for r in chunk],
        row_count=len(rows),
        next_offset=end if end < len(rows) else None,
    )


@tool(read_only=True)
def list_versions(
    ctx: ToolContext, file_id: FileId, page_size: PageSize = 20, page_token: PageToken = None
) -> VersionPage:
    """The version history of a file, newest first: each version's number, author, time, size and what the write
    did. Read an earlier version's content with read_file(version=...)."""
    row, _ = file(ctx, file_id, acting_user(ctx))
    history = versions(ctx, row)
    if page_token and not page_token.isdigit():
        raise ServiceError(f"page_token {page_token!r} is not valid.", "Pass the next_page_token of the previous page.")
    start = int(page_token) if page_token else 0
    chunk = history[start : start + page_size]
    end = start + len(chunk)
    items = [
        VersionSummary(
            **{k: v[k] for k in ("number", "author", "created_at", "summary")},
            size=len(v["content"].encode("utf-8", "surrogatepass")),
            is_current=v["number"] == row["version"],
        )
        for v in chunk
    ]
    return VersionPage(
        items=items,
        total=len(history),
        next_page_token=str(end) if end < len(history) else None,
        file_id=row["id"],
        current_version=row["version"],
    )
