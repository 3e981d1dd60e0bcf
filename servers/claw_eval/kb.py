"""Claw-Eval's kb (``mock_services/kb``: a knowledge base of articles) on our docs service.

Each article is a document of our docs workspace in a folder of its own, keeping its id (``KB-001``): its title
and content are the document's (its creation time is the article's, or else its last update); category, tags,
views, the last-updated day and the rest stay in ``custom_fields``. Updating an article is an edit of our
document (a new revision) and sets its last-updated day to the simulated today. Its dates are not shifted: no
clock of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field

from coworkenv.servers.claw_eval import ClawService, Fixtures, SeedTables
from coworkenv.servers.claw_eval._fieldmap import (
    FieldMap,
    Mapped,
    audit_calls,
    check_keys,
    checked,
    claw_time,
    claw_today,
    fixture_records,
    text_or_empty,
    text_or_missing,
    to_time,
)
from coworkenv.servers.claw_eval._notes_kb_docs import (
    document,
    documents,
    editor,
    folder_id,
    home,
    owner_email,
    title_of,
)
from coworkenv.servers.claw_eval.common import ClawJson
from coworkenv.servers.docs.access import save_edit
from coworkenv.servers.docs.models import Document
from coworkenv.servers.kit import ToolContext, tool

KIND = "kb"
FIELDS = FieldMap(
    mapped=(
        Mapped("article_id", "id"),
        Mapped("title", "title", title_of),
        Mapped("content", "content", text_or_empty, text_or_missing),
    ),
    order=("article_id", "title", "category", "tags", "created_at", "content", "last_updated", "author", "status"),
)
"""A Claw-Eval article on our Document."""

FIXTURE = "articles.json"
REQUIRED = ("title", "category", "tags", "content", "last_updated", "views")
"""What the mock's search reads of every article."""
ENDPOINTS = {
    "kb_search": "/kb/search",
    "kb_get_article": "/kb/articles/get",
    "kb_update_article": "/kb/articles/update",
}
ArticleId = Annotated[str, Field(description="The article's id. Example: 'KB-001'")]
SNIPPET = 150


def tokens(text: str) -> set[str]:
    """What a search matches on (as the mock tokenises): the words between spaces, every two neighbouring
    characters (lower case) that are not both space, and every CJK character."""
    found = set(text.lower().split())
    found |= {pair for pair in (text[i : i + 2].lower() for i in range(len(text) - 1)) if not pair.isspace()}
    found |= {ch for ch in text if "\u4e00" <= ch <= "\u9fff"}
    return found


@tool(read_only=True)
def kb_search(
    ctx: ToolContext,
    query: Annotated[str, Field(description="Words to look for in titles, tags and content. Example: 'VPN 连接'")],
    category: Annotated[str | None, Field(description="Only articles of this category. Example: 'IT Support'")] = None,
    max_results: Annotated[int, Field(ge=-10_000, le=10_000, description="How many articles at most. Example: 5")] = 5,
) -> ClawJson:
    """Search the knowledge base: articles sharing a word, a pair of characters or a Chinese character with the
    query, in id order, each with its id, title, category, tags, last update, views and the start of its text."""
    wanted = tokens(query)
    found = []
    for row in documents(ctx, KIND):
        article = FIELDS.view(row)
        if category and article["category"] != category:
            continue
        text = f"{article['title']} {' '.join(article['tags'])} {article['content']}"
        if wanted & tokens(text):
            keys = ("article_id", "title", "category", "tags", "last_updated", "views")
            found.append({**{k: article[k] for k in keys}, "snippet": article["content"][:SNIPPET] + "..."})
    found = found[:max_results]
    return ClawJson.of({"articles": found, "total": len(found)})


@tool(read_only=True)
def kb_get_article(ctx: ToolContext, article_id: ArticleId) -> ClawJson:
    """Read one knowledge-base article in full: title, category, tags, content, last update, views."""
    row = document(ctx, KIND, article_id)
    return ClawJson.of({"error": f"Article {article_id} not found"} if row is None else FIELDS.view(row))


@tool(idempotent=True)
def kb_update_article(
    ctx: ToolContext,
    article_id: ArticleId,
    content: Annotated[str, Field(description="The article's whole new text (replaces the old)")],
) -> ClawJson:
    """Replace an article's content (its last-updated day becomes today)."""
    row = document(ctx, KIND, article_id)
    if row is None:
        return ClawJson.of({"error": f"Article {article_id} not found"})
    changes = FIELDS.assign(row, {"content": content, "last_updated": claw_today(ctx)})
    row = save_edit(ctx, row, editor(ctx, KIND), row["title"], changes["content"], "Updated through kb_update_article")
    ctx.table("documents").update(article_id, {"custom_fields": changes["custom_fields"]})
    return ClawJson.of({"status": "updated", "article_id": article_id})


TOOLS = (kb_search, kb_get_article, kb_update_article)


def _checked_for_search(where: str, record: Mapping[str, Any]) -> None:
    for key in ("title", "content", "category"):
        if not isinstance(record[key], str):
            raise ValueError(f"{where}: {key} must be a text, got {record[key]!r}")
    tags = record["tags"]
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise ValueError(f"{where}: tags must be a list of texts, got {tags!r}")


def seed(fixtures: Fixtures) -> SeedTables:
    """The articles of ``articles.json`` as documents of our docs service (ids kept), in a folder of their own."""
    name, records = fixture_records(fixtures, "kb", FIXTURE)
    tables = home(KIND, "Knowledge base")
    docs: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index, record in enumerate(records):
        rid = check_keys(name, index, record, "article_id", REQUIRED)
        where = f"{name} record {rid}"
        if rid in seen:
            raise ValueError(f"{where}: the article_id is given twice")
        seen.add(rid)
        _checked_for_search(where, record)
        try:
            updated = to_time(record["last_updated"])
            created = to_time(record["created_at"]) if "created_at" in record else updated
            ours = FIELDS.ours(record)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        row = {**ours, "owner": owner_email(KIND), "folder_id": folder_id(KIND), "created_at": created}
        docs.append(checked(Document, {**row, "updated_at": max(created, updated)}, where))
    return {**tables, "documents": docs}


def audit_data(tables: Mapping[str, list[dict[str, Any]]], rows: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The mock's ``/kb/audit``: its calls and the article updates (which article, when)."""
    updates = [
        {"article_id": row["result"]["article_id"], "timestamp": claw_time(str(row["sim_time"]))}
        for row in rows
        if row.get("tool") == "kb_update_article"
        and row.get("outcome") == "ok"
        and isinstance(row.get("result"), dict)
        and row["result"].get("status") == "updated"
    ]
    return {"calls": audit_calls(rows, ENDPOINTS, TOOLS), "updates": updates}


SERVICE = ClawService(name="kb", serves_on="docs", tools=TOOLS, seed=seed, audit_data=audit_data)
