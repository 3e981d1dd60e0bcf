"""Claw-Eval's ``rss`` mock on our ``rss`` service: list feeds and articles, read an article, publish a newsletter.

Its fixtures are one list of articles (``articles.json`` or ``feeds.json``) keyed by ``article_id``, each naming its
``source``; it keeps no feed records, and derives its feed list from the articles' sources. We seed one subscription
feed of ours per source (``FEED-1``, ``FEED-2``, … in the order the sources first appear; an article's ``source`` is
its feed's title) and one publication, the newsletter (:data:`PUBLICATION`), to which ``rss_publish`` posts: a post
is an article of ours there (the mock's publish names no feed), listed in ``/audit`` as ``published`` and never among
the feeds' articles. ``rss_get_feed`` is declared by some tasks but the mock has no such route: it answers HTTP 404,
as the mock does. The mock never moves its dates.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field

from coworkenv.servers.claw_eval import ClawService, Fixtures, SeedTables
from coworkenv.servers.claw_eval._fixture_layout import (
    UNKNOWN_TIME,
    Column,
    Layout,
    audit_calls,
    checked,
    fixture_list,
    in_order,
    next_position,
    time_column,
    unique,
)
from coworkenv.servers.claw_eval.common import ClawHTTPError, ClawJson
from coworkenv.servers.kit.context import ToolContext
from coworkenv.servers.kit.tool import ToolSpec, tool
from coworkenv.servers.rss.models import Article, Feed

PUBLICATION = "FEED-NEWSLETTER"
"""Our publication the mock's ``/rss/publish`` posts to."""
NO_SOURCE = "FEED-0"
"""The feed of articles whose ``source`` is not a title (their ``source`` stays in ``custom_fields``)."""

PUBLISHED = Layout(
    Article,
    None,
    {
        "title": Column("title"),
        "content": Column("content"),
        "recipients": Column("recipients"),
        "timestamp": time_column("published_at"),
    },
    fallback={"title": "(untitled)", "feed_id": PUBLICATION},
)
"""A post of the mock (``{title, content, recipients, timestamp}``) as an article of our newsletter."""

ENDPOINTS = {
    "rss_list_feeds": "/rss/feeds",
    "rss_list_articles": "/rss/articles",
    "rss_get_article": "/rss/articles/get",
    "rss_publish": "/rss/publish",
}
IGNORED = {"rss_list_articles": ("feed_name",)}
"""Arguments a task's tool declares that the mock's request model has not (it drops them)."""
_LISTED = ("article_id", "title", "source", "category", "published_at", "summary", "word_count")


def articles_layout(titles: Mapping[str, str]) -> Layout:
    """An article of the mock in our ``articles``, with our feeds' titles by id (its ``source`` is its feed's)."""
    ids = {title: feed_id for feed_id, title in titles.items()}

    def feed_of(source: Any) -> str:
        if not isinstance(source, str) or source not in ids:
            raise ValueError("no feed of ours has this title")
        return ids[source]

    return Layout(
        Article,
        "article_id",
        {
            "source": Column("feed_id", feed_of, lambda feed_id: titles.get(feed_id)),
            "title": Column("title"),
            "url": Column("url"),
            "author": Column("author"),
            "summary": Column("summary"),
            "content": Column("content"),
            "category": Column("category"),
            "tags": Column("tags"),
            "published_at": time_column("published_at"),
            "word_count": Column("word_count"),
        },
        fallback={"published_at": UNKNOWN_TIME, "feed_id": NO_SOURCE},
    )


def _articles(ctx: ToolContext) -> list[dict[str, Any]]:
    """The mock's articles (our feeds' articles, not our posts), in its order."""
    titles = {f["id"]: f["title"] for f in ctx.table("feeds").select("kind = ?", ["subscription"])}
    layout = articles_layout(titles)
    rows = ctx.table("articles").select("feed_id != ?", [PUBLICATION])
    return [layout.claw(row) for row in in_order(rows)]


def list_feeds(
    ctx: ToolContext,
    category: Annotated[str | None, Field(description="Only articles of this category. Example: 'AI'")] = None,
) -> ClawJson:
    """List the feeds (the articles' sources) with the categories and number of their articles, optionally counting
    only articles of one category. Returns {feeds, total}."""
    feeds: dict[Any, dict[str, Any]] = {}
    try:
        for article in _articles(ctx):
            source, kind = article["source"], article["category"]
            if category and kind != category:
                continue
            feed = feeds.setdefault(source, {"source": source, "categories": [], "article_count": 0})
            if kind not in feed["categories"]:
                feed["categories"].append(kind)
            feed["article_count"] += 1
    except (KeyError, TypeError):  # an article without a source or category, or one that is not a value
        raise ClawHTTPError(500, "Internal Server Error") from None
    found = list(feeds.values())
    return ClawJson.of({"feeds": found, "total": len(found)})


