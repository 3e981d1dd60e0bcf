"""Records of the rss service (a feed reader and publisher: the feeds the company follows, their articles, and the
company's own publications, to which it posts).

A feed is a ``subscription`` (someone else's, read here) or a ``publication`` (ours: a blog or newsletter, ``public``
when anyone on the internet reads it). An article of a publication is a post we published; ``recipients`` are the
addresses it was also mailed to.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from coworkenv.servers.kit import Page, Record, SeedError, Table, Timestamp

Kind = Literal["subscription", "publication"]


class Feed(Record):
    """A feed: one we follow, or one of our own publications."""

    id: str = Field(description="The feed's id. Example: 'FEED-2'")
    title: str = Field(min_length=1, description="Its name, the articles' source. Example: 'DevOps Digest'")
    url: str = Field(description="The feed's address. Example: 'https://devopsdigest.example.com/rss'")
    kind: Kind = "subscription"
    category: str = Field(default="", description="Example: 'engineering'")
    description: str = ""
    public: bool = Field(default=False, description="A publication anyone on the internet reads (false: staff only).")
    owner: str | None = Field(default=None, description="Who runs a publication. Example: 'dana@brightwave.io'")
    created_at: Timestamp | None = None


class Article(Record):
    """An article of a feed, or a post of one of our publications."""

    id: str = Field(description="The article's id. Example: 'RSS-104'")
    feed_id: str = Field(description="The feed it came from or was posted to. Example: 'FEED-2'")
    title: str = Field(min_length=1)
    url: str | None = None
    author: str | None = Field(default=None, description="Who wrote it. Example: 'Ana Reyes'")
    summary: str = ""
    content: str = ""
    category: str = Field(default="", description="Example: 'security'")
    tags: list[str] = Field(default=[], description="Example: ['kubernetes', 'outage']")
    published_at: Timestamp
    word_count: int | None = Field(default=None, ge=0)
    is_read: bool = False
    starred: bool = Field(default=False, description="Saved for later.")
    recipients: list[str] = Field(default=[], description="Addresses a post was mailed to.")
    custom_fields: dict[str, Any] = Field(default={}, description="Other attributes as the source system keeps them.")


TABLES = (
    Table("feeds", Feed, "FEED-", indexes=(("kind",),)),
    Table(
        "articles",
        Article,
        "RSS-",
        indexes=(("feed_id", "published_at"), ("published_at",)),
        refs=(("feed_id", "feeds"),),
    ),
)


def check_seed(seed: dict[str, list[dict[str, Any]]]) -> None:
    """Rules across records: one feed per address; only publications are public or have an owner."""
    urls: set[str] = set()
    for index, feed in enumerate(seed.get("feeds", [])):
        if feed["url"] in urls:
            raise SeedError(f"rss.feeds[{index}] field 'url': {feed['url']!r} is already a feed")
        urls.add(feed["url"])
        if feed["kind"] == "subscription" and (feed["public"] or feed["owner"]):
            raise SeedError(f"rss.feeds[{index}] field 'kind': only a publication is public or has an owner")


class FeedView(Feed):
    article_count: int = Field(description="Articles in the feed.")
    unread_count: int = Field(description="Articles not read yet.")


class ArticleSummary(BaseModel):
    """An article without its content (read it with get_article)."""

    id: str
    feed_id: str
    source: str = Field(description="The feed's title.")
    title: str
    url: str | None
    author: str | None
    summary: str
    category: str
    tags: list[str]
    published_at: str
    word_count: int | None
    is_read: bool
    starred: bool


class FeedPage(Page[FeedView]):
    pass


class ArticlePage(Page[ArticleSummary]):
    pass


class MarkedArticles(BaseModel):
    items: list[ArticleSummary] = Field(description="The articles as they are now.")
