"""How a Claw-Eval record sits in one of our tables, and how it reads back exactly as Claw-Eval's mock gives it.

Used by the inventory, todo, scheduler, config and rss profiles. Claw-Eval's mocks keep each record as a free JSON
object (``{"task_id": "T1", "title": ..., "tags": [...]}``); each key goes to a column of our record where one holds
it (``tags`` → ``labels``). A value our column cannot hold *exactly* (a time with an offset, a date without a time,
an error rate in per cent, a status our service does not know) keeps its Claw-Eval form in the record's
``custom_fields`` under its own key, beside our column's reading of it where there is one; keys we have no column
for go there too. ``custom_fields["_claw"]`` notes the record's Claw-Eval keys in their order and its position in
the mock's list (records come back in that order, as the mock lists them), so a key that was absent stays absent
and one that was null stays null.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from typing import Annotated, Any

from pydantic import TypeAdapter, ValidationError

from coworkenv.servers.kit import Record, format_time, parse_time
from coworkenv.servers.kit.audit import same_json
from coworkenv.servers.kit.records import SEED_CONTEXT
from coworkenv.servers.kit.tool import ToolSpec

META = "_claw"
"""The key of ``custom_fields`` that notes a record's Claw-Eval keys and its position: ``{"keys", "position"}``."""
UNKNOWN_TIME = "1970-01-01T00:00:00Z"
"""What a required time column of ours holds when the Claw-Eval record gives no time (it has no such key)."""

Row = dict[str, Any]


def same(value: Any) -> Any:
    return value


def time_into(value: Any) -> str | None:
    """A Claw-Eval time as our canonical UTC text (a date alone is its midnight, a time without a zone UTC)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError("not a time")
    return format_time(parse_time(value))


def day_into(value: Any) -> str | None:
    """A Claw-Eval due date as our calendar day (``YYYY-MM-DD``): the day of a date or a time."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError("not a day")
    return date.fromisoformat(value[:10]).isoformat()


