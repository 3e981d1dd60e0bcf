"""The kit's JSON-list SQL functions answer exactly as the ``json_each`` subqueries they replace."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest

from coworkenv.servers.kit import sqlfunctions

LISTS = [
    '["a", "b"]',
    "[1, 2.0, true, false, null]",
    '[["a"], {"k": "v"}, "A"]',
    "[]",
    "null",
    '"a"',
    '{"x": "a", "y": 1}',
    '[1.5, "1", "Straße", "STRASSE"]',
    None,
]
VALUES: list[Any] = ["a", "b", "A", 1, 2, 2.0, 1.5, "1", 0, None, '["a"]', '{"k":"v"}', "true", "straße"]
OBJECT_LISTS = [
    '[{"email": "a@x.io"}, {"email": null}, {"email": 1}, {"other": "a@x.io"}]',
    '[{"email": "b@x.io", "role": "reader"}, {"email": ["a@x.io"]}]',
    "[]",
    None,
]
EMAILS: list[Any] = ["a@x.io", "b@x.io", 1, None, "", '["a@x.io"]']
NEEDLES = ["a", "strasse", "1", "2.0", "", "v", "x"]


@pytest.fixture
def conn() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    sqlfunctions.register(db)
    return db


def one(conn: sqlite3.Connection, sql: str, *params: Any) -> int:
    return int(conn.execute(sql, params).fetchone()[0])


@pytest.mark.parametrize("text", LISTS)
def test_json_has_equals_an_exists_over_json_each(conn: sqlite3.Connection, text: str | None) -> None:
    for value in VALUES:
        old = one(conn, "SELECT EXISTS (SELECT 1 FROM json_each(?) WHERE value = ?)", text, value)
        assert one(conn, "SELECT json_has(?, ?)", text, value) == old, (text, value)


@pytest.mark.parametrize("text", OBJECT_LISTS)
def test_json_has_field_equals_an_exists_over_json_extract(conn: sqlite3.Connection, text: str | None) -> None:
    for email in EMAILS:
        old = one(
            conn, "SELECT EXISTS (SELECT 1 FROM json_each(?) WHERE json_extract(value, '$.email') = ?)", text, email
        )
        assert one(conn, "SELECT json_has_field(?, 'email', ?)", text, email) == old, (text, email)


@pytest.mark.parametrize("text", [t for t in LISTS if t is None or t.startswith("[")])
def test_json_item_contains_equals_an_instr_over_json_each(conn: sqlite3.Connection, text: str | None) -> None:
    for needle in NEEDLES:
        old = one(conn, "SELECT EXISTS (SELECT 1 FROM json_each(?) WHERE instr(casefold(value), ?) > 0)", text, needle)
        assert one(conn, "SELECT json_item_contains(?, ?)", text, needle) == old, (text, needle)


def stored(items: list[Any]) -> str:
    """A list as the kit stores a ``list[str]`` field."""
    from coworkenv.servers.kit.store import _encode_json

    return str(_encode_json(items))


STRING_LISTS = [
    ["INBOX", "UNREAD"],
    ['say "INBOX', "x"],
    ["a,", '"INBOX"', "INBOX\\"],
    ["[", '["INBOX"', ", INBOX"],
    ["Straße", "ok@x.io", ""],
    ["INBOX2", "XINBOX"],
    [],
]
ITEMS = ["INBOX", "UNREAD", "x", "", "Straße", "ok@x.io", '"INBOX"', "INBOX\\", "a,", ", INBOX", "[", "inbox", "INBOX2"]


@pytest.mark.parametrize("items", STRING_LISTS)
def test_list_holds_answers_as_json_each_for_a_stored_list_of_strings(
    conn: sqlite3.Connection, items: list[str]
) -> None:
    for text in (stored(items), json.dumps(items, ensure_ascii=False), json.dumps(items), None):
        for value in ITEMS:
            sql, params = sqlfunctions.list_holds("col", value)
            old = one(conn, "SELECT EXISTS (SELECT 1 FROM json_each(?) WHERE value = ?)", text, value)
            row = conn.execute(f"SELECT {sql}, NOT {sql} FROM (SELECT ? AS col)", (*params, *params, text)).fetchone()
            assert (bool(row[0]), bool(row[1])) == (bool(old), not old), (text, value)


SHARE_LISTS: list[Any] = [
    [{"email": "a@x.io", "role": "reader"}, {"email": "b@x.io"}],
    [{"other": "a@x.io"}, {"email": ["a@x.io"]}, {"email": "A@x.io"}],
    [{"email": 'say "a@x.io'}, {"email": "é@x.io"}, {"email": 1}, {"email": None}],
    [{"role": "a@x.io", "email": "c@x.io"}],
    [],
]
SHARE_EMAILS: list[Any] = ["a@x.io", "b@x.io", "c@x.io", "é@x.io", 'say "a@x.io', "A@x.io", "", 1, None]


@pytest.mark.parametrize("shares", SHARE_LISTS)
def test_field_holds_answers_as_json_has_field_for_a_stored_list_of_objects(
    conn: sqlite3.Connection, shares: list[dict[str, Any]]
) -> None:
    for text in (stored(shares), json.dumps(shares, ensure_ascii=False), json.dumps(shares), None):
        for email in SHARE_EMAILS:
            sql, params = sqlfunctions.field_holds("col", "email", email)
            old = one(conn, "SELECT json_has_field(?, 'email', ?)", text, email)
            row = conn.execute(f"SELECT {sql}, NOT {sql} FROM (SELECT ? AS col)", (*params, *params, text)).fetchone()
            assert (bool(row[0]), bool(row[1])) == (bool(old), not old), (text, email)
    with pytest.raises(ValueError, match="field name"):
        sqlfunctions.field_holds("col", "email') OR 1 --", "a@x.io")


def test_list_holds_text_writes_the_same_test_with_the_constant_in_it(conn: sqlite3.Connection) -> None:
    for items in STRING_LISTS:
        sql, params = sqlfunctions.list_holds("col", "INBOX")
        inline = sqlfunctions.list_holds_text("col", "INBOX")
        text = stored(items)
        assert one(conn, f"SELECT {inline} FROM (SELECT ? AS col)", text) == one(
            conn, f"SELECT {sql} FROM (SELECT ? AS col)", *params, text
        )
    for bad in ("it's", 'a"b', "Straße"):
        with pytest.raises(ValueError):
            sqlfunctions.list_holds_text("col", bad)


@pytest.mark.parametrize("items", [*STRING_LISTS, ["Jamie.Lee@Northwind.com"], ["STRASSE@x.io"], ["a\\b", 'x"y']])
def test_list_item_contains_answers_as_instr_over_json_each(conn: sqlite3.Connection, items: list[str]) -> None:
    needles = ["inbox", "northwind", "strasse", "ß", "", "a\\b", 'x"', "@", "x", "lee@n"]
    for text in (stored(items), None):
        for needle in needles:
            sql, params = sqlfunctions.list_item_contains("col", needle)
            old = one(
                conn, "SELECT EXISTS (SELECT 1 FROM json_each(?) WHERE instr(casefold(value), ?) > 0)", text, needle
            )
            assert one(conn, f"SELECT {sql} FROM (SELECT ? AS col)", *params, text) == old, (text, needle)
