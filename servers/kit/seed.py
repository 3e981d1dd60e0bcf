"""Seed records: a JSON (or YAML) document ``{table: [records]}`` per service.

The whole seed is validated before anything is written; the first problem is reported with the
service, table, record index and field, and nothing is loaded.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import json
import re
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from coworkenv.servers.kit.audit import MAX_DEPTH, argument_problem, clip
from coworkenv.servers.kit.errors import SeedError
from coworkenv.servers.kit.files import DocumentError, read_document
from coworkenv.servers.kit.records import SEED_CONTEXT, Table

if TYPE_CHECKING:
    from coworkenv.servers.kit.service import Service

Seed = dict[str, list[dict[str, Any]]]
SQLITE_MAX_INT = 2**63 - 1
SQLITE_MIN_INT = -(2**63)


@functools.cache
def _adapter(model: type[BaseModel]) -> TypeAdapter[list[Any]]:
    return TypeAdapter(list[model])  # type: ignore[valid-type]


def parse_seed(service: Service, seed: Mapping[str, Any]) -> Seed:
    """Validate a seed document against the service's record models; return normalised records."""
    with paused_gc():
        return _parse_seed(service, seed)


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic garbage collector off while a bulk step makes many objects and no cycles (it would walk the
    young records again and again: a quarter of a cold seeding's time); back on after, if it was on."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _parse_seed(service: Service, seed: Mapping[str, Any]) -> Seed:
    if not isinstance(seed, Mapping):
        raise SeedError(f"{service.name}: the seed must be an object {{table: [records]}}, got {type(seed).__name__}")
    out: Seed = {}
    for table_name, records in seed.items():
        table = service.tables_by_name.get(table_name)
        if table is None:
            known = ", ".join(service.tables_by_name)
            raise SeedError(f"{service.name}: unknown table {table_name!r} in the seed; tables are: {known}")
        if not isinstance(records, list):
            raise SeedError(f"{service.name}.{table_name}: expected a list of records, got {type(records).__name__}")
        for index, record in enumerate(() if set(map(type, records)) <= {dict} else records):
            if not isinstance(record, Mapping):
                raise SeedError(
                    f"{service.name}.{table_name}[{index}]: expected an object, got {type(record).__name__}"
                )
        adapter = _adapter(table.model)
        try:
            clean: list[dict[str, Any]] = adapter.dump_python(
                adapter.validate_python(records, context=SEED_CONTEXT), mode="json"
            )
        except ValidationError as exc:
            err = exc.errors()[0]
            bad_index, *loc = err["loc"]
            where = f"{service.name}.{table_name}[{bad_index}]"
            if not loc:  # a rule across the record's own fields: name the record rather than echo it whole
                bad = records[bad_index] if isinstance(bad_index, int) and bad_index < len(records) else {}
                named = f" (record id {clip(str(bad['id']), 80)!r})" if "id" in bad else ""
                raise SeedError(f"{where} field '(record)': {err['msg'].removeprefix('Value error, ')}{named}") from exc
            field = ".".join(str(p) for p in loc)
            raise SeedError(
                f"{where} field {field!r}: {err['msg'].removeprefix('Value error, ')} (got {clip(repr(err.get('input')), 200)})"
            ) from exc
        ids = [row["id"] for row in clean]
        if len(set(ids)) != len(ids) or not _storable_in_bulk(table, clean):  # find the first problem, record by record
            seen: set[str] = set()
            for index, row in enumerate(clean):
                _check_storable(f"{service.name}.{table_name}[{index}]", row)
                if row["id"] in seen:
                    raise SeedError(f"{service.name}.{table_name}[{index}] field 'id': duplicate id {row['id']!r}")
                seen.add(row["id"])
        out[table_name] = clean
    _check_references(service, out)
    if service.check_seed is not None:
        service.check_seed(out)
    return out


_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_INNERMOST = re.compile(r"\[\]|\{\}")
_SCALARS = frozenset({str, int, float, bool})


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


def _storable_in_bulk(table: Table, rows: list[dict[str, Any]]) -> bool:
    """True when no record of a validated table can break :func:`_check_storable`, checked column by column at C
    speed: text that encodes as UTF-8, top-level integers within 64 bits, JSON nesting well within
    :data:`MAX_DEPTH`. False says only "look record by record" (which names the first bad one)."""
    if not rows:
        return True
    if not _same_layout(rows, table.column_names):  # a model that dumps more than its columns
        return False
    try:
        for column, values in zip(table.columns, _transpose(rows), strict=True):
            present = [v for v in values if v is not None]
            if not present:
                continue
            types = set(map(type, present))
            if int in types:
                ints = [v for v in present if type(v) is int]
                if min(ints) < SQLITE_MIN_INT or max(ints) > SQLITE_MAX_INT:
                    return False
            if column.kind != "json" and types <= _SCALARS:
                if str in types:
                    "\x00".join([v for v in present if type(v) is str]).encode("utf-8")
                continue
            text = "[" + ",".join(["".join(_encode_value(v, 0)) for v in present]) + "]"
            text.encode("utf-8")
            if not _shallow(text):
                return False
    except (UnicodeEncodeError, ValueError, TypeError, RecursionError):
        return False
    return True


def _same_layout(rows: list[dict[str, Any]], names: tuple[str, ...]) -> bool:
    """True when every row holds exactly ``names``, in that order (as a record model's dumps do)."""
    return {tuple(row) for row in rows} == {names}


def _transpose(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
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


def _check_storable(where: str, row: Mapping[str, Any]) -> None:
    """Every value fits SQLite: integers in 64 bits, text that is valid Unicode."""
    for name, value in row.items():
        if type(value) is int and not SQLITE_MIN_INT <= value <= SQLITE_MAX_INT:
            raise SeedError(
                f"{where} field {name!r}: {clip(str(value), 40)} is out of range: integers must lie within "
                f"±{SQLITE_MAX_INT}"
            )
    problem = argument_problem(dict(row))
    if problem is not None:
        said = problem.replace("the arguments nest", "the record nests", 1).replace("arguments", "the record", 1)
        raise SeedError(f"{where}: {said}")


def _check_references(service: Service, seed: Seed) -> None:
    """Every reference field names a record of its target table in the same seed."""
    ids = {name: {r["id"] for r in rows} for name, rows in seed.items()}
    for table in service.tables:
        rows = seed.get(table.name, [])
        for ref_field, target in table.refs:
            known = ids.get(target, set())
            values = [row.get(ref_field) for row in rows]
            try:
                if set(values).issubset(known) or set(values).difference(known) == {None}:
                    continue
            except TypeError:  # something unhashable: look value by value
                pass
            for index, value in enumerate(values):
                if value is not None and value not in known:
                    raise SeedError(
                        f"{service.name}.{table.name}[{index}] field {ref_field!r}: {value!r} is not the id of "
                        f"any {target} record in the seed"
                    )


def insert_seed(conn: sqlite3.Connection, service: Service, seed: Seed) -> None:
    """Insert a seed :func:`parse_seed` returned into the service's empty tables, inside the caller's
    transaction: one ``executemany`` a table, the values encoded a column at a time (JSON columns by the C
    encoder), stored exactly as ``TableStore.insert`` stores a record; a table's indexes are built after its
    rows are in (one sort instead of a B-tree insert a row)."""
    with paused_gc():
        for name, rows in seed.items():
            if rows:
                _insert_table(conn, service.tables_by_name[name], rows)


def _insert_table(conn: sqlite3.Connection, table: Table, rows: list[dict[str, Any]]) -> None:
    if _same_layout(rows, table.column_names):
        transposed: Iterable[Sequence[Any]] = _transpose(rows)
    else:
        transposed = ([row.get(c) for row in rows] for c in table.column_names)
    columns: list[Sequence[Any]] = []
    for column, values in zip(table.columns, transposed, strict=True):
        if column.kind == "json":
            columns.append(encode_json_column(values))
        elif column.kind == "bool":
            columns.append([None if v is None else int(bool(v)) for v in values])
        else:
            columns.append(values)
    indexes = table.ddl()[1:]
    empty = not indexes or conn.execute(f'SELECT 1 FROM "{table.name}" LIMIT 1').fetchone() is None
    if indexes and empty:
        for name in table.index_names:
            conn.execute(f'DROP INDEX IF EXISTS "{name}"')
    conn.executemany(_insert_sql(table), zip(*columns, strict=True))
    if indexes and empty:
        for statement in indexes:
            conn.execute(statement)


@functools.cache
def _insert_sql(table: Table) -> str:
    quoted = ", ".join(f'"{n}"' for n in table.column_names)
    return f'INSERT INTO "{table.name}" ({quoted}) VALUES ({", ".join("?" * len(table.columns))})'


def load_seed(path: str | Path) -> dict[str, Any]:
    """Read a seed document from a .json, .yaml or .yml file; a one-line :class:`SeedError` for a file that
    cannot be read, is not UTF-8, does not parse or nests absurdly deep."""
    p = Path(path)
    try:
        data = read_document(p, "seed")
    except DocumentError as exc:
        raise SeedError(str(exc)) from exc
    if not isinstance(data, dict):
        raise SeedError(f"seed file {p} must hold an object {{table: [records]}}")
    return data