def cents_into(value: Any) -> int | None:
    """A Claw-Eval price in units (``29.9``) as our cents (``2990``); a fraction of a cent is not a price of ours."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError("not a number")
    cents = round(value * 100)
    if abs(cents - value * 100) > 1e-6:
        raise ValueError("a fraction of a cent")
    return cents


def cents_back(value: Any) -> float | None:
    return None if value is None else value / 100


@dataclass(frozen=True)
class Column:
    """Where one Claw-Eval key goes: our column ``name``, read ``into`` it and ``back`` out of it."""

    name: str
    into: Callable[[Any], Any] = same
    back: Callable[[Any], Any] = same


def time_column(name: str) -> Column:
    return Column(name, time_into)


def cents_column(name: str) -> Column:
    return Column(name, cents_into, cents_back)


@cache
def _adapter(model: type[Record], name: str) -> TypeAdapter[Any]:
    info = model.model_fields[name]
    hint: Any = Annotated[info.annotation, info]
    return TypeAdapter(hint)


@dataclass(frozen=True)
class Layout:
    """The records of one Claw-Eval collection in one of our tables."""

    model: type[Record]
    id_key: str | None
    """The Claw-Eval key that holds the record's id (our ``id``); None where its records have none (an order)."""
    columns: Mapping[str, Column]
    """Claw-Eval key → our column. Several keys may name one column: the first the record has holds it."""
    fallback: Mapping[str, Any] = field(default_factory=dict)
    """Values for our required columns where the record gives none we can hold."""

    def store(self, column: Column, value: Any) -> tuple[Any, bool] | None:
        """``value`` as our column holds it and whether it reads back the same; None when the column cannot hold
        it at all."""
        try:
            held = _adapter(self.model, column.name).validate_python(column.into(value), context=SEED_CONTEXT)
            return held, same_json(column.back(held), value)
        except (ValueError, TypeError, ValidationError):
            return None

    def owner(self, keys: Iterable[str], column: str) -> str | None:
        """The key of a record that holds ``column`` (the first of its keys that maps to it)."""
        return next((k for k in keys if k in self.columns and self.columns[k].name == column), None)

    def row(
        self,
        claw: Mapping[str, Any],
        position: int,
        *,
        record_id: str | None = None,
        skip: Iterable[str] = (),
        extra: Mapping[str, Any] | None = None,
    ) -> Row:
        """Our record of a Claw-Eval record. ``skip``: keys kept elsewhere (another table), noted but not stored;
        ``extra``: values of our columns no Claw-Eval key gives."""
        keys = list(claw)
        rid = record_id
        if self.id_key is not None:
            rid = claw.get(self.id_key)
            if not isinstance(rid, str) or not rid:
                raise ValueError(f"its {self.id_key!r} must be a non-empty text, not {json.dumps(rid)[:60]}")
        row: Row = {"id": rid}
        custom: dict[str, Any] = {}
        left_out = {self.id_key, *skip}
        for key, value in claw.items():
            if key in left_out:
                continue
            column = self.columns.get(key)
            if column is not None and self.owner(keys, column.name) == key:
                held = self.store(column, value)
                if held is not None:
                    row[column.name] = held[0]
                    if held[1]:
                        continue
            custom[key] = value
        for name, value in {**self.fallback, **(extra or {})}.items():
            row.setdefault(name, value)
        custom[META] = {"keys": keys, "position": position}
        row["custom_fields"] = custom
        return row

    def claw(self, row: Mapping[str, Any], given: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The record as Claw-Eval's mock gives it. ``given``: the values of the keys kept elsewhere."""
        custom = row.get("custom_fields") or {}
        out: dict[str, Any] = {}
        for key in meta(row)["keys"]:
            if key == self.id_key:
                out[key] = row["id"]
            elif key in custom:
                out[key] = custom[key]
            elif given is not None and key in given:
                out[key] = given[key]
            elif key in self.columns:
                out[key] = self.columns[key].back(row.get(self.columns[key].name))
        return out

    def put(self, row: Mapping[str, Any], values: Mapping[str, Any]) -> Row:
        """The changes to our record that set these Claw-Eval keys (a key the record lacked is added last)."""
        custom = dict(row.get("custom_fields") or {})
        keys = list(meta(row)["keys"])
        changes: Row = {}
        for key, value in values.items():
            if key not in keys:
                keys.append(key)
            custom.pop(key, None)
            column = self.columns.get(key)
            held = None
            if column is not None and self.owner(keys, column.name) == key:
                held = self.store(column, value)
                if held is not None:
                    changes[column.name] = held[0]
            if held is None or not held[1]:
                custom[key] = value
        custom[META] = {**meta(row), "keys": keys}
        changes["custom_fields"] = custom
        return changes

    def free(self, row: Mapping[str, Any], column: str) -> bool:
        """Whether no Claw-Eval key of the record holds ``column`` (so setting it changes nothing Claw-Eval sees)."""
        return self.owner(meta(row)["keys"], column) is None


def meta(row: Mapping[str, Any]) -> dict[str, Any]:
    """A record's Claw-Eval keys and position (a record written without them: its own fields, last)."""
    found = (row.get("custom_fields") or {}).get(META)
    if isinstance(found, dict) and isinstance(found.get("keys"), list):
        return found
    return {"keys": [], "position": 1 << 40}


def in_order(rows: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Records in the order of the mock's list."""
    return sorted(rows, key=lambda r: (meta(r)["position"], str(r["id"])))


def next_position(rows: Iterable[Mapping[str, Any]]) -> int:
    """The position of a record appended to the mock's list."""
    return max((int(meta(r)["position"]) for r in rows if meta(r)["keys"]), default=-1) + 1


def fixture_list(fixtures: Mapping[str, Any], service: str) -> tuple[str, list[dict[str, Any]]]:
    """The one fixture file a mock loads (name, records); ValueError naming the file when it is not a list of
    objects. No file: no records."""
    if not fixtures:
        return "", []
    if len(fixtures) > 1:
        raise ValueError(f"{service}: Claw-Eval's mock loads one fixture file, got {', '.join(sorted(fixtures))}")
    name, data = next(iter(fixtures.items()))
    if not isinstance(data, list):
        raise ValueError(f"{service} fixture {name}: must be a JSON list of records, not {type(data).__name__}")
    for index, record in enumerate(data):
        if not isinstance(record, dict):
            raise ValueError(f"{service} fixture {name}: record {index} must be a JSON object")
    return name, data


def audit_calls(
    rows: Iterable[Mapping[str, Any]],
    tools: Iterable[ToolSpec],
    endpoints: Mapping[str, str],
    ignored: Mapping[str, tuple[str, ...]] | None = None,
) -> list[dict[str, Any]]:
    """The ``calls`` of a mock's ``/audit``: each call a route answered (our ``ok`` rows of its tools, in order) as
    ``{"endpoint", "request_body", "response_body", "timestamp"}``. The request body is the request model's dump:
    every field, defaults filled in, without the arguments the mock's model does not have (``ignored``)."""
    specs = {spec.name: spec for spec in tools}
    calls = []
    for row in rows:
        name = row["tool"]
        if row["outcome"] != "ok" or name not in endpoints or name not in specs:
            continue
        request = specs[name].args_model.model_validate(row["arguments"] or {}).model_dump(mode="json")
        for key in (ignored or {}).get(name, ()):
            request.pop(key, None)
        calls.append(
            {
                "endpoint": endpoints[name],
                "request_body": request,
                "response_body": row["result"],
                "timestamp": row["sim_time"],
            }
        )
    return calls


def results(rows: Iterable[Mapping[str, Any]], tools: Iterable[str], key: str) -> list[Any]:
    """``result[key]`` of each ``ok`` call of these tools that has it, in order (what a mock kept of each call)."""
    names = set(tools)
    return [
        row["result"][key]
        for row in rows
        if row["tool"] in names and row["outcome"] == "ok" and isinstance(row["result"], dict) and key in row["result"]
    ]


def checked(model: type[Record], row: Row, where: str) -> Row:
    """``row`` validated as a seed record of ``model``; ValueError naming ``where`` (file and record)."""
    try:
        return model.model_validate(row, context=SEED_CONTEXT).model_dump(mode="json")
    except ValidationError as exc:
        problem = exc.errors()[0]
        spot = ".".join(str(p) for p in problem["loc"])
        raise ValueError(f"{where}: field {spot!r}: {problem['msg']}") from None


def unique(rows: list[Row], where: str) -> None:
    """ValueError naming the record whose id an earlier record has."""
    seen: set[str] = set()
    for index, row in enumerate(rows):
        if row["id"] in seen:
            raise ValueError(f"{where}: record {index} repeats the id {row['id']!r}")
        seen.add(row["id"])
