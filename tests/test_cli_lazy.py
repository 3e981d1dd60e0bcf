"""The `coworkenv` command imports a subcommand's package only when that subcommand runs: `coworkenv serve` (what
an MCP client starts and waits for) loads the served service and the MCP SDK, not synthesis, the harness, training
or the other services. `--help` still lists every command, and an error still ends in one `Error:` line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from coworkenv.train import cli
from coworkenv.train.cli import SOURCES, commands_of, main

EXAMPLES = Path(__file__).parents[1] / "servers" / "examples"
SERVICE_PACKAGES = {p.stem for p in EXAMPLES.glob("*.json")}


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_each_source_holds_exactly_the_commands_named_for_it(source: str) -> None:
    assert sorted(str(c.name) for c in commands_of(source)) == sorted(SOURCES[source])


def test_help_lists_every_command_of_every_package() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0, result.output
    listed = {line.split()[0] for line in result.output.split("Commands:")[1].splitlines() if line.strip()}
    assert listed == {name for names in SOURCES.values() for name in names}


def test_a_command_is_found_even_where_the_map_does_not_name_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(SOURCES, "coworkenv.servers.cli:COMMANDS", ("services",))  # "state" left out
    group = click.Context(main)
    found = main.get_command(group, "state")
    assert found is not None and found.name == "state"
    assert main.get_command(group, "no-such-command") is None


def test_a_command_whose_module_cannot_load_ends_in_one_error_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "SOURCES", {**SOURCES, "coworkenv.no_such_module:COMMANDS": ("ghost",)})
    result = CliRunner().invoke(main, ["ghost"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1 and "ModuleNotFoundError" in errors[0], result.output


@pytest.mark.slow
def test_serve_imports_the_served_service_and_no_other_layer(tmp_path: Path) -> None:
    """Run `coworkenv serve tickets` for real (stdin closed: it starts, reads end of input and stops) and list what
    it imported."""
    argv = ["coworkenv", "serve", "tickets", "--db", str(tmp_path / "t.db"), "--seed", str(EXAMPLES / "tickets.json")]
    code = (
        "import atexit, json, sys\n"
        "atexit.register(lambda: sys.stderr.write('\\nMODULES ' + json.dumps(sorted(sys.modules)) + '\\n'))\n"
        f"sys.argv = {argv!r}\n"
        "from coworkenv.train.cli import main\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    modules = json.loads(done.stderr.rsplit("MODULES ", 1)[1])
    ours = [m for m in modules if m.startswith("coworkenv.")]
    assert not [m for m in ours if m.startswith(("coworkenv.synth", "coworkenv.harness"))]
    assert {m for m in ours if m.startswith("coworkenv.train")} <= {"coworkenv.train", "coworkenv.train.cli"}
    services = {m.split(".")[2] for m in ours if m.count(".") >= 2} & SERVICE_PACKAGES
    assert services == {"tickets"}
    assert (tmp_path / "t.db").is_file()
