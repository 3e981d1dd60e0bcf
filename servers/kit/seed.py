"""Seed records: a JSON (or YAML) document ``{table: [records]}`` per service.

The whole seed is validated before anything is written; the first problem is reported with the
service, table, record index and field, and nothing is loaded.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import sqlite3
from collections.abc import Iterator, Mapping
from itertools import islice
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from coworkenv.servers.kit.audit import argument_problem, clip
from coworkenv.servers.kit.columns import (
    SQLITE_MAX_INT,
    SQLITE_MIN_INT,
    Columns,
    encode_columns,
    insert_columns,
    plain_rows,
    stored_columns,
)
from coworkenv.servers.kit.errors import SeedError
from coworkenv.servers.kit.files import DocumentError, read_document
from coworkenv.servers.kit.records import SEED_CONTEXT, Seed, Table
from coworkenv.servers.kit.seedmodels import fast_model
from coworkenv.servers.kit.service import Service


@functools.cache
def _adapter(model: type[BaseModel]) -> TypeAdapter[list[Any]]:
    return TypeAdapter(list[model])  # type: ignore[valid-type]


@functools.cache
def _fast_adapter(model: type[BaseModel]) -> TypeAdapter[list[Any]] | None:
    fast = fast_model(model)
    return None if fast is None else TypeAdapter(list[fast])  # type: ignore[valid-type]


def _validate(model: type[BaseModel], records: list[Any]) -> list[Any]:
    """The records validated by ``model``: first with canonical times checked inside pydantic-core
    (:mod:`.seedmodels`), and by the model itself when that refuses them (it normalises, or names the error)."""
    fast = _fast_adapter(model)
    if fast is not None:
        try:
            return fast.validate_python(records, context=SEED_CONTEXT)
        except ValidationError:
            pass
    return _adapter(model).validate_python(records, context=SEED_CONTEXT)


def parse_seed(service: Service, seed: Mapping[str, Any]) -> Seed:
    """Validate a seed document against the service's record models; return normalised records."""
    return parse_seed_columns(service, seed)[0]


def parse_seed_columns(service: Service, seed: Mapping[str, Any]) -> tuple[Seed, dict[str, Columns]]:
    """:func:`parse_seed`, and per table the values as :func:`insert_seed` stores them, a column at a time, where
    the storability check made them on its way (what ``insert_seed`` then takes instead of encoding them again)."""
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


def _parse_seed(service: Service, seed: Mapping[str, Any]) -> tuple[Seed, dict[str, Columns]]:
    if not isinstance(seed, Mapping):
        raise SeedError(f"{service.name}: the seed must be an object {{table: [records]}}, got {type(seed).__name__}")
    out: Seed = {}
    encoded: dict[str, Columns] = {}
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
            models = _validate(table.model, records)
            plain = plain_rows(table, models)
            clean: list[dict[str, Any]] = plain[0] if plain else adapter.dump_python(models, mode="json")
        except ValidationError as exc:
            raise _validation_error(service.name, table_name, records, exc) from exc
        del models
        columns = stored_columns(table, *plain) if plain else stored_columns(table, clean)
        ids = columns[0] if columns else [row["id"] for row in clean]  # an empty table has no columns
        if columns is None or len(set(ids)) != len(ids):  # find the first problem, record by record
            seen: set[str] = set()
            for index, row in enumerate(clean):
                _check_storable(f"{service.name}.{table_name}[{index}]", row)
                if row["id"] in seen:
                    raise SeedError(f"{service.name}.{table_name}[{index}] field 'id': duplicate id {row['id']!r}")
                seen.add(row["id"])
        out[table_name] = clean
        if columns is not None:
            encoded[table_name] = columns
    _check_references(service, out)
    if service.check_seed is not None:
        service.check_seed(out)
    return out, encoded


def _validation_error(service: str, table: str, records: list[Any], exc: ValidationError) -> SeedError:
    """The first error of a table's validation, naming the record and field."""
    err = exc.errors()[0]
    bad_index, *loc = err["loc"]
    where = f"{service}.{table}[{bad_index}]"
    if not loc:  # a rule across the record's own fields: name the record rather than echo it whole
        bad = records[bad_index] if isinstance(bad_index, int) and bad_index < len(records) else {}
        named = f" (record id {clip(str(bad['id']), 80)!r})" if "id" in bad else ""
        return SeedError(f"{where} field '(record)': {err['msg'].removeprefix('Value error, ')}{named}")
    field = ".".join(str(p) for p in loc)
    return SeedError(
        f"{where} field {field!r}: {err['msg'].removeprefix('Value error, ')} (got {clip(repr(err.get('input')), 200)})"
    )


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


def insert_seed(
    conn: sqlite3.Connection, service: Service, seed: Seed, columns: Mapping[str, Columns] | None = None
) -> None:
    """Insert a seed :func:`parse_seed` returned into the service's empty tables, inside the caller's
    transaction, stored exactly as ``TableStore.insert`` stores a record: the values encoded a column at a time
    (JSON columns by the C encoder), or taken from ``columns`` (what :func:`parse_seed_columns` returned with this
    seed), bound many rows a statement; a table's indexes are built after its rows are in (one sort instead of a
    B-tree insert a row)."""
    with paused_gc():
        for name, rows in seed.items():
            if rows:
                table = service.tables_by_name[name]
                given = columns.get(name) if columns is not None else None
                _insert_table(conn, table, encode_columns(table, rows) if given is None else given, len(rows))


BULK_INDEX_ROWS = 512
"""From this many rows a table's indexes are dropped and built after its rows; below it the rows go into the
indexes as they are, so a small seed's database keeps the schema's layout (root pages) and its environments
share pooled connections (see :mod:`.images`)."""


def _insert_table(conn: sqlite3.Connection, table: Table, columns: Columns, count: int) -> None:
    indexes = table.ddl()[1:] if count >= BULK_INDEX_ROWS else []
    empty = not indexes or conn.execute(f'SELECT 1 FROM "{table.name}" LIMIT 1').fetchone() is None
    if indexes and empty:
        for name in table.index_names:
            conn.execute(f'DROP INDEX IF EXISTS "{name}"')
    insert_columns(conn, table, by_id(columns) if count >= BULK_INDEX_ROWS else columns)
    if indexes and empty:
        for statement in indexes:
            conn.execute(statement)


def by_id(columns: Columns) -> Columns:
    """A table's columns with their rows in the order of their ids (column 0). Every record table is keyed by
    its id (``WITHOUT ROWID``), so the order rows go in changes nothing stored, but in id order each lands at
    the end of the B-tree instead of somewhere in it: about a quarter less time in the inserts of a large seed. Python orders
    strings by code point, as SQLite's BINARY collation orders their UTF-8 bytes."""
    ids = columns[0]
    try:
        if all(a < b for a, b in zip(ids, islice(ids, 1, None), strict=False)):
            return columns
        order = sorted(range(len(ids)), key=ids.__getitem__)
    except TypeError:  # ids of a service of someone's own that Python cannot order together: as given
        return columns
    return [[column[i] for i in order] for column in columns]


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
