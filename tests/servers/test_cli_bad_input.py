"""Bad command lines of the services' CLI: one line `Error: …` that says what to do, exit status ≠ 0, no
traceback, nothing written and nothing deleted."""

from __future__ import annotations

import itertools
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner, Result
from mcp import Client, StdioServerParameters

from coworkenv.servers import get_service
from coworkenv.servers.cli import main
from coworkenv.servers.kit import EnvironmentConfigError, SeedError, ServiceState

EXAMPLES = Path(__file__).parents[2] / "servers/examples"
NOW = "2026-03-02T09:00:00Z"


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def assert_one_error_line(result: Result, *words: str) -> str:
    """The run failed cleanly: exit ≠ 0 through click (no escaped exception), ending in one `Error:` line."""
    assert result.exit_code != 0, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines and lines[-1].startswith("Error: "), result.output
    assert sum(line.startswith("Error: ") for line in lines) == 1, result.output
    for word in words:
        assert word in lines[-1], lines[-1]
    return lines[-1]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def seeded_db(tmp_path: Path, service: str = "payments") -> Path:
    db = tmp_path / f"{service}.db"
    seed = json.loads((EXAMPLES / f"{service}.json").read_text())
    ServiceState.open(get_service(service), seed, NOW, db).close()
    return db


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("command", ["state", "audit"])
def test_state_and_audit_of_a_database_in_a_missing_folder_fail_in_one_line_and_create_nothing(
    command: str, work: Path
) -> None:
    assert_one_error_line(invoke(command, "email", "--db", "missing/dir/email.db"), "does not exist", "serve")
    assert assert_one_error_line(invoke(command, "email", "--db", "/proc/email.db"), "does not exist")
    assert list(work.iterdir()) == []


@pytest.mark.parametrize("command", ["serve", "state", "audit"])
def test_a_file_that_is_not_sqlite_is_refused_and_left_as_it_was(command: str, work: Path) -> None:
    (work / "notes.db").write_text("my shopping list\n")
    before = snapshot(work)
    assert_one_error_line(invoke(command, "email", "--db", "notes.db"), "not a SQLite database")
    assert snapshot(work) == before


@pytest.mark.parametrize("command", ["serve", "state", "audit"])
def test_a_sqlite_file_of_something_else_is_refused_and_gets_no_tables(command: str, work: Path) -> None:
    conn = sqlite3.connect(work / "app.db")
    conn.execute("CREATE TABLE users(name TEXT)")
    conn.execute("INSERT INTO users VALUES ('ann')")
    conn.commit()
    conn.close()
    before = snapshot(work)
    assert_one_error_line(invoke(command, "email", "--db", "app.db"), "something else")
    assert snapshot(work) == before


def test_a_database_of_another_service_is_refused_even_with_reset(work: Path) -> None:
    db = seeded_db(work, "payments")
    before = snapshot(work)
    seed = str(EXAMPLES / "email.json")
    assert_one_error_line(invoke("serve", "email", "--db", str(db), "--reset", "--seed", seed), "'payments'")
    assert_one_error_line(invoke("state", "email", "--db", str(db)), "'payments'")
    assert snapshot(work) == before


def test_a_port_out_of_range_is_a_usage_error(work: Path) -> None:
    assert_one_error_line(invoke("serve", "email", "--db", "e.db", "--transport", "http", "--port", "70000"), "--port")
    assert list(work.iterdir()) == []


def test_serve_under_proc_fails_in_one_line(work: Path) -> None:
    assert_one_error_line(invoke("serve", "email", "--db", "/proc/email.db"), "cannot create")
    assert_one_error_line(invoke("serve", "email", "--db", "/proc/no/such/email.db"), "cannot create the folder")


