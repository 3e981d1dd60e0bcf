"""A validated table of seed records as columns: checked for SQLite in bulk, and stored in bulk.

Cold seeding spends its time per record; here the work is done a column at a time at C speed (type sets,
joins, the C JSON encoder), once: the storability check of :mod:`.seed` makes the very values
:func:`insert_columns` binds, so a seed's records are transposed and encoded once, not once to check and
again to insert.
"""

from __future__ import annotations

import functools
import json
import re
import sqlite3
from collections.abc import Iterable, Sequence
from itertools import chain
from typing import Any

from pydantic import BaseModel

from coworkenv.servers.kit.audit import MAX_DEPTH
from coworkenv.servers.kit.records import Table

Columns = list[Sequence[Any]]
"""A table's values, one sequence per column in the table's column order, as SQLite stores them."""

SQLITE_MAX_INT = 2**63 - 1
SQLITE_MIN_INT = -(2**63)

_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_INNERMOST = re.compile(r"\[\]|\{\}")
_SCALARS = frozenset({str, int, float, bool})
_PLAIN = frozenset({str, int, bool, type(None)})
"""Types whose values ``dump_python(mode="json")`` hands back as they are (floats are left out: inf and nan)."""
_CONTAINERS = frozenset({list, dict, type(None)})
_NONE = type(None)


