"""Claw-Eval fixture records on our records and back, for the helpdesk, finance, notes and kb profiles.

A Claw-Eval mock keeps its fixture records as free JSON objects and answers with them as they are. We keep each
as one of our records: the fixture keys that have a field of ours go there (``ticket_id`` → ``id``, ``title`` →
``subject``), and whatever our field cannot give back exactly (a key we have no field for, a priority
``'critical'`` our enum calls ``'urgent'``, a time written ``+08:00``, an amount written ``45000`` rather than
``45000.0``) stays in the record's ``custom_fields`` as the fixture wrote it. :meth:`FieldMap.view` rebuilds the
fixture's object from the two, and :meth:`FieldMap.assign` writes a key the way the mock would, keeping both
halves in step. The last helpers rebuild the ``calls`` list every mock's ``/audit`` route returns from our audit
rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from pydantic import BaseModel, ValidationError

from coworkenv.servers.kit import Record, ToolContext, parse_time
from coworkenv.servers.kit.clock import format_time
from coworkenv.servers.kit.tool import ToolSpec


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""A fixture key that is absent (as opposed to present with a null value)."""


def same(a: Any, b: Any) -> bool:
    """Whether two JSON values are written alike (``45000`` is not ``45000.0``, ``1`` is not ``true``)."""
    if a is MISSING or b is MISSING:
        return a is b
    return json.dumps(a, sort_keys=True, ensure_ascii=False) == json.dumps(b, sort_keys=True, ensure_ascii=False)


@dataclass(frozen=True)
class Mapped:
    """A fixture key kept in a field of ours: ``to_ours`` (given MISSING when the key is absent) and ``back`` (our
    value as the fixture would write it, MISSING for 'absent')."""

    key: str
    field: str
    to_ours: Callable[[Any], Any] = lambda v: v
    back: Callable[[Any], Any] = lambda v: v


def text_or_missing(value: Any) -> Any:
    """Our text field back as a fixture key: an empty text is an absent key."""
    return value if value else MISSING


def text_or_empty(value: Any) -> str:
    return value if isinstance(value, str) else ""


def list_or_missing(value: Any) -> Any:
    return value if value else MISSING


def strings_or_empty(value: Any) -> list[str]:
    return value if isinstance(value, list) and all(isinstance(v, str) for v in value) else []


def to_time(value: Any) -> str:
    """A fixture's time (``2026-03-24T14:00:00``, ``…+08:00``, ``2026-02-27``) as our canonical UTC text; a time
    without a zone is read as UTC. ValueError when it is no time."""
    if isinstance(value, str):
        text = value.strip()
        try:
            return format_time(parse_time(text))
        except ValueError:
            pass
    raise ValueError(f"{str(value)[:60]!r} is not an ISO 8601 time or day")


def claw_time(moment: str | datetime) -> str:
    """A time as the mocks stamp one (``datetime.now(timezone.utc).isoformat()``): ``2026-03-02T09:00:00+00:00``."""
    return parse_time(moment).isoformat()


def claw_now(ctx: ToolContext) -> str:
    """The simulated now, stamped as the mocks stamp the real one."""
    return ctx.now.astimezone(UTC).isoformat()


def claw_today(ctx: ToolContext) -> str:
    """The simulated day, as the mocks write today (``%Y-%m-%d`` in UTC)."""
    return date.isoformat(ctx.now.astimezone(UTC).date())


