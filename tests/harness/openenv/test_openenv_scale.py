"""512 sessions at once on a real ``coworkenv openenv serve`` (127.0.0.1): each in a workspace of its own (each
creates a ticket and finds only its own, under the same fresh id), every session freed when its socket closes, and
the server's memory no larger after a second round of 512 than after the first. Bounded in time."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

pytest.importorskip("websockets")

from coworkenv.harness.openenv.client import AsyncOpenEnvSession
from tests.harness.openenv.plays import EXAMPLES, served

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
SESSIONS = 512
TASK_ID = "tickets-triage-new-urgent"


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with served(EXAMPLES / f"{TASK_ID}.json", "--max-sessions", str(SESSIONS)) as url:
        yield url


async def one_session(url: str, n: int, all_open: anyio.Event, opened: list[int], seen: dict[int, dict]) -> None:
    async with AsyncOpenEnvSession(url) as session:
        await session.reset(task_id=TASK_ID)
        opened.append(n)
        if len(opened) == SESSIONS:
            all_open.set()
        await all_open.wait()  # every session is open before any writes
        arguments = {"subject": f"mark {n}", "description": f"made by session {n}", "requester_id": "usr_omar"}
        made = (await session.call_tool("tickets__create_ticket", arguments))["observation"]["result"]["data"]
        found = await session.call_tool("tickets__search_tickets", {"query": "mark"})
        ended = await session.call_tool("reply", {"text": "Done."})
        seen[n] = {"id": made["id"], "found": found["observation"]["result"]["data"], "done": ended["done"]}


async def round_of(url: str) -> dict[int, dict]:
    seen: dict[int, dict] = {}
    opened: list[int] = []
    all_open = anyio.Event()
    with anyio.fail_after(120):
        async with anyio.create_task_group() as group:
            for n in range(SESSIONS):
                group.start_soon(one_session, url, n, all_open, opened, seen)
    return seen


def server_rss_kib(url: str) -> tuple[int, int]:
    import httpx

    health = httpx.get(f"{url}/health", timeout=10).json()
    return health["sessions"], health["rss_kib"]


def test_512_sessions_at_once_keep_their_own_state_and_free_it_when_they_close(server: str) -> None:
    first = anyio.run(round_of, server)
    sessions, after_first = server_rss_kib(server)
    assert sessions == 0
    second = anyio.run(round_of, server)
    sessions, after_second = server_rss_kib(server)
    assert sessions == 0
    for seen in (first, second):
        assert len(seen) == SESSIONS and all(s["done"] for s in seen.values())
        assert len({s["id"] for s in seen.values()}) == 1  # each workspace made the same first new ticket
        for n, s in seen.items():
            subjects = [t["subject"] for t in s["found"]["items"]]
            assert subjects == [f"mark {n}"], subjects  # its own ticket and no other session's
    assert after_second - after_first < 32 * 1024, (after_first, after_second)  # KiB: no growth after closing


def test_the_server_refuses_a_session_past_its_maximum_and_serves_again_once_one_closes(tmp_path: Path) -> None:
    from coworkenv.harness.openenv.client import OpenEnvError

    async def go(url: str) -> None:
        async with AsyncOpenEnvSession(url) as held:
            await held.reset(task_id=TASK_ID)
            async with AsyncOpenEnvSession(url) as refused:
                with pytest.raises(OpenEnvError) as caught:
                    await refused.reset(task_id=TASK_ID)
            assert caught.value.code == "CAPACITY_REACHED"
        for _ in range(100):  # the server frees the held session as its socket closes: a moment after
            async with AsyncOpenEnvSession(url) as later:
                try:
                    assert (await later.reset(task_id=TASK_ID))["done"] is False
                    return
                except OpenEnvError:
                    await anyio.sleep(0.02)
        raise AssertionError("the server never took a session again")

    with served(EXAMPLES / f"{TASK_ID}.json", "--max-sessions", "1") as url:
        anyio.run(go, url)
