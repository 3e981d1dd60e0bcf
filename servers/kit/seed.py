"""Seed records: a JSON (or YAML) document ``{table: [records]}`` per service.

The whole seed is validated before anything is written; the first problem is reported with the
service, table, record index and field, and nothing is loaded.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from coworkenv.servers.kit.audit import MAX_DEPTH, argument_problem, clip
from coworkenv.servers.kit.errors import SeedError
from coworkenv.servers.kit.files import DocumentError, read_document
from coworkenv.servers.kit.records import SEED_CONTEXT

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
        for index, record in enumerate(records):
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
        if len(set(ids)) != len(ids) or not _storable_in_bulk(clean):  # find the first problem, record by record
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
_LONG_NUMBER = re.compile(r"\d{19,}")
_encode_json = json.JSONEncoder(ensure_ascii=False).encode


def _storable_in_bulk(rows: list[dict[str, Any]]) -> bool:
    """True when no record of a validated table can break :func:`_check_storable`, checked on the table's JSON
    at C speed: valid Unicode, no number of 19 digits or more (one might not fit 64 bits), nesting well within
    :data:`MAX_DEPTH`. False says only "look record by record" (which names the first bad one)."""
    try:
        text = _encode_json(rows)
        text.encode("utf-8")
    except (UnicodeEncodeError, ValueError, TypeError, RecursionError):
        return False
    if _LONG_NUMBER.search(text):
        return False
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
        raise SeedError(f"{where}: {problem.replace('arguments', 'the record', 1)}")


def _check_references(service: Service, seed: Seed) -> None:
    """Every reference field names a record of its target table in the same seed."""
    ids = {name: {r["id"] for r in rows} for name, rows in seed.items()}
    for table in service.tables:
        for ref_field, target in table.refs:
            known = ids.get(target, set())
            for index, row in enumerate(seed.get(table.name, [])):
                value = row.get(ref_field)
                if value is not None and value not in known:
                    raise SeedError(
                        f"{service.name}.{table.name}[{index}] field {ref_field!r}: {value!r} is not the id of "
                        f"any {target} record in the seed"
                    )


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
