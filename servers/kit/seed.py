"""Seed records: a JSON (or YAML) document ``{table: [records]}`` per service.

The whole seed is validated before anything is written; the first problem is reported with the
service, table, record index and field, and nothing is loaded.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from coworkenv.servers.kit.errors import SeedError
from pydantic import ValidationError

if TYPE_CHECKING:
    from coworkenv.servers.kit.service import Service

Seed = dict[str, list[dict[str, Any]]]


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
        seen: set[str] = set()
        clean: list[dict[str, Any]] = []
        for index, record in enumerate(records):
            where = f"{service.name}.{table_name}[{index}]"
            if not isinstance(record, Mapping):
                raise SeedError(f"{where}: expected an object, got {type(record).__name__}")
            try:
                row = table.model.model_validate(record).model_dump(mode="json")
            except ValidationError as exc:
                err = exc.errors()[0]
                field = ".".join(str(p) for p in err["loc"]) or "(record)"
                raise SeedError(f"{where} field {field!r}: {err['msg']} (got {err.get('input')!r})") from exc
            if row["id"] in seen:
                raise SeedError(f"{where} field 'id': duplicate id {row['id']!r}")
            seen.add(row["id"])
            clean.append(row)
        out[table_name] = clean
    return out


def load_seed(path: str | Path) -> dict[str, Any]:
    """Read a seed document from a .json, .yaml or .yml file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise SeedError(f"cannot read seed file {p}: {exc.strerror}") from exc
    try:
        data = yaml.safe_load(text) if p.suffix in (".yaml", ".yml") else json.loads(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise SeedError(
            f"seed file {p} is not valid {'YAML' if p.suffix in ('.yaml', '.yml') else 'JSON'}: {exc}"
        ) from exc
    if not isinstance(data, dict):
        raise SeedError(f"seed file {p} must hold an object {{table: [records]}}")
    return data
