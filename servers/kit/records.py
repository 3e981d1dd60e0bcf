"""Record models and the tables built from them.

Every service table is one pydantic model; the SQLite columns, the seed validation and the state dump
all come from it, so a service declares its data once. Lists, dicts and nested models are stored as
JSON text; booleans as 0/1; times as canonical UTC text (``2026-03-02T09:00:00Z``) so they sort.
"""

from __future__ import annotations

import re
import types
import typing
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationInfo

from coworkenv.servers.kit.clock import format_time, parse_time

_CANONICAL = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


Seed = dict[str, list[dict[str, Any]]]
"""Seed records, validated: ``{table: [records]}`` (see :mod:`coworkenv.servers.kit.seed`)."""

SEED_CONTEXT = {"seed": True}
"""The validation context of seed records: there a time must say its zone (a tool argument may leave it out,
and is then read as UTC)."""


def _normalise_time(value: Any, info: ValidationInfo) -> Any:
    if isinstance(value, str) and _CANONICAL.fullmatch(value):
        return value
    if isinstance(value, str | datetime):
        try:
            parsed = parse_time(value)
        except ValueError as exc:
            raise ValueError(f"not an ISO 8601 time: {str(value)[:60]!r}; write it like 2026-03-02T09:00:00Z") from exc
        if isinstance(info.context, dict) and info.context.get("seed") and _naive(value):
            raise ValueError(
                f"the time {str(value)[:60]!r} has no zone; add Z for UTC or an offset (2026-03-02T09:00:00Z, "
                "2026-03-02T10:00:00+01:00)"
            )
        return format_time(parsed)
    return value


def _naive(value: str | datetime) -> bool:
    if isinstance(value, datetime):
        return value.tzinfo is None
    text = value.strip()
    return not text.endswith(("Z", "z")) and datetime.fromisoformat(text).tzinfo is None


Timestamp = Annotated[str, BeforeValidator(_normalise_time)]
"""A time stored as canonical UTC text; accepts any ISO 8601 string or a datetime."""


class Record(BaseModel):
    """Base of every stored record: an ``id`` and no unknown fields."""

    model_config = ConfigDict(extra="forbid")

    id: str


_SQL_TYPES = {str: "TEXT", int: "INTEGER", float: "REAL", bool: "INTEGER"}


def _column_kind(annotation: Any) -> str:
    """One of 'text', 'int', 'real', 'bool', 'json' for a field annotation."""
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _column_kind(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _column_kind(inner[0]) if len(inner) == 1 else "json"
    if origin is Literal:
        first = typing.get_args(annotation)[0]
        return _column_kind(type(first))
    if origin in (list, dict, tuple, set) or annotation in (list, dict):
        return "json"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "json"
    if annotation is bool:
        return "bool"
    if annotation is int:
        return "int"
    if annotation is float:
        return "real"
    if annotation is str:
        return "text"
    return "json"


@dataclass(frozen=True)
class Column:
    name: str
    kind: str  # text | int | real | bool | json

    @property
    def sql_type(self) -> str:
        return {"text": "TEXT", "int": "INTEGER", "real": "REAL", "bool": "INTEGER", "json": "TEXT"}[self.kind]


@dataclass(frozen=True)
class Table:
    """A service table: its record model, the prefix of the ids it hands out, and extra indexes."""

    name: str
    model: type[Record]
    id_prefix: str
    indexes: tuple[tuple[str, ...], ...] = ()
    refs: tuple[tuple[str, str], ...] = ()
    """(field, table) pairs: the field holds the id of a record of that table (None allowed); seeds are
    checked against them so a task never starts with a dangling reference."""
    volatile: tuple[str, ...] = ()
    """Fields the service bumps beside a real change (``updated_at``, a version counter): a change of these
    alone is no change to the grader's state diff."""
    history: bool = False
    """A table of history the service writes beside another change (document revisions): the state diff
    leaves it out, the change it records is seen in its own table."""
    columns: tuple[Column, ...] = field(init=False)

    def __post_init__(self) -> None:
        cols = tuple(Column(n, _column_kind(f.annotation)) for n, f in self.model.model_fields.items())
        if not cols or cols[0].name != "id":
            raise TypeError(f"table {self.name}: the record model must start with an 'id' field")
        object.__setattr__(self, "columns", cols)

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def ddl(self) -> list[str]:
        cols = ", ".join(f'"{c.name}" {c.sql_type}' + (" PRIMARY KEY" if c.name == "id" else "") for c in self.columns)
        out = [f'CREATE TABLE IF NOT EXISTS "{self.name}" ({cols}) WITHOUT ROWID']
        for name, idx in zip(self.index_names, self.indexes, strict=True):
            out.append(f'CREATE INDEX IF NOT EXISTS "{name}" ON "{self.name}" ({", ".join(idx)})')
        return out

    @property
    def index_names(self) -> tuple[str, ...]:
        """The names of the table's extra indexes, in :attr:`indexes` order."""
        return tuple(f"ix_{self.name}_{'_'.join(idx)}" for idx in self.indexes)
