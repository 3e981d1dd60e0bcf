"""The quick stdio start-up answers initialize and tools/list from the server's own recorded answers, then hands
every other message to the server, in order; the record never outlives the code or the options it was made for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from coworkenv.servers.kit import ServiceState
from coworkenv.servers.quick import cache_key, read_record, shipped
from coworkenv.servers.registry import get_service

EXAMPLES = Path(__file__).resolve().parents[2] / "servers" / "examples"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
CALL = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "search_tickets", "arguments": {}}}


def _spawn(module: str, db: Path, cache: Path, messages: list[dict[str, Any]], service: str = "tickets") -> list[Any]:
    """Send every message at once (a client that does not wait), read one answer per request, then close stdin."""
    seed = EXAMPLES / f"{service}.json"
    command = [sys.executable, "-m", module, "serve", service, "--db", str(db), "--seed", str(seed)]
    env = {**os.environ, "COWORKENV_STDIO_CACHE": str(cache)}
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages).encode())
        proc.stdin.flush()
        answers = [json.loads(proc.stdout.readline() or b"null") for m in messages if "id" in m]
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
    assert None not in answers, proc.stderr.read().decode()[-2000:] if proc.stderr else ""
    return sorted(answers, key=lambda a: str(a.get("id")))


@pytest.mark.timeout(180)
def test_a_second_start_answers_from_the_record_exactly_as_the_server_does(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    plain = _spawn("coworkenv.servers", tmp_path / "a.db", cache, [INIT, INITIALIZED, LIST, CALL])
    first = _spawn("coworkenv.servers.quick", tmp_path / "b.db", cache, [INIT, INITIALIZED, LIST, CALL])
    assert {version for record in cache.iterdir() for version in read_record(record)} == {"2025-06-18"}
    second = _spawn("coworkenv.servers.quick", tmp_path / "c.db", cache, [INIT, INITIALIZED, LIST, CALL])
    assert [a["id"] for a in second] == [1, 2, 3]
    assert plain == first == second
    state = ServiceState.open(get_service("tickets"), path=tmp_path / "c.db", create=False)
    try:
        assert [row.tool for row in state.audit()] == ["search_tickets"]  # the replayed initialize left no trace
    finally:
        state.close()


@pytest.mark.timeout(180)
def test_a_protocol_version_not_recorded_is_answered_by_the_server(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _spawn("coworkenv.servers.quick", tmp_path / "a.db", cache, [INIT, INITIALIZED, LIST])
    older = {**INIT, "params": {**INIT["params"], "protocolVersion": "2025-03-26"}}  # type: ignore[dict-item]
    answers = _spawn("coworkenv.servers.quick", tmp_path / "b.db", cache, [older, INITIALIZED, LIST])
    assert answers[0]["result"]["protocolVersion"] == "2025-03-26"
    assert answers[1]["result"]["tools"]
    recorded = {version for record in cache.iterdir() for version in read_record(record)}
    assert recorded == {"2025-06-18", "2025-03-26"}


@pytest.mark.timeout(180)
def test_an_unreadable_record_costs_only_the_speed(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _spawn("coworkenv.servers.quick", tmp_path / "a.db", cache, [INIT, INITIALIZED, LIST])
    for record in cache.iterdir():
        record.write_text("{not json", encoding="utf-8")
    answers = _spawn("coworkenv.servers.quick", tmp_path / "b.db", cache, [INIT, INITIALIZED, LIST, CALL])
    assert [a["id"] for a in answers] == [1, 2, 3] and all("result" in a for a in answers)
    assert any(read_record(record) for record in cache.iterdir())  # written again, whole


def test_the_record_key_follows_the_options_that_shape_the_answers_not_the_state() -> None:
    base = cache_key(["tickets", "--db", "/a.db", "--seed", "s.json", "--now", "2026-03-02T09:00:00Z"])
    assert base == cache_key(["tickets", "--db=/b.db", "--reset"])
    assert base != cache_key(["crm", "--db", "/a.db"])
    assert base != cache_key(["tickets", "--db", "/a.db", "--transport", "stdio"])


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_the_sdk_client_works_through_a_cold_and_a_warm_quick_start(tmp_path: Path) -> None:
    env = {**os.environ, "COWORKENV_STDIO_CACHE": str(tmp_path / "cache")}
    for n in range(2):
        args = ["-m", "coworkenv.servers.quick", "serve", "tickets", "--db", str(tmp_path / f"{n}.db")]
        args += ["--seed", str(EXAMPLES / "tickets.json")]
        with anyio.fail_after(60):
            async with Client(StdioServerParameters(command=sys.executable, args=args, env=env)) as client:
                listed = {t.name for t in (await client.list_tools()).tools}
                assert listed == {t.name for t in get_service("tickets").tools}
                result = await client.call_tool("search_tickets", {})
                assert not result.is_error


def test_a_declared_tools_file_is_part_of_the_record_key(tmp_path: Path) -> None:
    declared = tmp_path / "declared.json"
    declared.write_text('[{"name": "todo_list_tasks"}]', encoding="utf-8")
    args = ["todo", "--profile", "claw-eval:todo", "--declared", f"@{declared}"]
    before = cache_key(args)
    declared.write_text('[{"name": "todo_update_task"}]', encoding="utf-8")
    assert cache_key(args) != before


@pytest.mark.timeout(120)
def test_a_server_that_cannot_start_is_not_answered_from_the_record(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _spawn("coworkenv.servers.quick", tmp_path / "a.db", cache, [INIT, INITIALIZED, LIST])
    command = [sys.executable, "-m", "coworkenv.servers.quick", "serve", "tickets", "--db", str(tmp_path / "b.db")]
    command += ["--seed", str(tmp_path / "no-such-seed.json")]
    env = {**os.environ, "COWORKENV_STDIO_CACHE": str(cache)}
    done = subprocess.run(command, input=json.dumps(INIT) + "\n", capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode != 0 and done.stdout == "", "no initialize answered for a server that never runs"
    assert "no-such-seed.json" in done.stderr.strip().splitlines()[-1]


def test_only_shipped_services_are_answered_from_a_record() -> None:
    assert shipped("tickets") and shipped("todo")
    assert not shipped("bookmarks") and not shipped("template"), "a plugin's code is not in the stamp"