def _no_default(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_encode_value = json.encoder.c_make_encoder(  # type: ignore[attr-defined]
    None, _no_default, json.encoder.encode_basestring, None, ":", ",", True, False, True
)
"""The C encoder behind ``json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))``, called
without that function's per-call set-up (validated records hold plain JSON values, never cycles)."""


def encode_json_column(values: Iterable[Any]) -> list[str | None]:
    """Each value as the compact, key-sorted JSON text a JSON column stores (None stays None)."""
    join = "".join
    return [None if v is None else join(_encode_value(v, 0)) for v in values]


# ---------------------------------------------------------------------------------------------- validated rows
@functools.cache
def _dumps_as_stored(model: type[BaseModel]) -> bool:
    """True when nothing in the model's schema changes a value on the way out (no serializer, computed or excluded
    field, alias used for dumping, extra fields kept): then a validated record's ``__dict__`` holding only
    :data:`_PLAIN` values is exactly its ``model_dump(mode="json")``."""
    schema = model.__pydantic_core_schema__
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if (
                    key in ("serialization", "computed_fields", "serialization_exclude", "serialization_alias")
                    and value
                ):
                    return False
                if key in ("serialization_exclude_if", "exclude_if", "root_model", "serialize_by_alias") and value:
                    return False
                if key == "extra_fields_behavior" and value == "allow":
                    return False
                if isinstance(value, dict | list | tuple):
                    stack.append(value)
        elif isinstance(node, list | tuple):
            stack.extend(v for v in node if isinstance(v, dict | list | tuple))
    return True


def plain_rows(table: Table, models: list[BaseModel]) -> tuple[list[dict[str, Any]], list[Sequence[Any]]] | None:
    """The validated records as the dicts ``dump_python(models, mode="json")`` would make, and their columns,
    taken from the models themselves where that is exact (:func:`_dumps_as_stored`; every value a string, integer,
    bool or None, or a list or dict of those, copied so that no record shares a container with another or with
    the seed); None where the dump must make them."""
    if not models or not _dumps_as_stored(table.model) or len(set(map(id, models))) != len(models):
        return None
    rows: list[dict[str, Any]] = [m.__dict__ for m in models]
    names = table.column_names
    if tuple(rows[0]) != names or set(map(len, rows)) != {len(names)}:
        return None
    columns = _transpose(rows)
    for index, values in enumerate(columns):
        types = set(map(type, values))
        if types <= _PLAIN:
            continue
        if not types <= _CONTAINERS or not _plain_items(values):
            return None
        name = names[index]
        copied = [v if v is None else v.copy() for v in values]
        for row, value in zip(rows, copied, strict=True):
            row[name] = value
        columns[index] = copied
    return rows, columns


def _plain_items(values: Sequence[Any]) -> bool:
    """True when the lists and dicts among ``values`` hold only :data:`_PLAIN` values (and dicts text keys)."""
    lists = [v for v in values if type(v) is list]
    dicts = [v for v in values if type(v) is dict]
    if not set(map(type, chain.from_iterable(lists))) <= _PLAIN:
        return False
    if not set(map(type, chain.from_iterable(dicts))) <= {str}:
        return False
    return set(map(type, chain.from_iterable(map(dict.values, dicts)))) <= _PLAIN


# ---------------------------------------------------------------------------------------------- the check
def stored_columns(table: Table, rows: list[dict[str, Any]], columns: Columns | None = None) -> Columns | None:
    """The values of a validated table as SQLite stores them, a column at a time (JSON columns as JSON text, bools
    as 0/1), when no record can break :func:`.seed._check_storable`: text that encodes as UTF-8, top-level
    integers within 64 bits, JSON nesting well within :data:`MAX_DEPTH`. None says only "look record by
    record" (which names the first bad one). ``columns``: the rows already transposed (:func:`plain_rows`)."""
    if not rows:
        return []
    if columns is None:
        if not _same_layout(rows, table.column_names):  # a model that dumps more than its columns
            return None
        columns = _transpose(rows)
    out: Columns = []
    try:
        for column, values in zip(table.columns, columns, strict=True):
            out.append(_stored_column(column.kind, values))
    except (UnicodeEncodeError, ValueError, TypeError, RecursionError):
        return None
    return out


def _stored_column(kind: str, values: Sequence[Any]) -> Sequence[Any]:
    """One column checked and encoded (a ValueError, TypeError or UnicodeEncodeError where it cannot be)."""
    types = set(map(type, values))
    present = [v for v in values if v is not None] if _NONE in types else values
    types.discard(_NONE)
    if not types:
        return values
    if int in types:
        ints = present if types == {int} else [v for v in present if type(v) is int]
        if min(ints) < SQLITE_MIN_INT or max(ints) > SQLITE_MAX_INT:
            raise ValueError("an integer past 64 bits")
    if kind != "json" and types <= _SCALARS:
        if str in types:
            "\x00".join(present if types == {str} else [v for v in present if type(v) is str]).encode("utf-8")
        if kind == "bool":
            return list(map(int, values)) if types == {bool} and present is values else _as_bits(values)
        return values
    encoded = [None if v is None else "".join(_encode_value(v, 0)) for v in values]
    text = "[" + ",".join([e for e in encoded if e is not None]) + "]"
    text.encode("utf-8")
    if not _shallow(text):
        raise ValueError("nested deep: look record by record")
    if kind == "json":
        return encoded
    if kind == "bool":
        return _as_bits(values)
    return values


def _as_bits(values: Iterable[Any]) -> list[int | None]:
    """A bool column as SQLite stores it: 0 or 1 (None stays None)."""
    return [None if v is None else int(bool(v)) for v in values]


def _same_layout(rows: list[dict[str, Any]], names: tuple[str, ...]) -> bool:
    """True when every row holds exactly ``names``, in that order (as a record model's dumps do)."""
    return {tuple(row) for row in rows} == {names}


def _transpose(rows: list[dict[str, Any]]) -> list[Sequence[Any]]:
    """The columns of rows that all hold the same keys in the same order (a ValueError where lengths differ)."""
    return list(zip(*map(dict.values, rows), strict=True))


def _shallow(text: str) -> bool:
    """True when the JSON ``text`` nests fewer than ``MAX_DEPTH // 2`` levels."""
    unescaped = text.replace("\\\\", "").replace('\\"', "")  # no escaped quote left inside a string
    brackets = _NOT_BRACKET.sub("", "".join(unescaped.split('"')[::2]))  # outside the strings
    for _ in range(MAX_DEPTH // 2):  # each pass drops the innermost level
        brackets, found = _INNERMOST.subn("", brackets)
        if not found:
            return not brackets
    return False


# ---------------------------------------------------------------------------------------------- the insert
def encode_columns(table: Table, rows: list[dict[str, Any]]) -> Columns:
    """The values of rows (any keys, any order) as SQLite stores them, unchecked: what :func:`stored_columns`
    makes of a table that passed its check."""
    if _same_layout(rows, table.column_names):
        transposed: Iterable[Sequence[Any]] = _transpose(rows)
    else:
        transposed = ([row.get(c) for row in rows] for c in table.column_names)
    columns: Columns = []
    for column, values in zip(table.columns, transposed, strict=True):
        if column.kind == "json":
            columns.append(encode_json_column(values))
        elif column.kind == "bool":
            columns.append(_as_bits(values))
        else:
            columns.append(values)
    return columns


ROWS_PER_STATEMENT = 64
"""Rows bound to one INSERT: a statement a row spends as long in the driver's per-statement steps as in SQLite."""


def insert_columns(conn: sqlite3.Connection, table: Table, columns: Columns) -> None:
    """Insert a table's rows given as columns, :data:`ROWS_PER_STATEMENT` rows a statement."""
    width = len(columns)
    per = max(1, min(ROWS_PER_STATEMENT, conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // width))
    flat = list(chain.from_iterable(zip(*columns, strict=True)))
    count = len(flat) // width
    whole = count - count % per
    step = per * width
    if whole:
        conn.executemany(_insert_sql(table, per), [flat[i : i + step] for i in range(0, whole * width, step)])
    if whole < count:
        conn.execute(_insert_sql(table, count - whole), flat[whole * width :])


@functools.cache
def _insert_sql(table: Table, rows: int) -> str:
    quoted = ", ".join(f'"{n}"' for n in table.column_names)
    one = f"({', '.join('?' * len(table.columns))})"
    return f'INSERT INTO "{table.name}" ({quoted}) VALUES {", ".join([one] * rows)}'
