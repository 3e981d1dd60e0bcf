"""`coworkenv mcp-config --client …`: each client's documented file shape, and `--print-add` lines for Claude Code."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from coworkenv.servers.cli import main
from coworkenv.servers.mcp_config import CLIENTS, ClientConfigError, claude_mcp_add, client_config, mcp_config

URL = "http://127.0.0.1:8765/mcp"


def config(*args: str) -> dict[str, object]:
    result = CliRunner().invoke(main, ["mcp-config", *args])
    assert result.exit_code == 0, result.output
    loaded: dict[str, object] = json.loads(result.output)
    return loaded


def test_claude_code_gets_mcp_servers_with_a_command_per_service(tmp_path: Path) -> None:
    out = config("--client", "claude-code", "--db-dir", str(tmp_path), "--services", "tickets,crm")
    servers = out["mcpServers"]
    assert isinstance(servers, dict) and list(servers) == ["tickets", "crm"]
    assert servers["tickets"]["args"][-4:] == ["serve", "tickets", "--db", str((tmp_path / "tickets.db").resolve())]
    assert "type" not in servers["tickets"]


def test_the_default_client_is_claude_code_and_mcp_config_is_its_shape(tmp_path: Path) -> None:
    assert config("--db-dir", str(tmp_path), "--services", "tickets") == config(
        "--client", "claude-code", "--db-dir", str(tmp_path), "--services", "tickets"
    )
    assert mcp_config(tmp_path, ["tickets"]) == client_config("claude-code", tmp_path, ["tickets"])


def test_claude_desktop_gets_mcp_servers_with_commands_and_refuses_a_url(tmp_path: Path) -> None:
    out = config("--client", "claude-desktop", "--db-dir", str(tmp_path), "--services", "email")
    assert set(out) == {"mcpServers"} and set(out["mcpServers"]["email"]) == {"command", "args"}  # type: ignore[index]
    result = CliRunner().invoke(main, ["mcp-config", "--client", "claude-desktop", "--url", f"tickets={URL}"])
    assert result.exit_code != 0 and "Connectors" in result.output


def test_cursor_gives_a_url_entry_without_type_and_its_own_env_syntax() -> None:
    out = config("--client", "cursor", "--url", f"tickets={URL}")
    assert out == {
        "mcpServers": {"tickets": {"url": URL, "headers": {"Authorization": "Bearer ${env:COWORKENV_TOKEN}"}}}
    }


def test_vscode_uses_servers_with_a_type_and_asks_for_the_token_as_a_password_input(tmp_path: Path) -> None:
    out = config("--client", "vscode", "--db-dir", str(tmp_path), "--services", "tickets,crm", "--url", f"crm={URL}")
    servers = out["servers"]
    assert isinstance(servers, dict)
    assert servers["tickets"]["type"] == "stdio" and servers["tickets"]["command"]
    assert servers["crm"] == {
        "type": "http",
        "url": URL,
        "headers": {"Authorization": "Bearer ${input:coworkenv-token}"},
    }
    (token,) = out["inputs"]  # type: ignore[misc]
    assert (token["type"], token["id"], token["password"]) == ("promptString", "coworkenv-token", True)
    assert "mcpServers" not in out


def test_vscode_without_urls_has_no_inputs(tmp_path: Path) -> None:
    assert set(client_config("vscode", tmp_path, ["tickets"])) == {"servers"}


@pytest.mark.parametrize("client", CLIENTS)
def test_every_client_needs_a_database_folder_for_stdio_entries(client: str) -> None:
    with pytest.raises(ClientConfigError, match="--db-dir"):
        client_config(client, None, ["tickets"])  # type: ignore[arg-type]


def test_print_add_gives_one_claude_mcp_add_line_per_service_that_a_shell_splits_back(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["mcp-config", "--print-add", "--db-dir", str(tmp_path / "my dbs"), "--services", "tickets,crm"]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert len(lines) == 2
    words = shlex.split(lines[0])
    assert words[:6] == ["claude", "mcp", "add", "--scope", "local", "tickets"]
    assert words[6] == "--" and words[-1] == str((tmp_path / "my dbs" / "tickets.db").resolve())


def test_print_add_for_a_url_lets_the_shell_put_in_the_token() -> None:
    (line,) = claude_mcp_add(None, ["tickets"], urls={"tickets": URL}, scope="user")
    assert line.startswith(f"claude mcp add --scope user --transport http tickets {URL} --header ")
    assert line.endswith('"Authorization: Bearer $COWORKENV_TOKEN"')