def list_articles(
    ctx: ToolContext,
    source: Annotated[str | None, Field(description="Only articles of this feed. Example: 'AI Daily'")] = None,
    category: Annotated[str | None, Field(description="Only articles of this category. Example: 'AI'")] = None,
    max_results: Annotated[int, Field(ge=-(10**6), le=10**6, description="At most this many articles.")] = 20,
    feed_name: Annotated[str | None, Field(description="Accepted and not used: filter on source.")] = None,
) -> ClawJson:
    """List articles (title, source, category, when published, summary, length), optionally of one source or
    category. Returns {articles, total}; read one in full with rss_get_article."""
    found = []
    try:
        for article in _articles(ctx):
            if source and article["source"] != source:
                continue
            if category and article["category"] != category:
                continue
            found.append({k: article[k] for k in _LISTED})
    except KeyError:  # an article without a key the mock's list reads
        raise ClawHTTPError(500, "Internal Server Error") from None
    found = found[:max_results]
    return ClawJson.of({"articles": found, "total": len(found)})


def get_article(ctx: ToolContext, article_id: Annotated[str, Field(description="Example: 'RSS-101'")]) -> ClawJson:
    """One article in full, its content included. Returns the article, or {error}."""
    found = next((a for a in _articles(ctx) if a.get("article_id") == article_id), None)
    if found is None:
        return ClawJson.of({"error": f"Article {article_id} not found"})
    return ClawJson.of(found)


def publish(
    ctx: ToolContext,
    title: Annotated[str, Field(description="The newsletter's title. Example: 'AI weekly, week 9'")],
    content: Annotated[str, Field(description="The newsletter's text.")],
    recipients: Annotated[list[str], Field(description="Addresses it is sent to. Example: ['team@example.com']")] = [],  # noqa: B006
) -> ClawJson:
    """Publish a newsletter and send it to the recipients: it cannot be taken back. Returns {status: 'published',
    record}."""
    record = {"title": title, "content": content, "recipients": recipients, "timestamp": ctx.now_iso()}
    table = ctx.table("articles")
    position = next_position(table.select("feed_id = ?", [PUBLICATION]))
    table.insert(PUBLISHED.row(record, position, record_id=ctx.new_id("articles")))
    return ClawJson.of({"status": "published", "record": record})


def get_feed(ctx: ToolContext, feed_id: Annotated[str | None, Field(description="The feed's id.")] = None) -> ClawJson:
    """Read one feed. Claw-Eval's rss mock has no such route: this always answers HTTP 404 Not Found; list the feeds
    with rss_list_feeds instead."""
    raise ClawHTTPError(404, "Not Found")


TOOLS: tuple[ToolSpec, ...] = (
    tool(read_only=True, name="rss_list_feeds")(list_feeds),
    tool(read_only=True, name="rss_list_articles")(list_articles),
    tool(read_only=True, name="rss_get_article")(get_article),
    tool(name="rss_publish")(publish),
    tool(read_only=True, name="rss_get_feed")(get_feed),
)


def seed(fixtures: Fixtures) -> SeedTables:
    """The mock's articles as our ``articles`` (ids kept), a feed per source and the newsletter as our ``feeds``;
    ValueError naming the file and record when bad."""
    name, records = fixture_list(fixtures, "rss")
    sources = list(dict.fromkeys(r.get("source") for r in records if isinstance(r.get("source"), str)))
    titles = {f"FEED-{n}": source for n, source in enumerate((s for s in sources if s), 1)}
    layout = articles_layout(titles)
    rows = []
    for index, record in enumerate(records):
        where = f"rss fixture {name}: record {index}"
        try:
            row = layout.row(record, index)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        row.setdefault("title", row["id"])
        rows.append(checked(Article, row, f"{where} ({row['id']})"))
    unique(rows, f"rss fixture {name}")
    feeds = [{"id": i, "title": t, "url": f"urn:claw-eval:rss:{i.lower()}"} for i, t in titles.items()]
    if any(row["feed_id"] == NO_SOURCE for row in rows):
        feeds.append({"id": NO_SOURCE, "title": "(no source)", "url": "urn:claw-eval:rss:no-source"})
    newsletter = {"id": PUBLICATION, "title": "Newsletter", "url": "urn:claw-eval:rss:newsletter"}
    feeds.append({**newsletter, "kind": "publication", "description": "Where rss_publish posts."})
    return {"feeds": [checked(Feed, feed, f"rss feed {feed['id']}") for feed in feeds], "articles": rows}


def audit_data(tables: Mapping[str, list[dict[str, Any]]], rows: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The mock's ``/audit``: ``{calls, published}``."""
    posts = [row for row in tables.get("articles", []) if row.get("feed_id") == PUBLICATION]
    return {
        "calls": audit_calls(rows, TOOLS, ENDPOINTS, IGNORED),
        "published": [PUBLISHED.claw(row) for row in in_order(posts)],
    }


SERVICE = ClawService("rss", "rss", TOOLS, seed, audit_data)
