"""Tools of the rss service. Names follow feed readers (Feedly, Inoreader: subscriptions, entries, read and saved
markers) and publishing APIs (a post to a blog or newsletter)."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BaseModel, Field

from coworkenv.servers.kit import PageSize, PageToken, ServiceError, Timestamp, ToolContext, Where, tool
from coworkenv.servers.rss.models import (
    Article,
    ArticlePage,
    ArticleSummary,
    FeedPage,
    FeedView,
    Kind,
    MarkedArticles,
)

FeedId = Annotated[str, Field(description="The feed's id. Example: 'FEED-2'")]
ArticleId = Annotated[str, Field(description="The article's id. Example: 'RSS-104'")]
_ADDRESS = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
_FIND_FEED = "Use list_feeds to find the feed's id."
_FIND_ARTICLE = "Use list_articles to find the article's id."


class ArticleDetail(Article):
    source: str = Field(description="The feed's title.")


def _feed(ctx: ToolContext, feed_id: str) -> dict[str, Any]:
    return ctx.fetch("feeds", feed_id, "feed", _FIND_FEED)


def _article(ctx: ToolContext, article_id: str) -> dict[str, Any]:
    return ctx.fetch("articles", article_id, "article", _FIND_ARTICLE)


def _titles(ctx: ToolContext, feed_ids: set[str]) -> dict[str, str]:
    if not feed_ids:
        return {}
    marks = ", ".join("?" * len(feed_ids))
    return {f["id"]: f["title"] for f in ctx.table("feeds").select(f"id IN ({marks})", sorted(feed_ids))}


def _summaries(ctx: ToolContext, rows: list[dict[str, Any]]) -> list[ArticleSummary]:
    titles = _titles(ctx, {r["feed_id"] for r in rows})
    return [ArticleSummary.model_validate({**r, "source": titles.get(r["feed_id"], "")}) for r in rows]


def _feed_views(ctx: ToolContext, rows: list[dict[str, Any]]) -> list[FeedView]:
    counts: dict[str, list[int]] = {r["id"]: [0, 0] for r in rows}
    if rows:
        marks = ", ".join("?" * len(rows))
        for article in ctx.table("articles").select(f"feed_id IN ({marks})", [r["id"] for r in rows]):
            counts[article["feed_id"]][0] += 1
            counts[article["feed_id"]][1] += not article["is_read"]
    return [
        FeedView.model_validate({**r, "article_count": counts[r["id"]][0], "unread_count": counts[r["id"]][1]})
        for r in rows
    ]


@tool(read_only=True)
def list_feeds(
    ctx: ToolContext,
    kind: Annotated[Kind | None, Field(description="subscription (feeds we follow) or publication (our own)")] = None,
    category: Annotated[str | None, Field(description="Only this category. Example: 'engineering'")] = None,
    query: Annotated[str | None, Field(description="Text in the title or description. Example: 'devops'")] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> FeedPage:
    """List feeds by title with how many articles each has and how many are unread."""
    where = Where().eq("kind", kind).eq_folded("category", category).text(["title", "description"], query)
    rows, total, nxt = ctx.paginate("feeds", where.sql, where.params, "title, id", page_size, page_token)
    return FeedPage(items=_feed_views(ctx, rows), total=total, next_page_token=nxt)


@tool(read_only=True)
def get_feed(ctx: ToolContext, feed_id: FeedId) -> FeedView:
    """Read one feed: its address, kind, category, whether it is public, and its counts."""
    return _feed_views(ctx, [_feed(ctx, feed_id)])[0]


@tool(read_only=True)
def list_articles(
    ctx: ToolContext,
    feed_id: Annotated[str | None, Field(description="Only this feed's articles. Example: 'FEED-2'")] = None,
    source: Annotated[str | None, Field(description="Text in the feed's title. Example: 'DevOps'")] = None,
    category: Annotated[str | None, Field(description="Only this category. Example: 'security'")] = None,
    tag: Annotated[str | None, Field(description="Only articles with this tag. Example: 'kubernetes'")] = None,
    query: Annotated[str | None, Field(description="Text in the title or summary. Example: 'outage'")] = None,
    unread_only: Annotated[bool, Field(description="true: only articles not read yet")] = False,
    starred: Annotated[bool | None, Field(description="true: only saved articles; false: only unsaved ones")] = None,
    published_after: Annotated[
        Timestamp | None, Field(description="At or after this time. Example: '2026-02-25T00:00:00Z'")
    ] = None,
    published_before: Annotated[
        Timestamp | None, Field(description="Before this time. Example: '2026-03-01T00:00:00Z'")
    ] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> ArticlePage:
    """List articles newest first, without their content (get_article reads one). All filters combine."""
    where = (
        Where()
        .eq("feed_id", feed_id)
        .eq_folded("category", category)
        .has_tag("articles.tags", tag)
        .text(["title", "summary"], query)
        .eq("starred", starred)
        .gte("published_at", published_after)
        .lt("published_at", published_before)
    )
    if source:
        where.raw("feed_id IN (SELECT id FROM feeds WHERE instr(casefold(title), ?) > 0)", source.casefold())
    if unread_only:
        where.raw("is_read = 0")
    order = "published_at DESC, id DESC"
    rows, total, nxt = ctx.paginate("articles", where.sql, where.params, order, page_size, page_token)
    return ArticlePage(items=_summaries(ctx, rows), total=total, next_page_token=nxt)


@tool(read_only=True)
def get_article(ctx: ToolContext, article_id: ArticleId) -> ArticleDetail:
    """Read one article in full, with its content. Reading does not mark it read: use mark_read."""
    row = _article(ctx, article_id)
    return ArticleDetail.model_validate({**row, "source": _feed(ctx, row["feed_id"])["title"]})


@tool(idempotent=True)
def mark_read(
    ctx: ToolContext,
    article_ids: Annotated[
        list[str], Field(min_length=1, description="The articles to mark. Example: ['RSS-104', 'RSS-105']")
    ],
    read: Annotated[bool, Field(description="true: mark read; false: mark unread again")] = True,
) -> MarkedArticles:
    """Mark articles read (or unread again). Returns them as they are now."""
    rows = [_article(ctx, article_id) for article_id in dict.fromkeys(article_ids)]
    changed = [ctx.table("articles").update(r["id"], {"is_read": read}) if r["is_read"] != read else r for r in rows]
    return MarkedArticles(items=_summaries(ctx, changed))


@tool(idempotent=True)
def star_article(
    ctx: ToolContext,
    article_id: ArticleId,
    starred: Annotated[bool, Field(description="true: save for later; false: unsave")] = True,
) -> ArticleSummary:
    """Save an article for later (or unsave it)."""
    row = _article(ctx, article_id)
    if row["starred"] != starred:
        row = ctx.table("articles").update(article_id, {"starred": starred})
    return _summaries(ctx, [row])[0]


@tool()
def subscribe_feed(
    ctx: ToolContext,
    url: Annotated[
        str, Field(pattern=r"^https?://\S+$", max_length=2_000, description="Example: 'https://x.example.com/feed'")
    ],
    title: Annotated[str, Field(min_length=1, max_length=300, description="Example: 'Cloud Security Weekly'")],
    category: Annotated[str, Field(max_length=200, description="Example: 'security'")] = "",
) -> FeedView:
    """Follow a new feed (its articles arrive from now on)."""
    clash = ctx.table("feeds").select("url = ?", [url], limit=1)
    if clash:
        raise ServiceError(f"{url} is already the feed {clash[0]['id']} ({clash[0]['title']}).", "Use that feed.")
    row = {"id": ctx.new_id("feeds"), "title": title, "url": url, "category": category, "created_at": ctx.now_iso()}
    return _feed_views(ctx, [ctx.table("feeds").insert(row)])[0]


class Unsubscribed(BaseModel):
    id: str = Field(description="The id of the feed that was removed.")
    deleted: bool = Field(description="True: the feed and its articles no longer exist here.")
    articles_removed: int = Field(description="How many of its articles went with it.")


@tool(destructive=True, idempotent=True)
def unsubscribe_feed(ctx: ToolContext, feed_id: FeedId) -> Unsubscribed:
    """Stop following a feed: it and its articles are removed (starred ones too). Our own publications cannot be."""
    feed = _feed(ctx, feed_id)
    if feed["kind"] == "publication":
        raise ServiceError(f"{feed_id} ({feed['title']}) is one of our publications, not a subscription.")
    articles = ctx.table("articles").select("feed_id = ?", [feed_id])
    for article in articles:
        ctx.table("articles").delete(article["id"])
    ctx.table("feeds").delete(feed_id)
    return Unsubscribed(id=feed_id, deleted=True, articles_removed=len(articles))


@tool()
def publish_article(
    ctx: ToolContext,
    feed_id: Annotated[
        str, Field(description="One of our publications (list_feeds kind 'publication'). Example: 'FEED-9'")
    ],
    title: Annotated[str, Field(min_length=1, max_length=300, description="Example: 'Tech digest, week 10'")],
    content: Annotated[str, Field(min_length=1, description="The post, in Markdown.")],
    summary: Annotated[str, Field(max_length=2_000, description="One or two sentences for the feed.")] = "",
    tags: Annotated[list[str], Field(description="Example: ['digest']")] = [],  # noqa: B006
    recipients: Annotated[
        list[str], Field(description="Addresses to mail it to as well. Example: ['team@brightwave.io']")
    ] = [],  # noqa: B006
) -> ArticleDetail:
    """Publish a post to one of our publications (a public one is read by anyone, at once; a post cannot be taken
    back). Optionally mail it to recipients."""
    feed = _feed(ctx, feed_id)
    if feed["kind"] != "publication":
        ours = ctx.table("feeds").select("kind = 'publication'", order_by="id")
        names = ", ".join(f"{f['id']} ({f['title']})" for f in ours) or "none"
        raise ServiceError(f"{feed_id} is a feed we follow, not one of ours.", f"Our publications: {names}.")
    bad = [r for r in recipients if not _ADDRESS.fullmatch(r)]
    if bad:
        raise ServiceError(f"{bad[0][:80]!r} is not an email address.", "Write recipients as name@company.com.")
    row = {
        "id": ctx.new_id("articles"),
        "feed_id": feed_id,
        "title": title,
        "author": "me",
        "summary": summary,
        "content": content,
        "category": feed["category"],
        "tags": sorted(set(tags)),
        "published_at": ctx.now_iso(),
        "word_count": len(content.split()),
        "is_read": True,
        "recipients": list(dict.fromkeys(r.lower() for r in recipients)),
    }
    stored = ctx.table("articles").insert(row)
    return ArticleDetail.model_validate({**stored, "source": feed["title"]})


TOOLS = (
    list_feeds,
    get_feed,
    list_articles,
    get_article,
    mark_read,
    star_article,
    subscribe_feed,
    unsubscribe_feed,
    publish_article,
)
