"""Claw-Eval's rss tools on our rss service: articles seed with their ids and a feed of ours per source, the tools
answer as its mock does, a newsletter is a post of our publication, and ``/audit`` is rebuilt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from coworkenv.servers.claw_eval import rss
from coworkenv.servers.claw_eval.rss import ENDPOINTS, PUBLICATION, SERVICE
from tests.servers.claw_eval.ops_parity import (
    NOW,
    Mock,
    audit,
    call,
    claw_env,
    fixture_of,
    kit_checks,
    needs_claw_eval,
    real_fixtures,
    replay,
)

ARTICLES: list[dict[str, Any]] = [
    {
        "article_id": "RSS-101",
        "title": "GPT-5 released",
        "source": "Tech Wire",
        "category": "AI",
        "published_at": "2026-02-27T08:00:00Z",
        "summary": "Multimodal gains.",
        "content": "OpenAI released GPT-5 today.",
        "relevance_tags": ["ai", "llm"],
        "word_count": 57,
    },
    {
        "article_id": "RSS-102",
        "title": "Q1 market outlook",
        "source": "Market Trends",
        "category": "Finance",
        "url": "https://markets.example.com/q1",
        "tags": ["outlook"],
        "published_at": "2026-02-26T09:00:00+08:00",
        "summary": "Cautious.",
        "content": "Analysts expect a slow quarter.",
        "word_count": 31,
    },
    {
        "article_id": "RSS-103",
        "title": "Chips in short supply",
        "source": "Tech Wire",
        "category": "Hardware",
        "published_at": "2026-02-25T10:00:00Z",
        "summary": "Lead times grow.",
        "content": "Lead times for GPUs are at 30 weeks.",
        "word_count": 40,
    },
]
FIXTURES = {"articles.json": ARTICLES}


def test_seeding_keeps_article_ids_and_makes_a_feed_per_source_and_the_newsletter() -> None:
    tables = rss.seed(FIXTURES)
    feeds = {f["id"]: (f["title"], f["kind"]) for f in tables["feeds"]}
    assert feeds == {
        "FEED-1": ("Tech Wire", "subscription"),
        "FEED-2": ("Market Trends", "subscription"),
        PUBLICATION: ("Newsletter", "publication"),
    }
    rows = {a["id"]: a for a in tables["articles"]}
    assert [rows[i]["feed_id"] for i in ("RSS-101", "RSS-102", "RSS-103")] == ["FEED-1", "FEED-2", "FEED-1"]
    assert rows["RSS-101"]["custom_fields"]["relevance_tags"] == ["ai", "llm"] and rows["RSS-102"]["tags"] == [
        "outlook"
    ]
    assert rows["RSS-102"]["published_at"] == "2026-02-26T01:00:00Z"


def test_feeds_articles_and_one_article_read_as_the_mock_derives_them() -> None:
    with claw_env(SERVICE, FIXTURES) as env:
        feeds = call(env, SERVICE, "rss_list_feeds")
        assert feeds == {
            "feeds": [
                {"source": "Tech Wire", "categories": ["AI", "Hardware"], "article_count": 2},
                {"source": "Market Trends", "categories": ["Finance"], "article_count": 1},
            ],
            "total": 2,
        }
        listed = call(env, SERVICE, "rss_list_articles", {"source": "Tech Wire", "max_results": 1})
        assert listed["total"] == 1 and listed["articles"][0] == {
            k: ARTICLES[0][k]
            for k in ("article_id", "title", "source", "category", "published_at", "summary", "word_count")
        }
        assert call(env, SERVICE, "rss_get_article", {"article_id": "RSS-102"}) == ARTICLES[1]
        assert call(env, SERVICE, "rss_get_article", {"article_id": "RSS-9"}) == {"error": "Article RSS-9 not found"}


def test_publishing_posts_to_our_newsletter_and_shows_in_the_audit_not_among_the_articles() -> None:
    with claw_env(SERVICE, FIXTURES) as env:
        args = {"title": "AI weekly", "content": "GPT-5 and chips.", "recipients": ["team@example.com"]}
        answer = call(env, SERVICE, "rss_publish", args)
        assert answer == {"status": "published", "record": {**args, "timestamp": NOW}}
        (post,) = [a for a in env.state("rss").dump()["articles"] if a["feed_id"] == PUBLICATION]
        assert (post["title"], post["recipients"], post["published_at"]) == ("AI weekly", ["team@example.com"], NOW)
        assert call(env, SERVICE, "rss_list_articles")["total"] == 3
        assert call(env, SERVICE, "rss_get_article", {"article_id": post["id"]})["error"]
        data = audit(env, SERVICE)
        assert data["published"] == [answer["record"]]
        assert data["calls"][0]["request_body"] == args


def test_get_feed_answers_404_as_the_mock_has_no_such_route() -> None:
    with claw_env(SERVICE, FIXTURES) as env:
        result = env.state("rss").call_now("rss_get_feed", {"feed_id": "FEED-1"})
        assert result.is_error and result.text.startswith("HTTP 404")


def test_an_article_without_an_id_is_refused_naming_file_and_record() -> None:
    with pytest.raises(ValueError, match=r"articles\.json: record 1: its 'article_id'"):
        rss.seed({"articles.json": [ARTICLES[0], {**ARTICLES[1], "article_id": None}]})


def test_the_profile_passes_the_kits_checks_for_descriptions_bounds_doors_and_fuzz() -> None:
    kit_checks(SERVICE, FIXTURES)


CALLS = [
    ("rss_list_feeds", {}),
    ("rss_list_feeds", {"category": "AI"}),
    ("rss_list_articles", {}),
    ("rss_list_articles", {"category": "Finance", "feed_name": "x"}),
    ("rss_list_articles", {"max_results": -1}),
    ("rss_get_article", {"article_id": "RSS-103"}),
    ("rss_get_article", {"article_id": "nope"}),
    ("rss_publish", {"title": "Digest", "content": "Three stories."}),
    ("rss_publish", {"title": "", "content": "x", "recipients": ["a@example.com", "b@example.com"]}),
    ("rss_publish", {"title": "no content"}),
    ("rss_get_feed", {"feed_id": "FEED-1"}),
    ("rss_list_articles", {"source": "Market Trends"}),
]


@needs_claw_eval
def test_every_tool_answers_as_claw_evals_mock_on_the_same_fixtures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixture = tmp_path / "articles.json"
    fixture.write_text(json.dumps(ARTICLES))
    with claw_env(SERVICE, FIXTURES) as env:
        replay(Mock("rss", fixture, monkeypatch), env, SERVICE, ENDPOINTS, CALLS)


@needs_claw_eval
def test_every_real_tasks_rss_fixture_seeds_and_reads_as_the_mock_gives_it(monkeypatch: pytest.MonkeyPatch) -> None:
    found = real_fixtures("rss")
    assert len(found) >= 16
    for _task, path in found:
        fixtures = fixture_of(path)
        ids = [a["article_id"] for a in fixtures[path.name]]
        calls = [("rss_list_feeds", {}), ("rss_list_articles", {"max_results": 100})]
        calls += [("rss_get_article", {"article_id": i}) for i in ids]
        calls += [("rss_publish", {"title": "Brief", "content": "Summary", "recipients": ["team@example.com"]})]
        with claw_env(SERVICE, fixtures) as env:
            replay(Mock("rss", path, monkeypatch), env, SERVICE, ENDPOINTS, calls)