@pytest.mark.parametrize(
    ("name", "content", "words"),
    [
        ("latin1.json", b'{"customers": [{"name": "Jos\xe9"}]}', ("not UTF-8", "save it as UTF-8")),
        ("deep.json", b"[" * 100_000 + b"]" * 100_000, ("deeper than",)),
        ("deep.yaml", b"a: " + b"[" * 5_000 + b"]" * 5_000, ("deeper than",)),
        ("bad.yaml", b"customers:\n  - id: [\n    name: x\n", ("not valid YAML", "line")),
        ("bomb.yaml", b"a: &a [x, x, x]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b]\n", ("aliases (*a) are not allowed",)),
        ("bad.json", b'{"customers": [', ("not valid JSON", "line 1")),
        ("list.json", b"[]", ("must hold an object", "--describe")),
    ],
)
def test_an_unreadable_seed_fails_in_one_line_and_writes_no_database(
    name: str, content: bytes, words: tuple[str, ...], work: Path
) -> None:
    (work / name).write_bytes(content)
    before = snapshot(work)
    assert_one_error_line(invoke("serve", "payments", "--db", "new/payments.db", "--seed", name), *words)
    assert snapshot(work) == before
    assert not (work / "new").exists()


def test_an_integer_beyond_64_bits_in_a_seed_fails_in_one_line_and_leaves_no_empty_database(work: Path) -> None:
    seed = json.loads((EXAMPLES / "payments.json").read_text())
    seed["disputes"] = [dict(seed["disputes"][0], submission_count=2**63)] if seed.get("disputes") else []
    if not seed["disputes"]:
        pytest.skip("the payments example has no dispute to copy")
    (work / "big.json").write_text(json.dumps(seed))
    line = assert_one_error_line(
        invoke("serve", "payments", "--db", "payments.db", "--seed", "big.json"), "submission_count"
    )
    assert "--describe" in line
    assert sorted(p.name for p in work.iterdir()) == ["big.json"]


def test_the_library_refuses_integers_beyond_64_bits_before_creating_a_file(tmp_path: Path) -> None:
    seed = json.loads((EXAMPLES / "docs.json").read_text())
    table = next(name for name, rows in seed.items() if rows and "revision" in rows[0])
    seed[table][0]["revision"] = 2**64
    with pytest.raises(SeedError, match="out of range"):
        ServiceState.open(get_service("docs"), seed, NOW, tmp_path / "docs.db")
    assert list(tmp_path.iterdir()) == []


def test_a_bad_seed_with_reset_keeps_the_database_as_it_was(work: Path) -> None:
    db = seeded_db(work)
    state = ServiceState.open(get_service("payments"), path=db)
    state.call_now("list_charges", {})
    state.close()
    (work / "bad.json").write_text('{"charges": [{"id": 1}]}')
    before = snapshot(work)
    assert_one_error_line(invoke("serve", "payments", "--db", str(db), "--reset", "--seed", "bad.json"), "charges")
    assert snapshot(work) == before


