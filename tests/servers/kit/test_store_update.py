"""An update sets only the columns whose values changed, and leaves the record as a whole-record write would."""

from __future__ import annotations

import json
from pathlib import Path

from coworkenv.servers.kit import Environment

SEED = json.loads((Path(__file__).parents[3] / "servers/examples/tickets.json").read_text())


def test_an_update_changes_the_named_fields_keeps_the_rest_and_finds_the_record_by_its_indexes() -> None:
    with Environment.create({"tickets": SEED}) as env:
        store = env.state("tickets").tables["tickets"]
        before = store.get("tkt_1001")
        assert before is not None
        after = store.update("tkt_1001", {"status": "pending", "tags": ["sso", "waiting"]})
        assert store.get("tkt_1001") == after == {**before, "status": "pending", "tags": ["sso", "waiting"]}
        # the status index was updated with the row: a search by the new status finds it, by the old one not
        assert "tkt_1001" in [r["id"] for r in store.select("status = ?", ["pending"])]
        assert "tkt_1001" not in [r["id"] for r in store.select("status = ?", [before["status"]])]


def test_an_update_that_changes_nothing_is_still_a_write_and_notes_no_change() -> None:
    with Environment.create({"tickets": SEED}) as env:
        state = env.state("tickets")
        store = state.tables["tickets"]
        current = store.get("tkt_1001")
        assert current is not None
        writes, total = store.writes, state.conn.total_changes
        state.journal.clear()
        store.journal = state.journal
        assert store.update("tkt_1001", {"status": current["status"]}) == current
        assert store.writes == writes + 1 and state.conn.total_changes == total + 1
        assert state.journal == []


def test_a_tool_update_audits_only_the_fields_it_changed() -> None:
    with Environment.create({"tickets": SEED}) as env:
        result = env.state("tickets").call_now("assign_ticket", {"ticket_id": "tkt_1001", "assignee_id": "usr_kim"})
        assert result.outcome == "ok"
        (row,) = env.audit()
        (change,) = row.changes or []
        assert change["op"] == "update" and set(change["fields"]) <= {"assignee_id", "updated_at", "status"}
        assert env.state("tickets").tables["tickets"].get("tkt_1001")["assignee_id"] == "usr_kim"


def test_a_value_equal_in_python_but_written_otherwise_in_json_is_a_change() -> None:
    """``1``, ``1.0`` and ``True`` are equal in Python: the stored text must still follow the new value."""
    from coworkenv.servers.kit import Record, Service, ServiceState, Table

    class Thing(Record):
        name: str = ""
        n: int | float = 0
        flags: list[int | bool] = []

    service = Service("things", "Things", "Numbers.", (Table("things", Thing, "th_"),), ())
    state = ServiceState.open(service, {"things": [{"id": "th_1", "name": "a", "n": 1, "flags": [1]}]})
    try:
        store = state.tables["things"]
        new = {"id": "th_1", "name": "b", "n": 1.0, "flags": [True]}
        assert store.update("th_1", {"name": "b", "n": 1.0, "flags": [True]}) == new
        stored = state.conn.execute("SELECT name, n, flags FROM things WHERE id = 'th_1'").fetchone()
        assert tuple(stored) == ("b", "1.0", "[true]")  # as a whole-record write stores them
        assert store.get("th_1") == new
    finally:
        state.close()
