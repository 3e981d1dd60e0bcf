"""Helpers every docs tool shares: the acting member, document access by role, and the revision history."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from coworkenv.servers.docs.models import RANK, DocumentSummary, DocumentView, RevisionView
from coworkenv.servers.kit import ServiceError, ToolContext
from coworkenv.servers.kit.members import acting_user as acting_user

Row = dict[str, Any]

DocumentId = Annotated[str, Field(description="The document's id, from search_documents. Example: 'doc_refunds'")]
BaseRevision = Annotated[
    int | None,
    Field(
        ge=1,
        le=1_000_000_000,
        description="The revision you read (get_document's 'revision'). If the document has changed since, nothing "
        "is written and you are told to re-read it. Omit to skip this check. Example: 3",
    ),
]

VERBS = {"viewer": "read", "commenter": "comment on", "editor": "edit", "owner": "manage"}


def role_of(doc: Row, email: str) -> str | None:
    """The best role ``email`` (a workspace member) has on ``doc``, or None."""
    if doc["owner"] == email:
        return "owner"
    roles = [s["role"] for s in doc["shares"] if s["email"] == email]
    if doc["workspace_role"]:
        roles.append(doc["workspace_role"])
    return max(roles, key=RANK.__getitem__) if roles else None


def document(ctx: ToolContext, document_id: str, user: Row, need: str = "viewer") -> tuple[Row, str]:
    """The document and the acting user's role on it; a business error when it is missing or the role too low."""
    doc = ctx.fetch("documents", document_id, "document", "Use search_documents to find the document's id.")
    role = role_of(doc, user["email"])
    if role is None:
        raise ServiceError(
            f"{user['email']} has no access to document {document_id}.",
            f"Ask its owner ({doc['owner']}) to share it with you.",
        )
    if RANK[role] < RANK[need]:
        hint = f"Ask the owner ({doc['owner']}) for {need} access"
        hint += ", or leave a comment with add_comment instead." if need == "editor" and role == "commenter" else "."
        raise ServiceError(
            f"{user['email']} is a {role} of document {document_id} and cannot {VERBS[need]} it.",
            hint,
        )
    return doc, role


def view(doc: Row, role: str) -> DocumentView:
    return DocumentView.model_validate({**doc, "your_role": role})


def summary(doc: Row, role: str) -> DocumentSummary:
    snippet = " ".join(doc["content"].split())
    keys = ("id", "title", "owner", "folder_id", "revision", "updated_at", "last_modified_by")
    return DocumentSummary.model_validate(
        {
            **{k: doc[k] for k in keys},
            "snippet": snippet if len(snippet) <= 160 else snippet[:157] + "...",
            "your_role": role,
        }
    )


def check_base(doc: Row, base_revision: int | None) -> None:
    if base_revision is not None and base_revision != doc["revision"]:
        raise ServiceError(
            f"Document {doc['id']} is at revision {doc['revision']}, not {base_revision}: it was edited after you "
            "read it, and nothing was changed.",
            "Read it again with get_document, then make your change to the current content with "
            f"base_revision {doc['revision']}.",
        )


# ---------------------------------------------------------------------------------------------- revisions
def revisions(ctx: ToolContext, doc: Row) -> list[Row]:
    """Every revision of a document, newest first. A seeded document whose current revision has no stored row
    shows that revision from the document itself (its history before it starts there)."""
    rows = ctx.table("revisions").select("document_id = ?", [doc["id"]], order_by="number DESC, id")
    if not rows or rows[0]["number"] != doc["revision"]:
        rows.insert(0, _current(doc))
    return rows


def _current(doc: Row) -> Row:
    return {
        "document_id": doc["id"],
        "number": doc["revision"],
        "title": doc["title"],
        "content": doc["content"],
        "author": doc["last_modified_by"],
        "created_at": doc["updated_at"],
        "summary": "",
    }


def revision_view(doc: Row, row: Row) -> RevisionView:
    keys = ("document_id", "number", "title", "content", "author", "created_at", "summary")
    return RevisionView(**{k: row[k] for k in keys}, is_current=row["number"] == doc["revision"])


def save_edit(ctx: ToolContext, doc: Row, user: Row, title: str, content: str, summary_text: str) -> Row:
    """Write a new revision of the document (title and full content) and return the updated document."""
    store = ctx.table("revisions")
    if not store.count("document_id = ? AND number = ?", [doc["id"], doc["revision"]]):
        store.insert({"id": ctx.new_id("revisions"), **_current(doc)})  # keep the seeded revision in the history
    number = doc["revision"] + 1
    now = ctx.now_iso()
    store.insert(
        {
            "id": ctx.new_id("revisions"),
            "document_id": doc["id"],
            "number": number,
            "title": title,
            "content": content,
            "author": user["email"],
            "created_at": now,
            "summary": summary_text,
        }
    )
    changes = {"title": title, "content": content, "revision": number, "updated_at": now}
    return ctx.table("documents").update(doc["id"], {**changes, "last_modified_by": user["email"]})
