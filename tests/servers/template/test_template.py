"""The template service (servers/template, the one servers/README.md walks through) is a service like the shipped
ones: registered with one call it answers the in-memory MCP client, passes the checks every service gets
(``coworkenv.servers.testing``: fuzzing, bounds, seeds, audit outcomes, the two doors), edits a record in place, and installed as another package's ``coworkenv.services`` entry point it is served over stdio by
``coworkenv serve``; a plugin that cannot load costs one line on stderr and nothing else."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from coworkenv.servers import SERVICES, Environment, register_service
from coworkenv.servers.kit import Service, ServiceState
from coworkenv.servers.kit.plugins import SERVICES_GROUP
from coworkenv.servers.registry import SHIPPED, unregister_service
from coworkenv.servers.template import EXAMPLE_SEED, SERVICE
from coworkenv.servers.testing import check_service
from tests.conftest import error_text, ok, service_client
from tests.guides import ROOT, install_dist, python_blocks

GUIDE = "servers/README.md"
SEED: dict[str, Any] = json.loads(EXAMPLE_SEED.read_text())
NOW = "2026-03-05T09:00:00Z"


@pytest.fixture
def notes() -> Iterator[None]:
    register_service(SERVICE)
    try:
        yield
    finally:
        unregister_service(SERVICE.name)


@pytest.mark.anyio
async def test_the_template_answers_the_mcp_client_and_audits_every_call() -> None:
    async with service_client(SERVICE, SEED, NOW) as (client, env):
        listed = ok(await client.call_tool("list_notes", {"query": "standup"}))
        assert [n["id"] for n in listed["items"]] == ["note_standup"]
        made = ok(await client.call_tool("create_note", {"title": "Lunch", "body": "Pizza at 12."}))
        assert made["author"] == "me" and made["created_at"] == NOW
        assert ok(await client.call_tool("delete_note", {"note_id": made["id"]}))["deleted"] is True
        assert "list_notes" in error_text(await client.call_tool("get_note", {"note_id": made["id"]}))
        outcomes = [row.outcome for row in env.state("notes").audit()]
        assert outcomes == ["ok", "ok", "ok", "error"]


def test_a_registered_service_is_known_by_name_and_leaves_when_unregistered(notes: None) -> None:
    assert SERVICES["notes"] is SERVICE
    with pytest.raises(ValueError, match="already registered"):
        register_service(Service(name="notes", title="Other notes", instructions="", tables=SERVICE.tables, tools=()))


def test_the_template_passes_the_checks_every_service_gets() -> None:
    check_service(SERVICE, EXAMPLE_SEED, stdio=False)  # over stdio from an entry point: below, and in the guide


def test_editing_a_note_updates_it_in_place_and_the_bumped_time_is_no_change_to_the_grader() -> None:
    with Environment.create({"notes": SEED}, now=NOW, registry={"notes": SERVICE}) as env:
        before = env.dump()["notes"]
        edited = env.state("notes").call_now("update_note", {"note_id": "note_standup", "body": "From Tuesday on."})
        assert edited.data is not None and edited.data["updated_at"] == NOW
        assert (edited.data["title"], edited.data["body"]) == ("Standup moved to 10:00", "From Tuesday on.")
        (change,) = SERVICE.diff(before, env.dump()["notes"])
        assert change.fields == ("body",)  # updated_at is volatile
        nothing = env.state("notes").call_now("update_note", {"note_id": "note_standup"})
        assert nothing.outcome == "error" and "Give a new title" in nothing.text


def _plugin_env(site: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
    }


@pytest.mark.slow
@pytest.mark.anyio
async def test_an_entry_point_service_is_served_over_stdio_and_called(tmp_path: Path) -> None:
    install_dist(tmp_path / "site", "notes_plugin", {SERVICES_GROUP: {"notes": "coworkenv.servers.template:SERVICE"}})
    db = tmp_path / "notes.db"
    args = ["-m", "coworkenv.servers", "serve", "notes", "--db", str(db), "--seed", str(EXAMPLE_SEED), "--now", NOW]
    params = StdioServerParameters(command=sys.executable, args=args, env=_plugin_env(tmp_path / "site"))
    with anyio.fail_after(30):
        async with Client(params) as client:
            assert {t.name for t in (await client.list_tools()).tools} == {s.name for s in SERVICE.tools}
            assert ok(await client.call_tool("get_note", {"note_id": "note_offsite"}))["author"] == "sam@brightwave.io"
            ok(await client.call_tool("delete_note", {"note_id": "note_offsite"}))
    state = ServiceState.open(SERVICE, path=db)
    try:
        assert [r.tool for r in state.audit()] == ["get_note", "delete_note"]
        assert [n["id"] for n in state.dump()["notes"]] == ["note_standup"]
    finally:
        state.close()


@pytest.mark.slow
def test_a_plugin_that_cannot_load_costs_one_stderr_line_and_the_rest_still_works(tmp_path: Path) -> None:
    site = tmp_path / "site"
    install_dist(site, "broken_plugin", {SERVICES_GROUP: {"fax": "no_such_module:SERVICE", "crm": "json:dumps"}})
    done = subprocess.run(
        [sys.executable, "-m", "coworkenv.servers", "services", "--json"],
        env=_plugin_env(site),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert {r["service"] for r in json.loads(done.stdout)} == set(SERVICES)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 2 and all("fix or uninstall that package" in line for line in lines)
    assert "'fax'" in lines[0] and "ModuleNotFoundError" in lines[0]
    assert "'crm'" in lines[1] and "must be a coworkenv.servers.kit.Service" in lines[1]


def test_the_service_guide_code_registers_the_template_and_calls_it(capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = python_blocks(GUIDE)
    try:
        exec(compile(code, GUIDE, "exec"), {})
    finally:
        unregister_service(SERVICE.name)
    assert capsys.readouterr().out.split() == ["1", "list_notes"]


def test_the_service_guides_test_runs_the_checks_every_service_gets() -> None:
    _, test = python_blocks(GUIDE)
    scope: dict[str, Any] = {}
    exec(compile(test, GUIDE, "exec"), scope)
    scope["test_notes_passes_the_checks_every_service_gets"]()


def test_the_service_guide_shows_the_example_plugins_whole_pyproject_and_the_templates_own_update() -> None:
    text = (ROOT / GUIDE).read_text(encoding="utf-8")
    (toml,) = re.findall(r"```toml\n(.+?)\n```", text, flags=re.S)
    assert toml + "\n" == (ROOT / "plugins/bookmarks/pyproject.toml").read_text(encoding="utf-8")
    (update,) = re.findall(r"```text\n(.+?)\n```", text, flags=re.S)
    source = (ROOT / "servers/template/tools.py").read_text(encoding="utf-8")
    shown = [line.strip() for line in update.splitlines() if "..." not in line]
    assert all(line in source for line in shown), [line for line in shown if line not in source]


def test_every_package_with_an_example_workspace_ships_and_the_template_does_not() -> None:
    examples = sorted(p.stem for p in (Path(__file__).parents[3] / "servers/examples").glob("*.json"))
    assert list(SHIPPED) == examples and len(examples) == 15
    assert "notes" not in SERVICES
