"""Pooled connections: a closed environment's connection serves the next image of the same layout with its
compiled statements kept, holds nothing of the environment before, and never serves another layout."""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from coworkenv.servers.kit import Environment, images
from coworkenv.servers.kit.images import IMAGES, POOL, POOL_PER_LAYOUT
from coworkenv.servers.kit.seed import BULK_INDEX_ROWS

EXAMPLES = Path(__file__).parents[3] / "servers/examples"


def example(service: str) -> dict[str, Any]:
    return dict(json.loads((EXAMPLES / f"{service}.json").read_text()))


SEED = example("tickets")


def big_seed() -> dict[str, Any]:
    """The example plus enough tickets that the table's indexes are built after its rows (another layout)."""
    seed = copy.deepcopy(SEED)
    base = seed["tickets"][0]
    seed["tickets"] += [{**base, "id": f"tkt_{5000 + n}", "subject": f"Bulk {n}"} for n in range(BULK_INDEX_ROWS)]
    return seed


@pytest.fixture(autouse=True)
def empty_pool() -> Iterator[None]:
    IMAGES.clear()
    POOL.clear()
    yield
    POOL.clear()


def test_the_next_environment_of_a_seed_reuses_the_closed_ones_connection_and_sees_only_its_seed() -> None:
    first = Environment.create({"tickets": SEED})
    fresh = first.dump()
    conn = first.state("tickets").conn
    for n in range(200):  # enough writes to allocate pages: the root pages stay where they were
        first.state("tickets").call_now("add_comment", {"ticket_id": "tkt_1001", "body": f"Left behind {n}?" * 20})
    assert images.layout_of(conn) == first.state("tickets").layout
    first.close()
    assert len(POOL) == 1
    with Environment.create({"tickets": SEED}) as second:
        assert second.state("tickets").conn is conn
        assert second.dump() == fresh
        assert second.audit() == []


def test_small_seeds_of_a_service_share_a_layout_and_a_big_table_makes_another() -> None:
    changed = copy.deepcopy(SEED)
    changed["tickets"][0]["subject"] = "Another subject"
    with Environment.create({"tickets": SEED}) as a, Environment.create({"tickets": changed}) as b:
        assert a.state("tickets").layout is not None
        assert a.state("tickets").layout == b.state("tickets").layout
        with Environment.create({"tickets": big_seed()}) as big:
            assert big.state("tickets").layout not in (None, a.state("tickets").layout)


def test_a_connection_never_serves_an_image_of_another_layout() -> None:
    """A statement compiled for other root pages would read the wrong table: each layout keeps its own."""
    big = big_seed()
    for _ in range(3):
        with Environment.create({"tickets": big}) as env:
            assert env.state("tickets").call_now("get_ticket", {"ticket_id": "tkt_5007"}).data["subject"] == "Bulk 7"
            users = env.state("tickets").call_now("search_users", {"query": "Omar"}).data
        with Environment.create({"tickets": SEED}) as env:
            assert env.state("tickets").call_now("get_ticket", {"ticket_id": "tkt_5007"}).outcome == "error"
            assert env.state("tickets").call_now("search_users", {"query": "Omar"}).data == users
            assert (
                env.state("tickets").call_now("get_ticket", {"ticket_id": "tkt_1001"}).data["subject"]
                == (SEED["tickets"][0]["subject"])
            )


CALLS = [  # tools whose queries test JSON lists (labels, members, shares, attendees, tags)
    ("email", "search_messages", {"label_ids": ["INBOX"]}),
    ("email", "search_messages", {"to_address": "@"}),
    ("chat", "list_channels", {}),
    ("files", "search_files", {"query": ""}),
    ("docs", "search_documents", {"query": ""}),
    ("calendar", "list_calendars", {}),
    ("calendar", "list_events", {"calendar_id": "primary"}),
    ("tickets", "search_tickets", {"tag": "sso"}),
]


@pytest.mark.parametrize(("service", "tool", "args"), CALLS, ids=[f"{s}.{t}" for s, t, _ in CALLS])
def test_json_list_filters_answer_the_same_on_a_reused_connection(
    service: str, tool: str, args: dict[str, Any]
) -> None:
    answers = []
    for _ in range(4):
        with Environment.create({service: example(service)}) as env:
            answers.append(env.state(service).call_now(tool, args).data)
    assert len(POOL) == 1
    assert answers[0] is not None and all(a == answers[0] for a in answers)


