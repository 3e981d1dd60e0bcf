"""The sensitive kinds of the rss service: a post published to a public publication (anyone reads it at once, and it
cannot be taken back), a post mailed to addresses outside the company, records deleted (unsubscribing removes a feed
and its articles).

The company's domains are those of the publications' owners (before or after the change).
"""

from __future__ import annotations

from coworkenv.servers.kit import Change, SensitiveContext, SensitiveKind, company_domains, deletes, outside


def _publication(ctx: SensitiveContext, feed_id: str) -> dict[str, object] | None:
    feed = next((f for f in ctx.rows("feeds") if f["id"] == feed_id), None)
    return dict(feed) if feed is not None and feed.get("kind") == "publication" else None


def public_post(change: Change, ctx: SensitiveContext) -> str | None:
    """``public_post:<feed id>``: a post published to a public publication."""
    feed = _publication(ctx, str(change.record["feed_id"]))
    return f"public_post:{change.record['feed_id']}" if feed is not None and feed.get("public") else None


def external_recipients(change: Change, ctx: SensitiveContext) -> str | None:
    """``external_recipients:<addresses>``: a post mailed to addresses outside the company (sorted, joined by ',')."""
    found = outside(change.record.get("recipients") or (), company_domains(ctx, "feeds", "owner"))
    return f"external_recipients:{','.join(found)}" if found else None


SENSITIVE: tuple[SensitiveKind, ...] = (
    SensitiveKind("public_post", "articles", ("create",), "a post published where anyone reads it", public_post),
    SensitiveKind(
        "external_recipients", "articles", ("create",), "a post mailed outside the company", external_recipients
    ),
    *deletes("feeds", "articles"),
)
