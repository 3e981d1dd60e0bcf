"""The lines of `coworkenv mcp-config --print-add`, run by a shell, register servers with the real Claude Code CLI
(the pinned release, installed by tests/harness/agents/test_claude_code_real.py's fixture), and `claude mcp list` reports
them connected: a stdio server it starts itself, and an HTTP server already serving with a bearer token."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from coworkenv.servers.cli import main
from coworkenv.servers.kit.http_auth import TOKEN_ENV
from tests.harness.agents.test_claude_code_real import real_claude  # noqa: F401  (the fixture)
from tests.servers.kit.test_http_auth import TOKEN, http_server

pytestmark = pytest.mark.slow


def add_lines(*args: str) -> list[str]:
    result = CliRunner().invoke(main, ["mcp-config", "--print-add", *args])
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def claude_env(tmp_path: Path, claude: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
    env.update(
        PATH=f"{claude.parent}{os.pathsep}{env.get('PATH', '')}",
        CLAUDE_CONFIG_DIR=str(tmp_path / "claude-config"),
        DISABLE_TELEMETRY="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        IS_SANDBOX="1",
    )
    return env


def shell(line: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_a_printed_add_line_registers_a_stdio_server_that_claude_mcp_list_reports_connected(
    tmp_path: Path,
    real_claude: Path,  # noqa: F811
) -> None:
    env = claude_env(tmp_path, real_claude)
    (line,) = add_lines("--db-dir", str(tmp_path / "dbs"), "--services", "tickets")
    added = shell(line, tmp_path, env)
    assert added.returncode == 0, added.stderr
    listed = shell("claude mcp list", tmp_path, env)
    assert listed.returncode == 0, listed.stderr
    row = next(r for r in listed.stdout.splitlines() if r.startswith("tickets:"))
    assert "Connected" in row, listed.stdout


def test_a_printed_add_line_for_a_url_sends_the_token_and_claude_mcp_list_reports_connected(
    tmp_path: Path,
    real_claude: Path,  # noqa: F811
) -> None:
    env = {**claude_env(tmp_path, real_claude), TOKEN_ENV: TOKEN}
    with http_server(tmp_path / "tickets.db", env={TOKEN_ENV: TOKEN}) as (url, _):
        (line,) = add_lines("--url", f"tickets={url}")
        added = shell(line, tmp_path, env)
        assert added.returncode == 0, added.stderr
        listed = shell("claude mcp list", tmp_path, env)
    row = next(r for r in listed.stdout.splitlines() if r.startswith("tickets:"))
    assert "Connected" in row, listed.stdout
