"""The SQL functions every service connection has: ``casefold`` and the JSON-list tests the tools filter with.

The list tests take the place of ``EXISTS (SELECT 1 FROM json_each(col) WHERE ...)``: a compiled statement that
reads a table-valued function crashes SQLite 3.40 when it runs again after ``deserialize`` swapped the database
under it, and pooled connections (:mod:`.images`) run their compiled statements on one image after another.
They compare as SQLite compares ``json_each``'s ``value`` with a bound parameter: a JSON string equals only that
text, a number only an equal number (``true`` is 1, ``false`` 0), ``null`` nothing; a nested list or object is
its compact JSON text.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from coworkenv.servers.kit.text import casefold


def _items(text: Any) -> Iterable[Any]:
    """What ``json_each(text)`` walks: an array's items, an object's values, a scalar itself; nothing for NULL or
    text that is not JSON."""
    if text is None:
        return ()
    try:
        doc = json.loads(text)
    except (TypeError, ValueError):
        return ()
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict):
        return doc.values()
    return (doc,)


def _sql_value(item: Any) -> Any:
    if isinstance(item, bool):
        return int(item)
    if isinstance(item, dict | list):
        return json.dumps(item, separators=(",", ":"), ensure_ascii=False)
    return item


def _key(value: Any) -> tuple[str, Any] | None:
    """What a value is compared as: text with text, a number with numbers (``1`` equals ``1.0``, as in SQL);
    None for what equals nothing (NULL, a blob)."""
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, int | float):
        return ("n", value)
    return None


# A table's JSON lists repeat (labels, members, shares): each distinct text is parsed once.
@lru_cache(maxsize=8192)
def _keys(text: str) -> frozenset[tuple[str, Any]]:
    return frozenset(k for item in _items(text) if item is not None and (k := _key(_sql_value(item))) is not None)


@lru_cache(maxsize=8192)
def _field_keys(text: str, field: str) -> frozenset[tuple[str, Any]]:
    found = (item.get(field) for item in _items(text) if isinstance(item, dict))
    return frozenset(k for v in found if v is not None and (k := _key(_sql_value(v))) is not None)


@lru_cache(maxsize=8192)
def _folded(text: str) -> tuple[str, ...]:
    return tuple(casefold(_sql_value(item)) for item in _items(text) if item is not None)


def json_has(text: Any, value: Any) -> int:
    """``json_has(list, v)``: 1 when an item of the JSON list equals ``v``."""
    key = _key(value)
    return int(key is not None and isinstance(text, str) and key in _keys(text))


def json_has_field(text: Any, field: Any, value: Any) -> int:
    """``json_has_field(list, 'email', v)``: 1 when an object of the JSON list has ``field`` equal to ``v``."""
    key = _key(value)
    return int(key is not None and isinstance(text, str) and isinstance(field, str) and key in _field_keys(text, field))


def json_item_contains(text: Any, needle: Any) -> int:
    """``json_item_contains(list, needle)``: 1 when an item of the JSON list, case-folded, contains ``needle``
    (already case-folded), as ``instr(casefold(value), needle) > 0`` over ``json_each`` does."""
    if needle is None or not isinstance(text, str):
        return 0
    needle = str(needle)
    return int(any(needle in item for item in _folded(text)))


def _plain_ascii(value: Any) -> bool:
    """Printable ASCII text without a quote or backslash: what any JSON encoder writes between quotes as it is."""
    return isinstance(value, str) and value.isascii() and value.isprintable() and '"' not in value and "\\" not in value


def list_holds(column: str, value: Any) -> tuple[str, list[Any]]:
    """An SQL test that the JSON list of strings in ``column`` (a ``list[str]`` field) holds ``value``, and its
    parameters. For plain ASCII text it is a substring test in C, exact for such a list: a quote inside a stored
    string is escaped, so ``"value"`` right after ``[`` or ``,`` (or ``, ``, as other encoders separate) is a whole
    item; any other value goes through :func:`json_has`. NULL holds nothing (and a NOT of it is true)."""
    if not _plain_ascii(value):
        return f"json_has({column}, ?)", [value]
    quoted = f'"{value}"'
    return (
        f"({column} IS NOT NULL AND (instr({column}, ?) = 1 OR instr({column}, ?) > 0 OR instr({column}, ?) > 0))",
        ["[" + quoted, "," + quoted, ", " + quoted],
    )


def field_holds(column: str, field: str, value: Any) -> tuple[str, list[Any]]:
    """An SQL test that an object of the JSON list in ``column`` has ``field`` equal to ``value`` (a share's or an
    attendee's ``email``), and its parameters: :func:`json_has_field`, after a test in C that passes over the rows
    it cannot match. A string value of plain ASCII is written between quotes as it is wherever a stored text holds
    it, so a text without ``"value"`` has no such field. ``field`` is a constant of the code (a plain name)."""
    if not field.isidentifier():
        raise ValueError(f"not a field name field_holds can write into SQL: {field!r}")
    test = f"json_has_field({column}, '{field}', ?)"
    if not _plain_ascii(value):
        return test, [value]
    return f"(instr({column}, ?) > 0 AND {test})", [f'"{value}"', value]


def list_item_contains(column: str, needle: str) -> tuple[str, list[Any]]:
    """An SQL test that an item of the JSON list of strings in ``column`` (a ``list[str]`` field), case-folded,
    contains ``needle`` (already case-folded), and its parameters: :func:`json_item_contains`, after a test in C
    that passes over the rows it cannot match. A stored text of printable ASCII with no backslash holds its items
    as they are, and there ``lower`` is ``casefold``: if its lowered text lacks the needle, no item has it. (A needle
    with a quote or backslash, which the stored text escapes, always takes the exact test.)"""
    if '"' in needle or "\\" in needle:
        return f"json_item_contains({column}, ?)", [needle]
    return (
        f"((instr(lower({column}), ?) > 0 OR {column} GLOB '*[^ -~]*' OR instr({column}, '\\') > 0)"
        f" AND json_item_contains({column}, ?))",
        [needle, needle],
    )


def list_holds_text(column: str, value: str) -> str:
    """:func:`list_holds` with the value written into the SQL (a constant of the code: plain ASCII, no ``'``)."""
    if not _plain_ascii(value) or "'" in value:
        raise ValueError(f"not a constant list_holds_text can write into SQL: {value!r}")
    sql, params = list_holds(column, value)
    for param in params:
        sql = sql.replace("?", f"'{param}'", 1)
    return sql


def register(conn: sqlite3.Connection) -> None:
    """Give ``conn`` the kit's SQL functions."""
    conn.create_function("casefold", 1, casefold, deterministic=True)
    conn.create_function("json_has", 2, json_has, deterministic=True)
    conn.create_function("json_has_field", 3, json_has_field, deterministic=True)
    conn.create_function("json_item_contains", 2, json_item_contains, deterministic=True)