def test_reset_with_a_good_seed_swaps_in_a_fresh_database_and_leaves_no_temporary_file(work: Path) -> None:
    db = seeded_db(work, "email")
    state = ServiceState.open(get_service("email"), path=db)
    state.call_now("list_labels", {})
    assert len(state.audit()) == 1
    state.close()
    seed = EXAMPLES / "email.json"
    result = subprocess.run(
        [sys.executable, "-m", "coworkenv.servers", "serve", "email", "--db", str(db), "--reset", "--seed", str(seed)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    state = ServiceState.open(get_service("email"), path=db)
    try:
        assert state.audit() == []
        assert state.dump() == ServiceState.open(get_service("email"), json.loads(seed.read_text()), NOW).dump()
    finally:
        state.close()
    assert sorted(p.name for p in work.iterdir() if not p.name.endswith(("-wal", "-shm"))) == ["email.db"]


def test_serve_creates_the_missing_folder_of_its_database(work: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "coworkenv.servers", "serve", "email", "--db", "a/b/email.db"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert (work / "a/b/email.db").is_file()


def test_an_empty_file_is_built_over_but_state_refuses_it_without_writing(work: Path) -> None:
    (work / "email.db").write_bytes(b"")
    assert_one_error_line(invoke("state", "email", "--db", "email.db"), "holds no database")
    assert (work / "email.db").read_bytes() == b""
    ServiceState.open(get_service("email"), path=work / "email.db").close()
    assert ServiceState.open(get_service("email"), path=work / "email.db", create=False).dump()["messages"] == []


def test_the_library_names_a_foreign_database_instead_of_adding_tables(tmp_path: Path) -> None:
    db = tmp_path / "app.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE t(x)")
    conn.commit()
    conn.close()
    with pytest.raises(EnvironmentConfigError, match="something else"):
        ServiceState.open(get_service("email"), path=db)
    conn = sqlite3.connect(db)
    assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master")] == ["t"]
    conn.close()


@pytest.mark.anyio
async def test_mcp_config_creates_its_folder_and_each_entry_starts_a_server_there(work: Path) -> None:
    result = invoke("mcp-config", "--db-dir", "fresh/dbs", "--services", "email,tickets")
    assert result.exit_code == 0, result.output
    assert (work / "fresh/dbs").is_dir()
    entry = json.loads(result.output)["mcpServers"]["tickets"]
    params = StdioServerParameters(command=entry["command"], args=entry["args"])
    with anyio.fail_after(30):
        async with Client(params) as client:
            assert (await client.list_tools()).tools
    assert (work / "fresh/dbs/tickets.db").is_file()


def test_mcp_config_into_an_unwritable_place_fails_in_one_line() -> None:
    assert_one_error_line(invoke("mcp-config", "--db-dir", "/proc/coworkenv-dbs"), "cannot create the folder")


def test_services_describe_prints_tables_fields_and_tool_arguments_with_types_and_bounds() -> None:
    result = invoke("services", "payments", "--describe")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Tables" in out and "Tools" in out
    assert "  charges (ids start 'ch_')" in out
    assert "    amount: integer; required" in out  # a field with its type
    assert "Amount charged, in cents." in out  # and its description
    assert "  create_refund (writes):" in out
    after = out.split("  create_refund (writes):", 1)[1].splitlines()[1:]
    refund = "\n".join(line for line in itertools.takewhile(lambda line: line.startswith("    "), after))
    assert "charge: string; required" in refund and "max length" in refund
    assert "amount: integer | null; optional" in refund and "<= " in refund


def test_services_describe_as_json_lists_every_table_and_tool() -> None:
    result = invoke("services", "tickets", "--describe", "--json")
    assert result.exit_code == 0, result.output
    described = json.loads(result.output)
    service = get_service("tickets")
    assert [t["name"] for t in described["tables"]] == [t.name for t in service.tables]
    assert [t["name"] for t in described["tools"]] == [t.name for t in service.tools]
    assert all(f["type"] for t in described["tables"] for f in t["fields"])


def test_an_unknown_service_is_a_usage_error() -> None:
    assert_one_error_line(invoke("services", "mail", "--describe"), "mail")


def test_reset_of_a_sqlite_file_of_something_else_is_refused_and_deletes_nothing(work: Path) -> None:
    conn = sqlite3.connect(work / "app.db")
    conn.execute("CREATE TABLE users(name TEXT)")
    conn.commit()
    conn.close()
    before = snapshot(work)
    seed = str(EXAMPLES / "email.json")
    assert_one_error_line(invoke("serve", "email", "--db", "app.db", "--reset", "--seed", seed), "something else")
    assert snapshot(work) == before


def test_a_bad_now_fails_in_one_line_and_writes_no_database(work: Path) -> None:
    assert_one_error_line(invoke("serve", "email", "--db", "dbs/email.db", "--now", "yesterday"), "ISO 8601")
    assert [p for p in work.rglob("*") if p.is_file()] == []
