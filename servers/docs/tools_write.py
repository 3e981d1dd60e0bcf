"""Writing tools of the docs service: create a document, replace its content or title, and exact edits.

Every change of title or content is a new revision (number + 1) holding the full resulting content, with its
author and time, so the history can be read with list_revisions and get_revision.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from coworkenv.servers.docs import edits
from coworkenv.servers.docs.access import (
    BaseRevision,
    DocumentId,
    acting_user,
    check_base,
    document,
    save_edit,
    view,
)
from coworkenv.servers.docs.models import DocumentView
from coworkenv.servers.kit import NotFound, ServiceError, ToolContext, tool

Title = Annotated[str, Field(min_length=1, max_length=300, description="Example: 'Refund policy (2026)'")]
Operation = Literal["replace", "append", "insert_after_heading", "append_to_section"]


@tool()
def create_document(
    ctx: ToolContext,
    title: Title,
    content: Annotated[
        str, Field(description="The text, plain or markdown. Example: '# Agenda\\n\\n- Q1 numbers\\n'")
    ] = "",
    folder_id: Annotated[
        str | None, Field(description="The folder to put it in (list_folders); omit for none. Example: 'fld_notes'")
    ] = None,
) -> DocumentView:
    """Create a new document owned by the acting user, at revision 1. Every workspace member can edit it
    (workspace_role 'editor'); give people outside the workspace access with share_document."""
    user = acting_user(ctx)
    if folder_id is not None and ctx.table("folders").get(folder_id) is None:
        raise NotFound("folder", folder_id, "Use list_folders to find a folder's id, or omit folder_id.")
    now = ctx.now_iso()
    doc_id = ctx.new_id("documents")
    row = ctx.table("documents").insert(
        {
            "id": doc_id,
            "title": title,
            "content": content,
            "owner": user["email"],
            "folder_id": folder_id,
            "revision": 1,
            "created_at": now,
            "updated_at": now,
            "last_modified_by": user["email"],
        }
    )
    ctx.table("revisions").insert(
        {
            "id": ctx.new_id("revisions"),
            "document_id": doc_id,
            "number": 1,
            "title": title,
            "content": content,
            "author": user["email"],
            "created_at": now,
            "summary": "Created the document",
        }
    )
    return view(row, "owner")


@tool(destructive=True, idempotent=True)
def update_document(
    ctx: ToolContext,
    document_id: DocumentId,
    title: Annotated[
        str | None, Field(min_length=1, max_length=300, description="A new title. Example: 'Q1 report'")
    ] = None,
    content: Annotated[
        str | None,
        Field(
            description="The new full content, replacing all of it. Example: '# Q1 report\\n\\nRevenue grew 12%.\\n'"
        ),
    ] = None,
    base_revision: BaseRevision = None,
) -> DocumentView:
    """Replace a document's whole content and/or its title (needs editor access). This overwrites everything:
    for a change to one passage prefer edit_document. Pass base_revision (the revision you read) so you never
    overwrite someone else's newer edit. The previous content stays in the revision history."""
    user = acting_user(ctx)
    doc, role = document(ctx, document_id, user, need="editor")
    if title is None and content is None:
        raise ServiceError("Nothing to update.", "Give a new title, a new content, or both.")
    check_base(doc, base_revision)
    new_title = doc["title"] if title is None else title
    new_content = doc["content"] if content is None else content
    if (new_title, new_content) == (doc["title"], doc["content"]):
        return view(doc, role)
    changed = []
    if new_title != doc["title"]:
        changed.append(f"Renamed to {new_title!r}")
    if new_content != doc["content"]:
        changed.append("Replaced the content")
    return view(save_edit(ctx, doc, user, new_title, new_content, "; ".join(changed)), role)


@tool(destructive=True)
def edit_document(
    ctx: ToolContext,
    document_id: DocumentId,
    operation: Annotated[
        Operation,
        Field(
            description="'replace': replace the text in find by text; 'append': add text at the end; "
            "'insert_after_heading': put text on new lines right below the heading; 'append_to_section': put text "
            "on new lines at the end of the heading's section. Example: 'replace'"
        ),
    ],
    text: Annotated[
        str,
        Field(
            description="The new text: the replacement (may be '' to delete), or the text to add. "
            "Example: 'Refunds over $1,000 need finance approval.'"
        ),
    ],
    find: Annotated[
        str | None,
        Field(
            description="For 'replace': the exact text to replace (case-sensitive, as it appears in the content). "
            "Example: 'Refunds over $500 need finance approval.'"
        ),
    ] = None,
    heading: Annotated[
        str | None,
        Field(description="For the heading operations: the heading's text, without the '#' marks. Example: 'Limits'"),
    ] = None,
    replace_all: Annotated[
        bool, Field(description="For 'replace': replace every occurrence instead of exactly one. Example: false")
    ] = False,
    base_revision: BaseRevision = None,
) -> DocumentView:
    """Make one exact edit to a document's content (needs editor access) and record it as a new revision.
    'replace' needs find to occur exactly once (or set replace_all); a find text that does not occur, or occurs
    several times, is refused and nothing changes. Heading operations need a heading that occurs exactly once.
    Pass base_revision (the revision you read) to be sure nobody edited the document in between."""
    user = acting_user(ctx)
    doc, role = document(ctx, document_id, user, need="editor")
    check_base(doc, base_revision)
    content = doc["content"]
    if operation == "replace":
        if find is None:
            raise ServiceError("operation 'replace' needs find.", "Give the exact text to replace in find.")
        content, count = edits.replace_text(content, find, text, replace_all)
        what = f"Replaced {count} occurrence{'s' if count > 1 else ''} of {edits.short(find)!r}"
    else:
        if not text:
            raise ServiceError(f"operation {operation!r} needs a non-empty text.", "Give the text to add.")
        if operation == "append":
            content, what = edits.append_text(content, text), "Appended text at the end"
        elif heading is None or not heading.strip():
            raise ServiceError(f"operation {operation!r} needs heading.", "Name the heading, e.g. 'Action items'.")
        elif operation == "insert_after_heading":
            content = edits.insert_after_heading(content, heading, text)
            what = f"Inserted text below the heading {heading.strip()!r}"
        else:
            content = edits.append_to_section(content, heading, text)
            what = f"Added text at the end of the section {heading.strip()!r}"
    if content == doc["content"]:
        return view(doc, role)
    return view(save_edit(ctx, doc, user, doc["title"], content, what), role)
