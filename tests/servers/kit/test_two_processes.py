"""One database file served by two processes at once: writers wait for each other instead of failing with
"database is locked", and every call has its audit row."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import pytest
from mcp import Client

from coworkenv.servers import get_service
from coworkenv.servers.kit import ServiceState

EXAMPLES = Path(__file__).parents[3] / "servers/examples"
NOW = "2026-03-02T09:00:00Z"


def seeded(tmp_path: Path) -> Path:
    db = tmp_path / "tickets.db"
    ServiceState.open(get_service("tickets"), json.loads((EXAMPLES / "tickets.json").read_text()), NOW, db).close()
    return db


def integrity(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


def test_many_connections_writing_one_file_at_once_all_succeed_and_are_all_audited(tmp_path: Path) -> None:
    db = seeded(tmp_path)
    threads, calls = 8, 40
    outcomes: list[str] = []
    failures: list[BaseException] = []
    start = threading.Barrier(threads)

    def work(n: int) -> None:
        state = ServiceState.open(get_service("tickets"), path=db)
        try:
            start.wait(timeout=30)
            for i in range(calls):
                if i % 2:
                    result = state.call_now("get_ticket", {"ticket_id": "tkt_1002"})
                else:
                    result = state.call_now("add_comment", {"ticket_id": "tkt_1002", "body": f"t{n} c{i}"})
                outcomes.append(result.outcome)
        except BaseException as exc:
            failures.append(exc)
        finally:
            state.close()

    workers = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join(timeout=120)
    assert not failures, failures
    assert outcomes == ["ok"] * threads * calls
    state = ServiceState.open(get_service("tickets"), path=db)
    try:
        assert len(state.audit()) == threads * calls
        assert [r.seq for r in state.audit()] == list(range(1, threads * calls + 1))
    finally:
        state.close()
    assert integrity(db) == "ok"


async def start_http(db: Path) -> tuple[subprocess.Popen[str], str]:
    cmd = [sys.executable, "-m", "coworkenv.servers", "serve", "tickets", "--db", str(db), "--transport", "http"]
    proc = subprocess.Popen([*cmd, "--port", "0"], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert proc.stderr is not None
    line = await anyio.to_thread.run_sync(proc.stderr.readline)
    assert "http://127.0.0.1:" in line, line
    return proc, line.strip().rsplit(" ", 1)[-1]


@pytest.mark.anyio
async def test_two_http_servers_on_one_file_answer_32_concurrent_clients_with_no_lock_errors(tmp_path: Path) -> None:
    db = seeded(tmp_path)
    clients, calls = 32, 8
    procs: list[subprocess.Popen[str]] = []
    server_urls: list[str] = []
    errors: list[str] = []
    done = 0
    try:
        with anyio.fail_after(60):
            for _ in range(2):
                proc, url = await start_http(db)
                procs.append(proc)
                server_urls.append(url)

        async def client(n: int, url: str) -> None:
            nonlocal done
            async with Client(url) as session:
                for i in range(calls):
                    if i % 2:
                        res = await session.call_tool("get_ticket", {"ticket_id": "tkt_1002"})
                    else:
                        res = await session.call_tool("add_comment", {"ticket_id": "tkt_1002", "body": f"{n}/{i}"})
                    if res.is_error:
                        errors.append(str(res.content))
                    done += 1

        with anyio.fail_after(240):
            async with anyio.create_task_group() as tg:
                for n in range(clients):
                    tg.start_soon(client, n, server_urls[n % 2])
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=10)
    assert errors == []
    assert done == clients * calls
    state = ServiceState.open(get_service("tickets"), path=db)
    try:
        rows = state.audit()
        assert len(rows) == clients * calls
        assert all(r.outcome == "ok" for r in rows)
        comments = [c for c in state.dump()["comments"] if c["ticket_id"] == "tkt_1002"]
        assert len({c["id"] for c in comments if c["body"].count("/") == 1}) == clients * calls // 2
    finally:
        state.close()
    assert integrity(db) == "ok"
