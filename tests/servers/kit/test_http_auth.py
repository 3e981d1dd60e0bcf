"""Serving beyond loopback: a bearer token on every HTTP request, allowed Host/Origin values, refusal to start
unguarded, and mcp-config's HTTP entries. Real `serve --transport http` subprocesses, real HTTP requests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from coworkenv.servers import get_service
from coworkenv.servers.cli import main
from coworkenv.servers.kit.http_auth import TOKEN_ENV, security_settings, token_problem

EXAMPLES = Path(__file__).parents[3] / "servers/examples"
TOKEN = "tok-3f9a1c77e2b54d0a9e1f"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@contextmanager
def http_server(db: Path, *extra: str, env: dict[str, str] | None = None) -> Iterator[tuple[str, list[str]]]:
    """A `serve tickets --transport http` subprocess on 127.0.0.1 (a free port); yields its URL and, after
    it stops, the lines it wrote on stderr. Readiness is its announcement line, bounded by a watchdog."""
    cmd = [sys.executable, "-m", "coworkenv.servers", "serve", "tickets", "--db", str(db)]
    cmd += ["--seed", str(EXAMPLES / "tickets.json"), "--transport", "http", "--port", "0", *extra]
    full_env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
    full_env.update(env or {})
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=full_env)
    watchdog = threading.Timer(30, proc.kill)
    watchdog.start()
    lines: list[str] = []
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        watchdog.cancel()
        lines.append(line)
        assert "http://127.0.0.1:" in line, line
        yield line.strip().rsplit(" ", 1)[-1], lines
    finally:
        watchdog.cancel()
        proc.terminate()
        try:
            lines.extend(proc.communicate(timeout=10)[1].splitlines())
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One guarded server for the module: the token from COWORKENV_TOKEN, tickets.internal allowed as Host."""
    db = tmp_path_factory.mktemp("http_auth") / "tickets.db"
    with http_server(db, "--allow-host", "tickets.internal", env={TOKEN_ENV: TOKEN}) as (url, _):
        yield url


async def post_initialize(url: str, **headers: str) -> httpx2.Response:
    async with (
        httpx2.AsyncClient(timeout=10) as http,
        http.stream("POST", url, json=INITIALIZE, headers={**MCP_HEADERS, **headers}) as response,
    ):
        if response.status_code != 200:
            await response.aread()
        return response


@pytest.mark.anyio
async def test_requests_without_the_token_or_with_a_wrong_one_are_answered_401(served: str) -> None:
    with anyio.fail_after(30):
        for headers in (
            {},
            {"Authorization": "Bearer wrong-token-wrong-token"},
            {"Authorization": f"Bearer {TOKEN}x"},
            {"Authorization": f"Basic {TOKEN}"},
            {"Authorization": TOKEN},
        ):
            response = await post_initialize(served, **headers)
            assert response.status_code == 401, headers
            assert response.headers["www-authenticate"].startswith("Bearer")
            body = response.json()
            assert body["error"] == "unauthorized" and "Authorization: Bearer" in body["error_description"]
            assert TOKEN not in response.text
        async with httpx2.AsyncClient(timeout=10) as http:
            assert (await http.get(served)).status_code == 401
            assert (await http.delete(served)).status_code == 401


@pytest.mark.anyio
async def test_the_mcp_client_sending_the_bearer_header_lists_the_tools_and_calls_one(served: str) -> None:
    with anyio.fail_after(30):
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=20) as http,
            Client(streamable_http_client(served, http_client=http)) as client,
        ):
            tools = (await client.list_tools()).tools
            assert sorted(t.name for t in tools) == sorted(s.name for s in get_service("tickets").tools)
            result = await client.call_tool("get_ticket", {"ticket_id": "tkt_1002"})
            assert not result.is_error and result.structured_content is not None
            assert result.structured_content["id"] == "tkt_1002"


@pytest.mark.anyio
async def test_a_foreign_host_or_origin_is_refused_even_with_the_token_and_an_allowed_one_is_let_in(
    served: str,
) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with anyio.fail_after(30):
        assert (await post_initialize(served, **auth, Host="evil.example")).status_code == 421
        assert (await post_initialize(served, **auth, Host="evil.example:8000")).status_code == 421
        assert (await post_initialize(served, **auth, Origin="http://evil.example")).status_code == 403
        assert (await post_initialize(served, **auth, Host="tickets.internal:8000")).status_code == 200
        allowed_origin = await post_initialize(served, **auth, Origin="https://tickets.internal")
        assert allowed_origin.status_code == 200
        assert (await post_initialize(served, **auth)).status_code == 200


