"""Sharing tools of the files service: give a person a role on a file, or take it away."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, TypeAdapter, ValidationError

from coworkenv.servers.files.access import FileId, acting_user, file, role_of, view
from coworkenv.servers.files.models import Email, FileView, Role
from coworkenv.servers.kit import ServiceError, ToolContext, tool
from coworkenv.servers.kit.members import shared_with, unshared

_EMAIL: TypeAdapter[str] = TypeAdapter(Email)
ShareEmail = Annotated[
    str,
    Field(description="The person's email address, inside or outside the company. Example: 'jamie.lee@northwind.com'"),
]


def _address(value: str) -> str:
    try:
        return _EMAIL.validate_python(value)
    except ValidationError:
        raise ServiceError(f"{value!r} is not an email address.", "Write it like 'priya.shah@brightwave.io'.") from None


@tool(destructive=True, idempotent=True)
def share_file(
    ctx: ToolContext,
    file_id: FileId,
    email: ShareEmail,
    role: Annotated[Role, Field(description="viewer (read) or editor (change it). Example: 'viewer'")],
) -> FileView:
    """Give one person a role on a file, or change the role they have (needs editor access). Anyone with the
    address can be added, including people outside the company, so check who should see the file first."""
    user = acting_user(ctx)
    row, role_now = file(ctx, file_id, user, need="editor")
    address = _address(email)
    if address == row["owner"]:
        raise ServiceError(f"{address} owns file {file_id} and already has full access.")
    if {"email": address, "role": role} in row["shares"]:
        return view(ctx, row, role_now)
    shares = shared_with(row["shares"], address, role)
    updated = ctx.table("files").update(row["id"], {"shares": shares})
    return view(ctx, updated, role_of(updated, user["email"]) or role_now)


@tool(destructive=True, idempotent=True)
def unshare_file(ctx: ToolContext, file_id: FileId, email: ShareEmail) -> FileView:
    """Take away the role a person was given on a file (needs editor access). Members of the workspace keep
    whatever workspace_role the file gives everyone."""
    user = acting_user(ctx)
    row, role_now = file(ctx, file_id, user, need="editor")
    address = _address(email)
    if address == user["email"]:
        raise ServiceError("You cannot take away your own access.", "Ask the file's owner or another editor.")
    shares = unshared(row["shares"], address, f"File {file_id}")
    return view(ctx, ctx.table("files").update(row["id"], {"shares": shares}), role_now)