@dataclass(frozen=True)
class FieldMap:
    """How one Claw-Eval record kind sits on one of our record models."""

    mapped: tuple[Mapped, ...]
    order: tuple[str, ...]
    """The fixture keys in the order the fixtures write them (a rebuilt object lists its keys so)."""
    elsewhere: tuple[str, ...] = ()
    """Fixture keys the profile keeps itself (a reporter's name as our user): never in ``custom_fields``."""
    by_key: dict[str, Mapped] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_key", {m.key: m for m in self.mapped})

    def ours(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """Our fields of a fixture record, with ``custom_fields`` holding what they cannot give back."""
        out: dict[str, Any] = {}
        custom: dict[str, Any] = {}
        for m in self.mapped:
            given = record.get(m.key, MISSING)
            value = out[m.field] = m.to_ours(given)
            if given is not MISSING and not same(m.back(value), given):
                custom[m.key] = given
            elif given is MISSING and m.back(value) is not MISSING:
                raise ValueError(f"has no {m.key!r}")
        custom.update({k: v for k, v in record.items() if k not in self.by_key and k not in self.elsewhere})
        out["custom_fields"] = custom
        return out

    def view(self, row: Mapping[str, Any], extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The fixture object a record of ours stands for (``extra``: keys worked out elsewhere, like a name)."""
        custom: Mapping[str, Any] = row.get("custom_fields") or {}
        values: dict[str, Any] = dict(extra or {})
        for m in self.mapped:
            if m.key in custom:
                values[m.key] = custom[m.key]
            else:
                value = m.back(row[m.field])
                if value is not MISSING:
                    values[m.key] = value
        for key, value in custom.items():
            values.setdefault(key, value)
        rank = {k: i for i, k in enumerate(self.order)}
        return {k: values[k] for k in sorted(values, key=lambda k: rank.get(k, len(rank)))}

    def assign(self, row: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
        """The changes to our record that set these fixture keys (as the mock sets them: ``record[key] = value``)."""
        custom = dict(row.get("custom_fields") or {})
        out: dict[str, Any] = {}
        for key, value in changes.items():
            m = self.by_key.get(key)
            if m is None:
                custom[key] = value
                continue
            ours = out[m.field] = m.to_ours(value)
            custom.pop(key, None)
            if not same(m.back(ours), value):
                custom[key] = value
        out["custom_fields"] = custom
        return out


def fixture_records(fixtures: Mapping[str, Any], service: str, default: str) -> tuple[str, list[dict[str, Any]]]:
    """The one fixture file a mock loads (its default name when there are several) and its records: a list of
    objects. ValueError naming the file otherwise."""
    if not fixtures:
        return default, []
    if len(fixtures) == 1:
        name, data = next(iter(fixtures.items()))
    elif default in fixtures:
        name, data = default, fixtures[default]
    else:
        raise ValueError(f"{service} fixtures: which file does the mock load? got {', '.join(sorted(fixtures))}")
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise ValueError(f"{service} fixture {name}: expected a list of objects, one a record")
    return name, data


def check_keys(name: str, index: int, record: Mapping[str, Any], id_key: str, required: Iterable[str]) -> str:
    """The record's id; ValueError naming the file and record when the id or a key the mock reads is missing."""
    rid = record.get(id_key)
    if not isinstance(rid, str) or not rid:
        raise ValueError(f"{name} record {index}: {id_key} must be a non-empty text, got {rid!r}")
    lacking = [k for k in required if k not in record]
    if lacking:
        raise ValueError(f"{name} record {rid}: lacks {', '.join(lacking)} (the mock reads them)")
    return rid


def checked(model: type[Record], row: dict[str, Any], where: str) -> dict[str, Any]:
    """``row`` validated as our record; ValueError naming ``where`` (file and record) otherwise."""
    try:
        return model.model_validate(row).model_dump(mode="json")
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise ValueError(f"{where}: {loc}: {first['msg']}") from None


def audit_calls(
    rows: Iterable[Mapping[str, Any]], endpoints: Mapping[str, str], tools: Iterable[ToolSpec]
) -> list[dict[str, Any]]:
    """The ``calls`` of a mock's ``/audit``: each call it answered (our ``ok`` rows of its tools), with the request
    body as its request model dumps it (defaults filled in), the response body, and when."""
    models: dict[str, type[BaseModel]] = {t.name: t.args_model for t in tools}
    calls = []
    for row in rows:
        tool = str(row.get("tool"))
        if tool not in endpoints or row.get("outcome") != "ok":
            continue
        request = models[tool].model_validate(row.get("arguments") or {}).model_dump(mode="json")
        calls.append(
            {
                "endpoint": endpoints[tool],
                "request_body": request,
                "response_body": row.get("result"),
                "timestamp": claw_time(str(row.get("sim_time"))),
            }
        )
    return calls


def results(rows: Iterable[Mapping[str, Any]], tools: Iterable[str], key: str) -> list[Any]:
    """``result[key]`` of each ``ok`` call of these tools that answered one (what a mock appended to a list)."""
    names = set(tools)
    found = []
    for row in rows:
        result = row.get("result")
        if row.get("tool") in names and row.get("outcome") == "ok" and isinstance(result, dict) and key in result:
            found.append(result[key])
    return found
