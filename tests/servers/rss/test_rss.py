"""The rss service, through the in-memory MCP client: every tool, its error cases, and its sensitive kinds."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from coworkenv.servers.kit import SeedError, parse_seed
from coworkenv.servers.rss import SERVICE
from coworkenv.servers.testing import check_service
from tests.conftest import NOW, error_text, ok, service_client
from tests.servers.checks import assert_described, assert_doors_agree, sensitive_keys

pytestmark = pytest.mark.anyio
SEED: dict[str, Any] = json.loads((Path(__file__).parents[3] / "servers/examples/rss.json").read_text())
POST = {"feed_id": "FEED-9", "title": "Brightwave Weekly #9", "content": "Kubernetes 1.36 and the Helix v3 switch."}


def ids(page: dict[str, Any]) -> list[str]:
    return [r["id"] for r in page["items"]]


async def test_feeds_list_by_title_with_article_and_unread_counts() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        page = ok(await c.call_tool("list_feeds", {}))
        assert page["total"] == 7 and page["items"][0]["title"] == "Brightwave Engineering Blog"
        devops = next(f for f in page["items"] if f["id"] == "FEED-2")
        assert (devops["article_count"], devops["unread_count"]) == (3, 2)
        assert ids(ok(await c.call_tool("list_feeds", {"kind": "publication"}))) == ["FEED-8", "FEED-9"]
        assert ids(ok(await c.call_tool("list_feeds", {"category": "Supply_Chain"}))) == ["FEED-3"]
        assert ok(await c.call_tool("get_feed", {"feed_id": "FEED-8"}))["public"] is True
        assert "list_feeds" in error_text(await c.call_tool("get_feed", {"feed_id": "FEED-77"}))


async def test_articles_list_newest_first_without_their_content() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        page = ok(await c.call_tool("list_articles", {"page_size": 3}))
        assert ids(page) == ["RSS-109", "RSS-104", "RSS-110"] and page["total"] == 12
        assert "content" not in page["items"][0] and page["items"][0]["source"] == "Celebrity Buzz"
        rest = ok(await c.call_tool("list_articles", {"page_size": 100, "page_token": page["next_page_token"]}))
        assert len(rest["items"]) == 9 and rest["next_page_token"] is None


async def test_articles_filter_by_feed_source_category_tag_text_read_starred_and_time() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        assert ids(ok(await c.call_tool("list_articles", {"feed_id": "FEED-3"}))) == ["RSS-106", "RSS-107"]
        assert ids(ok(await c.call_tool("list_articles", {"source": "devops", "unread_only": True}))) == [
            "RSS-104",
            "RSS-103",
        ]
        assert ids(ok(await c.call_tool("list_articles", {"category": "COMPLIANCE"}))) == ["RSS-108"]
        assert ids(ok(await c.call_tool("list_articles", {"tag": "security"}))) == ["RSS-108", "RSS-105"]
        assert ids(ok(await c.call_tool("list_articles", {"query": "helix"}))) == ["RSS-107"]
        assert ids(ok(await c.call_tool("list_articles", {"starred": True}))) == ["RSS-102", "RSS-105"]
        window = {"published_after": "2026-02-27T00:00:00Z", "published_before": "2026-02-28T00:00:00Z"}
        assert ids(ok(await c.call_tool("list_articles", window))) == ["RSS-108", "RSS-103"]


async def test_get_article_reads_the_content_and_leaves_it_unread() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        before = env.state_hash()
        article = ok(await c.call_tool("get_article", {"article_id": "RSS-104"}))
        assert "re-enable" in article["content"] and article["source"] == "DevOps Digest"
        assert article["is_read"] is False and env.state_hash() == before
        assert "list_articles" in error_text(await c.call_tool("get_article", {"article_id": "RSS-999"}))


async def test_mark_read_and_star_keep_track_and_return_the_articles() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        marked = ok(await c.call_tool("mark_read", {"article_ids": ["RSS-103", "RSS-104", "RSS-103"]}))
        assert [(a["id"], a["is_read"]) for a in marked["items"]] == [("RSS-103", True), ("RSS-104", True)]
        assert ok(await c.call_tool("get_feed", {"feed_id": "FEED-2"}))["unread_count"] == 0
        again = ok(await c.call_tool("mark_read", {"article_ids": ["RSS-103"], "read": False}))
        assert again["items"][0]["is_read"] is False
        assert "RSS-0" in error_text(await c.call_tool("mark_read", {"article_ids": ["RSS-103", "RSS-0"]}))
        assert "article_ids" in error_text(await c.call_tool("mark_read", {"article_ids": []}))
        assert ok(await c.call_tool("star_article", {"article_id": "RSS-106"}))["starred"] is True
        assert ok(await c.call_tool("star_article", {"article_id": "RSS-106", "starred": False}))["starred"] is False


async def test_subscribing_adds_a_feed_once_and_unsubscribing_takes_its_articles() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        feed = ok(
            await c.call_tool(
                "subscribe_feed",
                {"url": "https://cloudsec.example.com/rss", "title": "Cloud Security", "category": "security"},
            )
        )
        assert (feed["kind"], feed["article_count"], feed["created_at"], feed["id"][:5]) == (
            "subscription",
            0,
            NOW,
            "FEED-",
        )
        assert "FEED-2" in error_text(
            await c.call_tool("subscribe_feed", {"url": "https://devopsdigest.example.com/feed", "title": "Again"})
        )
        assert "url" in error_text(await c.call_tool("subscribe_feed", {"url": "not a url", "title": "x"}))
        gone = ok(await c.call_tool("unsubscribe_feed", {"feed_id": "FEED-5"}))
        assert gone == {"id": "FEED-5", "deleted": True, "articles_removed": 2}
        assert len(env.dump()["rss"]["articles"]) == 10
        assert "one of our publications" in error_text(await c.call_tool("unsubscribe_feed", {"feed_id": "FEED-8"}))


async def test_publishing_posts_to_one_of_our_publications_and_mails_it() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        post = ok(
            await c.call_tool("publish_article", POST | {"recipients": ["Staff@brightwave.io"], "tags": ["b", "a"]})
        )
        assert (post["published_at"], post["source"], post["recipients"], post["tags"]) == (
            NOW,
            "Brightwave Weekly (internal)",
            ["staff@brightwave.io"],
            ["a", "b"],
        )
        assert (post["author"], post["category"], post["word_count"], post["id"][:4]) == ("me", "company", 7, "RSS-")
        assert ids(ok(await c.call_tool("list_articles", {"feed_id": "FEED-9"})))[0] == post["id"]


async def test_publishing_refuses_a_feed_we_follow_and_a_bad_recipient() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        before = env.state_hash()
        text = error_text(await c.call_tool("publish_article", POST | {"feed_id": "FEED-2"}))
        assert "not one of ours" in text and "FEED-8 (Brightwave Engineering Blog)" in text
        assert "not an email address" in error_text(
            await c.call_tool("publish_article", POST | {"recipients": ["team"]})
        )
        assert "content" in error_text(await c.call_tool("publish_article", POST | {"content": ""}))
        assert env.state_hash() == before


def test_a_seed_with_a_public_subscription_or_a_feed_twice_is_refused_naming_the_record() -> None:
    seed = copy.deepcopy(SEED)
    seed["feeds"][0]["public"] = True
    with pytest.raises(SeedError, match=r"rss.feeds\[0\] field 'kind'"):
        parse_seed(SERVICE, seed)
    seed = copy.deepcopy(SEED)
    seed["feeds"][1]["url"] = seed["feeds"][0]["url"]
    with pytest.raises(SeedError, match=r"rss.feeds\[1\] field 'url'"):
        parse_seed(SERVICE, seed)


async def test_public_posts_outside_recipients_and_unsubscribing_are_sensitive() -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        (
            "publish_article",
            POST | {"feed_id": "FEED-8", "recipients": ["jamie.lee@northwind.com", "dana@brightwave.io"]},
        ),
        ("unsubscribe_feed", {"feed_id": "FEED-5"}),
    ]
    assert await sensitive_keys(SERVICE, SEED, calls) == {
        "public_post:FEED-8",
        "external_recipients:jamie.lee@northwind.com",
        "delete:feeds:FEED-5",
        "delete:articles:RSS-109",
        "delete:articles:RSS-110",
    }


async def test_internal_posts_reading_and_subscribing_are_not_sensitive() -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("publish_article", POST | {"recipients": ["staff@brightwave.io"]}),
        ("mark_read", {"article_ids": ["RSS-103"]}),
        ("star_article", {"article_id": "RSS-104"}),
        ("subscribe_feed", {"url": "https://cloudsec.example.com/rss", "title": "Cloud Security"}),
    ]
    assert await sensitive_keys(SERVICE, SEED, calls) == set()


async def test_both_doors_give_the_same_answers_audit_rows_and_state() -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("list_articles", {"unread_only": True}),
        ("mark_read", {"article_ids": ["RSS-104"]}),
        ("unsubscribe_feed", {"feed_id": "FEED-9"}),
        ("get_article", {}),
        ("no_such_tool", {}),
        ("publish_article", POST),
    ]
    outcomes = await assert_doors_agree(SERVICE, SEED, calls)
    assert outcomes == ["ok", "ok", "error", "invalid_arguments", "unknown_tool", "ok"]


def test_the_service_is_described_for_task_authors() -> None:
    assert_described(SERVICE)


def test_the_service_toolkit_finds_nothing_wrong_with_it() -> None:
    check_service(SERVICE, SEED, stdio=False)  # stdio is tests/servers/kit/test_transports.py's, from `coworkenv serve`
