"""Collaboration tools of the docs service: comments and sharing."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, TypeAdapter, ValidationError

from coworkenv.servers.docs.access import DocumentId, acting_user, document, role_of, view
from coworkenv.servers.docs.edits import READ_HINT, short
from coworkenv.servers.docs.models import Comment, DocumentView, Email, Role
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


@tool()
def add_comment(
    ctx: ToolContext,
    document_id: DocumentId,
    body: Annotated[str, Field(min_length=1, description="The comment. Example: 'Should this limit be $1,000 now?'")],
    quoted_text: Annotated[
        str | None,
        Field(
            description="The passage the comment is about, copied exactly from the content; omit for a comment on "
            "the whole document. Example: 'Refunds over $500 need finance approval.'"
        ),
    ] = None,
) -> Comment:
    """Comment on a document (needs commenter access or more), optionally anchored to a passage of its content.
    Comments do not change the content or its revision; use them to ask or suggest without editing."""
    user = acting_user(ctx)
    doc, _ = document(ctx, document_id, user, need="commenter")
    if quoted_text is not None and (not quoted_text or quoted_text not in doc["content"]):
        raise ServiceError(f"quoted_text {short(quoted_text)!r} does not occur in the document.", READ_HINT)
    row = ctx.table("comments").insert(
        {
            "id": ctx.new_id("comments"),
            "document_id": document_id,
            "author": user["email"],
            "body": body,
            "quoted_text": quoted_text,
            "created_at": ctx.now_iso(),
        }
    )
    return Comment.model_validate(row)


@tool(destructive=True, idempotent=True)
def resolve_comment(
    ctx: ToolContext,
    comment_id: Annotated[str, Field(description="The comment's id, from list_comments. Example: 'cmt_q1_1'")],
) -> Comment:
    """Mark a comment resolved, once what it asks is done. Its author or an editor of the document may resolve
    it; resolving an already resolved comment changes nothing."""
    user = acting_user(ctx)
    comment = ctx.fetch(
        "comments", comment_id, "comment", "Use list_comments on the document to find the comment's id."
    )
    need = "commenter" if comment["author"] == user["email"] else "editor"
    document(ctx, comment["document_id"], user, need=need)
    if comment["resolved"]:
        return Comment.model_validate(comment)
    row = ctx.table("comments").update(
        comment_id, {"resolved": True, "resolved_by": user["email"], "resolved_at": ctx.now_iso()}
    )
    return Comment.model_validate(row)


@tool(destructive=True, idempotent=True)
def share_document(
    ctx: ToolContext,
    document_id: DocumentId,
    email: ShareEmail,
    role: Annotated[
        Role, Field(description="viewer (read), commenter (read and comment) or editor (change it). Example: 'viewer'")
    ],
) -> DocumentView:
    """Give one person a role on a document, or change the role they have (needs editor access). Anyone with
    the address can be added, including people outside the company, so check who should see the document first."""
    user = acting_user(ctx)
    doc, role_now = document(ctx, document_id, user, need="editor")
    address = _address(email)
    if address == doc["owner"]:
        raise ServiceError(f"{address} owns document {document_id} and already has full access.")
    if {"email": address, "role": role} in doc["shares"]:
        return view(doc, role_now)
    shares = shared_with(doc["shares"], address, role)
    row = ctx.table("documents").update(document_id, {"shares": shares})
    return view(row, role_of(row, user["email"]) or role_now)


@tool(destructive=True, idempotent=True)
def unshare_document(ctx: ToolContext, document_id: DocumentId, email: ShareEmail) -> DocumentView:
    """Take away the role a person was given on a document (needs editor access). Members of the workspace keep
    whatever workspace_role the document gives everyone."""
    user = acting_user(ctx)
    doc, role_now = document(ctx, document_id, user, need="editor")
    address = _address(email)
    if address == user["email"]:
        raise ServiceError("You cannot take away your own access.", "Ask the document's owner or another editor.")
    shares = unshared(doc["shares"], address, f"Document {document_id}")
    row = ctx.table("documents").update(document_id, {"shares": shares})
    return view(row, role_now)
