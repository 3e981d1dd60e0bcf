"""Real transports: each service over stdio in a subprocess, streamable HTTP, and a kill mid-stream."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from coworkenv.servers import get_service
from coworkenv.servers.kit import ServiceState
from coworkenv.servers.registry import SHIPPED

pytestmark = pytest.mark.anyio
EXAMPLES = Path(__file__).parents[3] / "servers/examples"


def serve_params(service: str, db: Path, *extra: str) -> StdioServerParameters:
    args = ["-m", "coworkenv.servers", "serve", service, "--db", str(db), *extra]
    return StdioServerParameters(command=sys.executable, args=args, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def first_argless_read_tool(service: str) -> str:
    for spec in get_service(service).tools:
        if spec.read_only and not spec.input_schema().get("required"):
            return spec.name
    raise AssertionError(f"{service} has no read-only tool without required arguments")


@pytest.mark.parametrize("service", SHIPPED)
async def test_each_service_answers_the_official_client_over_stdio_and_audits_every_call(
    service: str, tmp_path: Path
) -> None:
    db = tmp_path / f"{service}.db"
    seed = EXAMPLES / f"{service}.json"
    with anyio.fail_after(30):
        async with Client(serve_params(service, db, "--seed", str(seed), "--now", "2026-03-02T09:00:00Z")) as client:
            listed = await client.list_tools()
            assert sorted(t.name for t in listed.tools) == sorted(s.name for s in get_service(service).tools)
            assert all(t.annotations is not None and t.input_schema.get("type") == "object" for t in listed.tools)
            good = await client.call_tool(first_argless_read_tool(service), {})
            assert not good.is_error and good.structured_content is not None
            bad = await client.call_tool("no_such_tool", {})
            assert bad.is_error
    state = ServiceState.open(get_service(service), path=db)
    try:
        assert [r.outcome for r in state.audit()] == ["ok", "unknown_tool"]
    finally:
        state.close()
    out = subprocess.run(
        [sys.executable, "-m", "coworkenv.servers", "audit", service, "--db", str(db)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert [json.loads(line)["tool"] for line in out.stdout.splitlines()] == [
        first_argless_read_tool(service),
        "no_such_tool",
    ]


async def test_streamable_http_serves_the_same_tools_and_audit(tmp_path: Path) -> None:
    db = tmp_path / "tickets.db"
    cmd = [
        sys.executable,
        "-m",
        "coworkenv.servers",
        "serve",
        "tickets",
        "--db",
        str(db),
        "--seed",
        str(EXAMPLES / "tickets.json"),
        "--transport",
        "http",
        "--port",
        "0",
    ]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        assert proc.stderr is not None
        line = await anyio.to_thread.run_sync(proc.stderr.readline)
        assert "http://127.0.0.1:" in line, line
        url = line.strip().rsplit(" ", 1)[-1]
        with anyio.fail_after(30):
            async with Client(url) as client:
                assert len((await client.list_tools()).tools) == len(get_service("tickets").tools)
                res = await client.call_tool("escalate_ticket", {"ticket_id": "tkt_1002", "reason": "enterprise"})
                assert not res.is_error and res.structured_content is not None
                assert res.structured_content["escalated"] is True
                assert (await client.call_tool("get_ticket", {"ticket_id": "nope"})).is_error
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    state = ServiceState.open(get_service("tickets"), path=db)
    try:
        assert [(r.tool, r.outcome) for r in state.audit()] == [("escalate_ticket", "ok"), ("get_ticket", "error")]
    finally:
        state.close()


def _pids_serving(db: Path) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if str(db).encode() in cmdline and b"serve" in cmdline:
                pids.append(int(entry.name))
    return pids


async def test_killing_serve_mid_stream_leaves_a_clean_database_where_every_change_has_its_audit_row(
    tmp_path: Path,
) -> None:
    db = tmp_path / "tickets.db"
    done: list[dict[str, Any]] = []
    with anyio.fail_after(60):
        try:
            async with Client(serve_params("tickets", db, "--seed", str(EXAMPLES / "tickets.json"))) as client:
                for i in range(400):
                    res = await client.call_tool("add_comment", {"ticket_id": "tkt_1002", "body": f"c{i}"})
                    assert res.structured_content is not None
                    done.append(res.structured_content)
                    if i == 150:
                        for pid in _pids_serving(db):
                            os.kill(pid, signal.SIGKILL)
        except Exception:  # the connection dies with the server, as it should
            pass
    assert 150 <= len(done) < 400
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    state = ServiceState.open(get_service("tickets"), path=db)
    try:
        comments = [c for c in state.dump()["comments"] if c["ticket_id"] == "tkt_1002"]
        audited = {r.result["id"] for r in state.audit() if r.outcome == "ok" and r.state_changed and r.result}
        assert {c["id"] for c in comments} == audited
        assert {d["id"] for d in done} <= audited
    finally:
        state.close()