@pytest.mark.anyio
async def test_a_token_given_with_the_option_guards_loopback_too_and_never_appears_in_the_server_output(
    tmp_path: Path,
) -> None:
    token = "cli-token-0123456789abcdef"
    with http_server(tmp_path / "tickets.db", "--token", token) as (url, lines):
        with anyio.fail_after(30):
            assert (await post_initialize(url)).status_code == 401
            assert (await post_initialize(url, Authorization=f"Bearer {token[:-1]}")).status_code == 401
            assert (await post_initialize(url, Host="evil.example")).status_code == 401
            assert (await post_initialize(url, Authorization=f"Bearer {token}")).status_code == 200
            assert (await post_initialize(url, Authorization=f"bearer {token}")).status_code == 200
    assert lines and all(token not in line for line in lines)


def test_binding_beyond_loopback_without_a_token_refuses_to_start_in_one_line_and_writes_nothing(
    tmp_path: Path,
) -> None:
    db = tmp_path / "sub" / "tickets.db"
    env = {TOKEN_ENV: ""}
    for host in ("0.0.0.0", "10.1.2.3", "::", "example.internal"):
        result = CliRunner().invoke(
            main, ["serve", "tickets", "--db", str(db), "--transport", "http", "--host", host], env=env
        )
        assert result.exit_code != 0
        assert result.output.count("\n") == 1 and result.output.startswith("Error: ")
        assert "needs a bearer token" in result.output and f"--token TOKEN or set {TOKEN_ENV}" in result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
    short = CliRunner().invoke(
        main, ["serve", "tickets", "--db", str(db), "--transport", "http", "--host", "0.0.0.0", "--token", "abc"]
    )
    assert short.exit_code != 0 and short.output.startswith("Error: the token is shorter than 16 characters")
    bad_host = CliRunner().invoke(
        main,
        ["serve", "tickets", "--db", str(db), "--transport", "http", "--host", "0.0.0.0", "--allow-host", "http://x/"],
        env={TOKEN_ENV: TOKEN},
    )
    assert bad_host.exit_code != 0 and bad_host.output.startswith("Error: --allow-host 'http://x/' is not a host")
    assert not db.parent.exists()


def test_loopback_hosts_need_no_token_and_tokens_must_fit_in_a_header() -> None:
    for host in ("127.0.0.1", "::1", "[::1]", "localhost", "LOCALHOST"):
        assert token_problem(host, None) is None
    assert token_problem("0.0.0.0", TOKEN) is None
    assert token_problem("0.0.0.0", None) is not None
    assert "printable ASCII" in (token_problem("127.0.0.1", "a token with spaces in it") or "")


def test_allowed_hosts_default_to_loopback_and_the_bind_address_and_take_the_allow_host_values() -> None:
    loop = security_settings("127.0.0.1")
    assert loop.enable_dns_rebinding_protection
    assert {"127.0.0.1:*", "localhost:*", "[::1]:*"} <= set(loop.allowed_hosts)
    assert "http://localhost:*" in loop.allowed_origins
    bound = security_settings("10.0.0.5", ["svc.internal", "fd00::1", "gw:9000"])
    assert {"10.0.0.5", "10.0.0.5:*", "svc.internal:*", "[fd00::1]:*", "gw:9000"} <= set(bound.allowed_hosts)
    assert "gw:*" not in bound.allowed_hosts and "https://svc.internal:*" in bound.allowed_origins
    assert not security_settings("0.0.0.0", ["*"]).enable_dns_rebinding_protection


def test_mcp_config_writes_http_entries_whose_header_reads_the_token_from_the_environment(tmp_path: Path) -> None:
    runner = CliRunner()
    only_http = runner.invoke(main, ["mcp-config", "--url", "tickets=http://10.0.0.5:8000/mcp"])
    assert only_http.exit_code == 0, only_http.output
    assert json.loads(only_http.output) == {
        "mcpServers": {
            "tickets": {
                "type": "http",
                "url": "http://10.0.0.5:8000/mcp",
                "headers": {"Authorization": f"Bearer ${{{TOKEN_ENV}}}"},
            }
        }
    }
    mixed = runner.invoke(
        main,
        ["mcp-config", "--db-dir", str(tmp_path / "dbs"), "--services", "tickets,crm", "--url", "crm=https://c/mcp"],
    )
    assert mixed.exit_code == 0, mixed.output
    servers = json.loads(mixed.output)["mcpServers"]
    assert servers["crm"]["type"] == "http" and servers["tickets"]["args"][-1].endswith("tickets.db")
    for args, says in (
        (["--url", "tickets=ftp://x"], "--url 'tickets=ftp://x'"),
        (["--url", "fax=http://x/mcp"], "--url 'fax=http://x/mcp'"),
        (["--url", "tickets=http://a/mcp", "--url", "tickets=http://b/mcp"], "tickets is given twice"),
        (
            ["--services", "tickets,crm", "--url", "crm=http://c/mcp"],
            "pass --db-dir DIR for the stdio entries (tickets)",
        ),
    ):
        bad = runner.invoke(main, ["mcp-config", *args])
        assert bad.exit_code != 0 and bad.output.startswith("Error: ") and says in bad.output, bad.output
        assert bad.output.count("\n") == 1
