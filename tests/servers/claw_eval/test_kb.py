"""Claw-Eval's kb on our docs service: its articles seed our documents with their ids, search matches as the
mock's does, an update is an edit of our document, and ``/audit`` is rebuilt from our audit rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from coworkenv.servers.claw_eval import profiled
from coworkenv.servers.claw_eval.kb import ENDPOINTS, SERVICE, tokens
from coworkenv.servers.kit import Environment
from coworkenv.servers.registry import get_service
from coworkenv.servers.testing import check_service
from tests.servers.claw_eval.hfnk_twin import audit, call, claw_env, compare_with_mock, needs_claw, real_fixtures

pytestmark = pytest.mark.anyio

ARTICLES: list[dict[str, Any]] = [
    {
        "article_id": "KB-001",
        "title": "VPN 连接故障排查",
        "category": "IT Support",
        "tags": ["vpn", "network"],
        "content": "如果 VPN 连接失败，请先检查网络。" * 10,
        "last_updated": "2026-01-15",
        "views": 120,
    },
    {
        "article_id": "KB-002",
        "title": "Expense policy",
        "category": "Finance",
        "tags": ["expenses"],
        "created_at": "2025-06-15T10:00:00+08:00",
        "content": "Receipts over 500 need approval.",
        "last_updated": "2025-11-20T14:30:00+08:00",
        "author": "Finance team",
        "status": "published",
        "views": 7,
    },
    {
        "article_id": "KB-003",
        "title": "Printer setup",
        "category": "IT Support",
        "tags": [],
        "content": "Add the printer from Settings.",
        "last_updated": "2026-02-20",
        "views": 0,
    },
]
FIXTURES = {"kb": {"articles.json": ARTICLES}}


def test_seeding_keeps_the_article_ids_as_documents_with_the_rest_in_custom_fields() -> None:
    docs = {d["id"]: d for d in SERVICE.seed({"articles.json": ARTICLES})["documents"]}
    assert list(docs) == ["KB-001", "KB-002", "KB-003"]
    assert docs["KB-001"]["custom_fields"] == {
        "category": "IT Support",
        "tags": ["vpn", "network"],
        "last_updated": "2026-01-15",
        "views": 120,
    }
    assert (docs["KB-001"]["created_at"], docs["KB-001"]["updated_at"]) == ("2026-01-15T00:00:00Z",) * 2
    assert (docs["KB-002"]["created_at"], docs["KB-002"]["updated_at"]) == (
        "2025-06-15T02:00:00Z",
        "2025-11-20T06:30:00Z",
    )


def test_search_tokens_are_words_character_pairs_and_chinese_characters() -> None:
    assert tokens("VPN 连接") == {"vpn", "连接", "vp", "pn", "n ", " 连", "连", "接"}
    assert tokens("a") == {"a"} and "  " not in tokens("a  b")


async def test_get_article_returns_each_fixture_article_exactly_and_an_unknown_id_is_an_error_answer() -> None:
    with claw_env(["kb"], FIXTURES) as (env, ours):
        for record in ARTICLES:
            assert await call(env, ours, "kb_get_article", {"article_id": record["article_id"]}) == record
        assert await call(env, ours, "kb_get_article", {"article_id": "KB-9"}) == {"error": "Article KB-9 not found"}


async def test_search_matches_any_shared_token_within_a_category_up_to_max_results() -> None:
    with claw_env(["kb"], FIXTURES) as (env, ours):
        found = await call(env, ours, "kb_search", {"query": "连接"})
        assert [a["article_id"] for a in found["articles"]] == ["KB-001"]
        assert found["articles"][0]["snippet"] == ARTICLES[0]["content"][:150] + "..."
        assert set(found["articles"][0]) == {"article_id", "title", "category", "tags", "last_updated", "views"} | {
            "snippet"
        }
        printer = await call(env, ours, "kb_search", {"query": "printer", "category": "IT Support"})
        assert [a["article_id"] for a in printer["articles"]] == ["KB-003"]
        assert (await call(env, ours, "kb_search", {"query": "e", "max_results": 5}))[
            "total"
        ] == 0  # a lone letter is a word
        assert (await call(env, ours, "kb_search", {"query": "the", "max_results": 1}))["total"] == 1


async def test_update_article_edits_our_document_and_audit_lists_the_update() -> None:
    with claw_env(["kb"], FIXTURES) as (env, ours):
        got = await call(env, ours, "kb_update_article", {"article_id": "KB-003", "content": "Use the new driver."})
        assert got == {"status": "updated", "article_id": "KB-003"}
        article = await call(env, ours, "kb_get_article", {"article_id": "KB-003"})
        assert article == {**ARTICLES[2], "content": "Use the new driver.", "last_updated": "2026-03-02"}
        stored = env.state(ours).tables["documents"].get("KB-003")
        assert stored is not None and (stored["content"], stored["revision"]) == ("Use the new driver.", 2)
        assert [r["number"] for r in env.state(ours).tables["revisions"].dump()] == [1, 2]
        missing = await call(env, ours, "kb_update_article", {"article_id": "KB-404", "content": "x"})
        assert missing == {"error": "Article KB-404 not found"}
        data = audit(SERVICE, env, ours)
        assert data["updates"] == [{"article_id": "KB-003", "timestamp": "2026-03-02T09:00:00+00:00"}]
        endpoints = [c["endpoint"] for c in data["calls"]]
        assert endpoints == ["/kb/articles/update", "/kb/articles/get", "/kb/articles/update"]


def test_the_profiled_service_passes_the_toolkit_s_schema_seed_door_and_fuzz_checks() -> None:
    # "outcomes" is left out: an unknown id is a 200 answer {"error": ...} in Claw-Eval, not a failed call
    check_service(
        profiled(get_service("docs"), ["kb"]),
        SERVICE.seed({"articles.json": ARTICLES}),
        calls=100,
        skip=("outcomes", "stdio"),
    )


@pytest.mark.parametrize(
    ("records", "says"),
    [
        ([{k: v for k, v in ARTICLES[0].items() if k != "views"}], "articles.json record KB-001: lacks views"),
        ([{**ARTICLES[0], "tags": "vpn"}], "articles.json record KB-001: tags must be a list"),
        ([{**ARTICLES[0], "content": None}], "articles.json record KB-001: content must be a text"),
        ([{**ARTICLES[0], "last_updated": "recently"}], "articles.json record KB-001: 'recently' is not an ISO"),
        ([ARTICLES[0], ARTICLES[0]], "articles.json record KB-001: the article_id is given twice"),
    ],
)
def test_a_bad_fixture_is_a_value_error_naming_the_file_and_record(records: Any, says: str) -> None:
    with pytest.raises(ValueError, match="^" + says):
        SERVICE.seed({"articles.json": records})


@needs_claw
async def test_each_tool_answers_as_the_real_mock_does_and_audit_is_the_same(tmp_path: Path) -> None:
    calls = [
        ("kb_search", {"query": "VPN 连接失败"}),
        ("kb_search", {"query": "printer setup", "category": "IT Support"}),
        ("kb_search", {"query": "the", "category": "", "max_results": 1}),
        ("kb_search", {"query": "zz"}),
        ("kb_get_article", {"article_id": "KB-002"}),
        ("kb_get_article", {"article_id": "KB-404"}),
        ("kb_update_article", {"article_id": "KB-001", "content": "新的内容"}),
        ("kb_update_article", {"article_id": "KB-404", "content": "x"}),
        ("kb_get_article", {"article_id": "KB-001"}),
        ("kb_search", {"query": "新的"}),
    ]
    await compare_with_mock(tmp_path, SERVICE, "articles.json", ARTICLES, calls, ENDPOINTS)


@needs_claw
async def test_every_real_task_s_kb_fixtures_seed_our_docs_and_read_and_search_as_the_mock_does(tmp_path: Path) -> None:
    tasks = real_fixtures("kb")
    assert len(tasks) >= 20
    for task, fixtures in tasks:
        seed = SERVICE.seed(fixtures["kb"])
        with Environment.create({"docs": seed}) as env:
            stored = [d["id"] for d in env.state("docs").tables["documents"].dump()]
        ((name, records),) = fixtures["kb"].items()
        assert stored == [r["article_id"] for r in records], task
        searches = [("kb_search", {"query": q, "max_results": 50}) for q in ("VPN", "数据库 故障", "the", "供应商")]
        calls = [*searches, *(("kb_get_article", {"article_id": r["article_id"]}) for r in records)]
        await compare_with_mock(tmp_path / task, SERVICE, name, records, calls, ENDPOINTS)
