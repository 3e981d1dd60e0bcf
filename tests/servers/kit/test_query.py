"""The WHERE builder of the service kit: flat filters, absent values ignored, text matched literally; a page of
rows with its total in one query."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from coworkenv.servers import Environment
from coworkenv.servers.kit import Where, sqlfunctions


@pytest.fixture
def db() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    sqlfunctions.register(conn)
    conn.execute("CREATE TABLE t (id TEXT, name TEXT, status TEXT, n INTEGER, at TEXT, tags TEXT)")
    conn.executemany(
        "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)",
        [
            ("a", "50% off", "open", 0, "2026-01-01", '["vip", "billing"]'),
            ("b", "snake_case", "closed", 5, "2026-02-01", "[]"),
            ("c", "O'Brien", "open", 10, "2026-03-01", '["billing"]'),
            ("d", "Straße plain", "pending", 7, "2026-04-01", '["vip"]'),
        ],
    )
    return conn


def ids(db: sqlite3.Connection, where: Where) -> list[str]:
    sql = "SELECT id FROM t" + (f" WHERE {where.sql}" if where.sql else "") + " ORDER BY id"
    return [r[0] for r in db.execute(sql, where.params)]


def test_an_empty_builder_gives_empty_sql_and_no_params() -> None:
    where = Where()
    assert where.sql == ""
    assert where.params == []
    assert not where


def test_none_and_empty_values_add_no_filter() -> None:
    where = Where().text(["name"], None).text(["name"], "").eq("status", None).eq("status", "")
    where.any_of("status", None).any_of("status", []).gte("at", None).lt("at", "").has_tag("t.tags", None)
    where.lacks_tag("t.tags", "").eq_folded("name", None)
    assert where.sql == ""
    assert where.params == []


def test_zero_and_false_are_values_not_absences(db: sqlite3.Connection) -> None:
    assert ids(db, Where().eq("n", 0)) == ["a"]
    assert ids(db, Where().gte("n", 0)) == ["a", "b", "c", "d"]


def test_filters_are_joined_with_and_in_call_order() -> None:
    where = Where().eq("status", "open").gte("at", "2026-01-01").lt("at", "2026-03-01")
    assert where.sql == "status = ? AND at >= ? AND at < ?"
    assert where.params == ["open", "2026-01-01", "2026-03-01"]


@pytest.mark.parametrize(("query", "expected"), [("%", ["a"]), ("_", ["b"]), ("'", ["c"]), ("50%", ["a"])])
def test_text_matches_percent_underscore_and_quote_literally(
    db: sqlite3.Connection, query: str, expected: list[str]
) -> None:
    assert ids(db, Where().text(["name"], query)) == expected


def test_text_ignores_case_with_unicode_folding(db: sqlite3.Connection) -> None:
    assert ids(db, Where().text(["name"], "STRASSE")) == ["d"]
    assert ids(db, Where().text(["name"], "o'brien")) == ["c"]


def test_text_matches_any_of_its_columns(db: sqlite3.Connection) -> None:
    assert ids(db, Where().text(["name", "status"], "pen")) == ["a", "c", "d"]


def test_any_of_keeps_rows_whose_column_is_in_the_list(db: sqlite3.Connection) -> None:
    where = Where().any_of("status", ["open", "pending"])
    assert where.sql == "status IN (?, ?)"
    assert ids(db, where) == ["a", "c", "d"]


def test_gte_includes_and_lt_excludes_the_window_bounds(db: sqlite3.Connection) -> None:
    assert ids(db, Where().gte("at", "2026-02-01").lt("at", "2026-04-01")) == ["b", "c"]


def test_has_tag_and_lacks_tag_test_json_list_membership(db: sqlite3.Connection) -> None:
    assert ids(db, Where().has_tag("t.tags", "vip")) == ["a", "d"]
    assert ids(db, Where().lacks_tag("t.tags", "billing")) == ["b", "d"]


def test_eq_folded_compares_ignoring_case(db: sqlite3.Connection) -> None:
    assert ids(db, Where().eq_folded("status", "OPEN")) == ["a", "c"]


def test_raw_adds_its_fragment_and_params_as_given(db: sqlite3.Connection) -> None:
    where = Where().raw("n > ? AND n < ?", 1, 8).raw("1")
    assert where.sql == "n > ? AND n < ? AND 1"
    assert ids(db, where) == ["b", "d"]


def test_params_returns_a_copy() -> None:
    where = Where().eq("status", "open")
    where.params.append("x")
    assert where.params == ["open"]


def test_values_never_enter_the_sql_text() -> None:
    where = Where().eq("status", "x' OR 1=1 --").text(["name"], "'; DROP TABLE t; --")
    assert "DROP" not in where.sql
    assert "OR 1=1" not in where.sql


def test_a_page_brings_its_rows_and_the_total_in_one_query_and_past_the_end_the_total_alone() -> None:
    seed = json.loads((Path(__file__).parents[3] / "servers/examples/tickets.json").read_text())
    with Environment.create({"tickets": seed}, now="2026-03-02T09:00:00Z") as env:
        store = env.state("tickets").tables["tickets"]
        everything = store.select("status = ?", ["open"], order_by="id")
        rows, total = store.page("status = ?", ["open"], "id", 2, 1)
        assert total == len(everything) > 3 and rows == everything[1:3]
        assert store.page("status = ?", ["open"], "id", 2, 500) == ([], len(everything))
        assert store.page("status = ?", ["nothing"], "id", 2, 0) == ([], 0)
