"""`coworkenv snapshot`: a served database copied whole (state, audit log, clock) while another connection holds it
in WAL mode, readable by `state`, `audit` and `grade --dir`; bad command lines end in one `Error:` line with
nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from coworkenv.servers import get_service
from coworkenv.servers.kit import ServiceState
from tests.servers.test_cli_bad_input import EXAMPLES, NOW, assert_one_error_line, invoke, seeded_db


def test_a_snapshot_holds_the_changes_still_in_the_wal_of_a_database_being_served(tmp_path: Path) -> None:
    db = tmp_path / "tickets.db"
    seed = json.loads((EXAMPLES / "tickets.json").read_text())
    served = ServiceState.open(get_service("tickets"), seed, NOW, db)  # held open, as `serve` holds it
    try:
        ticket = served.dump()["tickets"][0]["id"]
        arguments = {"ticket_id": ticket, "body": "Looking into it.", "public": False}

        async def comment() -> None:
            with anyio.fail_after(10):
                assert not (await served.call("add_comment", arguments)).is_error

        anyio.run(comment)
        assert (tmp_path / "tickets.db-wal").stat().st_size > 0  # the change is in the WAL, not yet in the file
        result = invoke("snapshot", "tickets", "--db", str(db), "--out", str(tmp_path / "final" / "tickets.db"))
        assert result.exit_code == 0, result.output
        assert "1 audit rows" in result.output
        expected = served.dump()
    finally:
        served.close()
    copy = ServiceState.open(get_service("tickets"), path=tmp_path / "final" / "tickets.db", create=False)
    try:
        assert copy.dump() == expected and [r.tool for r in copy.audit()] == ["add_comment"]
    finally:
        copy.close()


def test_a_missing_database_is_one_error_line_and_nothing_is_written(tmp_path: Path) -> None:
    out = tmp_path / "out" / "payments.db"
    result = invoke("snapshot", "payments", "--db", str(tmp_path / "nope.db"), "--out", str(out))
    assert_one_error_line(result, "does not exist", "--db")
    assert not out.parent.exists()


def test_a_database_of_another_service_is_refused_in_one_line(tmp_path: Path) -> None:
    db = seeded_db(tmp_path, "payments")
    out = tmp_path / "copy.db"
    assert_one_error_line(invoke("snapshot", "tickets", "--db", str(db), "--out", str(out)))
    assert not out.exists()


def test_an_unknown_service_and_the_database_as_its_own_copy_are_refused_in_one_line(tmp_path: Path) -> None:
    db = seeded_db(tmp_path, "payments")
    before = db.read_bytes()
    assert_one_error_line(invoke("snapshot", "paymnts", "--db", str(db), "--out", str(tmp_path / "c.db")), "paymnts")
    assert_one_error_line(invoke("snapshot", "payments", "--db", str(db), "--out", str(db)), "itself")
    assert db.read_bytes() == before and not (tmp_path / "c.db").exists()