def test_a_state_closed_inside_an_open_mark_is_not_pooled() -> None:
    env = Environment.create({"tickets": SEED})
    env.mark()
    env.close()
    assert len(POOL) == 0


def test_the_pool_keeps_a_few_connections_a_layout() -> None:
    envs = [Environment.create({"tickets": SEED}) for _ in range(POOL_PER_LAYOUT + 3)]
    for env in envs:
        env.close()
    assert len(POOL) == POOL_PER_LAYOUT


def test_the_pool_keeps_a_bounded_number_in_all_giving_up_the_least_recently_used_layout_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(images, "POOL_MAX_IDLE", 2)
    small = Environment.create({"tickets": SEED})
    conn = small.state("tickets").conn
    small.close()
    big = [Environment.create({"tickets": big_seed()}) for _ in range(2)]
    for env in big:
        env.close()
    assert len(POOL) == 2
    with Environment.create({"tickets": SEED}) as again:
        assert again.state("tickets").conn is not conn  # closed to make room


def test_environments_made_and_closed_in_many_threads_each_see_only_their_own_seed() -> None:
    from concurrent.futures import ThreadPoolExecutor

    def worker(n: int) -> list[str]:
        seed = copy.deepcopy(SEED)
        seed["tickets"][0]["subject"] = f"Thread {n}"
        seen = []
        for _ in range(25):
            with Environment.create({"tickets": seed}) as env:
                state = env.state("tickets")
                state.call_now("add_comment", {"ticket_id": "tkt_1001", "body": f"from {n}"})
                seen.append(state.call_now("get_ticket", {"ticket_id": "tkt_1001"}).data["subject"])
                assert [r.arguments["body"] for r in env.audit() if r.tool == "add_comment"] == [f"from {n}"]
        return seen

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(worker, range(4)))
    assert results == [[f"Thread {n}"] * 25 for n in range(4)]


def test_the_pool_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(images, "POOL_PER_LAYOUT", 0)
    Environment.create({"tickets": SEED}).close()
    assert len(POOL) == 0


@pytest.mark.parametrize(("text", "count"), [("", 4), ("0", 0), ("9", 9), (" 2 ", 2)])
def test_the_pool_size_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch, text: str, count: int) -> None:
    monkeypatch.setenv("COWORKENV_CONNECTION_POOL", text)
    assert images._count_from_env("COWORKENV_CONNECTION_POOL", 4) == count


@pytest.mark.parametrize(
    ("text", "count", "said"),
    [("many", 4, "is not a whole number: using 4"), ("2.5", 4, "not a whole number"), ("-3", 0, "below 0")],
)
def test_a_pool_size_that_is_not_a_count_is_warned_about_and_replaced(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, text: str, count: int, said: str
) -> None:
    monkeypatch.setenv("COWORKENV_CONNECTION_POOL", text)
    with caplog.at_level(logging.WARNING, logger=images.__name__):
        assert images._count_from_env("COWORKENV_CONNECTION_POOL", 4) == count
    assert "COWORKENV_CONNECTION_POOL" in caplog.text and said in caplog.text


@pytest.mark.parametrize(
    ("text", "budget", "said"),
    [
        ("", images.DEFAULT_BUDGET_MB * 2**20, None),
        ("0.5", 2**19, None),
        ("0", 0, None),
        ("lots", images.DEFAULT_BUDGET_MB * 2**20, "not a number of megabytes"),
        ("inf", images.DEFAULT_BUDGET_MB * 2**20, "not a number of megabytes"),
        ("nan", images.DEFAULT_BUDGET_MB * 2**20, "not a number of megabytes"),
        ("-1", 0, "below 0"),
    ],
)
def test_the_seed_cache_budget_is_read_from_the_environment_and_a_bad_one_is_warned_about(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, text: str, budget: int, said: str | None
) -> None:
    monkeypatch.setenv("COWORKENV_SEED_CACHE_MB", text)
    with caplog.at_level(logging.WARNING, logger=images.__name__):
        assert images._budget_from_env() == budget
    if said is None:
        assert caplog.text == ""
    else:
        assert "COWORKENV_SEED_CACHE_MB" in caplog.text and said in caplog.text
