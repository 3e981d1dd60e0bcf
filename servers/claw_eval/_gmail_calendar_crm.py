"""What the gmail, calendar, contacts and crm profiles share: reading one fixture file, Claw-Eval's view of a
record rebuilt from ours, its times, and its ``/audit`` call log rebuilt from our audit rows.

A Claw-Eval record is a flat JSON object. Ours keeps what our fields can hold; what they cannot (a field we
lack, or a value our field would write otherwise) is kept as it was under the same key in ``custom_fields``, so
``view = {**derived(record), **record["custom_fields"]}`` is the record exactly as Claw-Eval holds it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, is_dataclass
from datetime import UTC, datetime
from typing import Any

from coworkenv.servers.claw_eval import AuditRow, Fixtures
from coworkenv.servers.claw_eval.common import ClawHTTPError
from coworkenv.servers.kit import format_time, parse_time
from coworkenv.servers.kit.tool import ToolSpec

Row = dict[str, Any]

SEEDED_AT = "2026-01-01T00:00:00Z"
"""When seeded records that need a creation time (and whose fixtures give none) were created."""


def fixture_file(fixtures: Fixtures, usual: str) -> tuple[str, list[Row]]:
    """The one fixture file a mock loads (``usual`` where several are given) and its records; an empty list for
    no file. ValueError naming the file when it is not a list of JSON objects."""
    if not fixtures:
        return usual, []
    if len(fixtures) == 1:
        name, data = next(iter(fixtures.items()))
    elif usual in fixtures:
        name, data = usual, fixtures[usual]
    else:
        raise ValueError(f"several fixture files ({', '.join(sorted(fixtures))}) and none is {usual}: name one")
    if not isinstance(data, list):
        raise ValueError(f"{name}: expected a JSON list of records, got {type(data).__name__}")
    for index, record in enumerate(data):
        if not isinstance(record, dict):
            raise ValueError(f"{name}: record {index} is {type(record).__name__}, not a JSON object")
    return name, data


def problem(name: str, index: int, record: Mapping[str, Any], id_key: str, message: str) -> ValueError:
    """The error of a bad fixture record, naming the file and the record."""
    rid = record.get(id_key)
    label = f"record {index} ({rid!r})" if isinstance(rid, str) and rid else f"record {index}"
    return ValueError(f"{name}: {label}: {message}")


def required(name: str, index: int, record: Mapping[str, Any], id_key: str, fields: Mapping[str, type]) -> None:
    """Every field the mock reads is there, of its JSON type (ValueError naming file, record and field)."""
    for key, kind in fields.items():
        if key not in record:
            raise problem(name, index, record, id_key, f"missing field {key!r}")
        value = record[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise problem(name, index, record, id_key, f"field {key!r} must be {kind.__name__}, not {value!r:.60}")
    if not record[id_key]:
        raise problem(name, index, record, id_key, f"field {id_key!r} is empty")
    if id_key in fields and fields[id_key] is str and len(record[id_key]) > 200:
        raise problem(name, index, record, id_key, f"field {id_key!r} is longer than 200 characters")


def unique_ids(name: str, records: Sequence[Mapping[str, Any]], id_key: str) -> None:
    seen: set[str] = set()
    for index, record in enumerate(records):
        if record[id_key] in seen:
            raise problem(name, index, record, id_key, f"{id_key} {record[id_key]!r} is used twice")
        seen.add(record[id_key])


def mock_time(text: str) -> datetime:
    """A time as the mocks read it (``fromisoformat`` with Z as UTC); ValueError unless it says its zone."""
    parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        raise ValueError(f"the time {text!r} has no zone")
    return parsed


def fixture_time(name: str, index: int, record: Mapping[str, Any], id_key: str, key: str) -> datetime:
    try:
        return mock_time(record[key])
    except ValueError as exc:
        raise problem(
            name, index, record, id_key, f"field {key!r}: {exc}; write it like 2026-03-02T09:00:00Z"
        ) from None


def wall(moment: datetime) -> datetime:
    """The local wall time of ``moment`` read as UTC: what a mock shows after shifting it (it writes the shifted
    local time with a ``Z``, whatever the zone was)."""
    return moment.replace(tzinfo=UTC)


def stamp(when: datetime) -> str:
    return format_time(when)


def iso_now(now: datetime) -> str:
    """A moment as the mocks stamp their records (``datetime.now(timezone.utc).isoformat()``)."""
    return now.astimezone(UTC).isoformat()


def same(a: Any, b: Any) -> bool:
    """Equal as JSON (so True is not 1 and 1.0 is not 1)."""
    return json.dumps(a, sort_keys=True, ensure_ascii=False) == json.dumps(b, sort_keys=True, ensure_ascii=False)


def kept(raw: Mapping[str, Any], derived: Mapping[str, Any], skip: Iterable[str] = ()) -> Row:
    """The fields of Claw-Eval's record our record cannot give back as they were (``custom_fields``)."""
    left_out = set(skip)
    return {k: v for k, v in raw.items() if k not in left_out and (k not in derived or not same(derived[k], v))}


def view(derived: Mapping[str, Any], record: Mapping[str, Any]) -> Row:
    """Claw-Eval's record: what ours gives, with what ``custom_fields`` keeps over it."""
    return {**derived, **record.get("custom_fields", {})}


def crash() -> ClawHTTPError:
    """What a mock answers when its route raises (a bad stored time, an overflow): 500."""
    return ClawHTTPError(500, "Internal Server Error")


# ---------------------------------------------------------------------------------------------- audit
def _plain(row: AuditRow | Any) -> Mapping[str, Any]:
    if isinstance(row, Mapping):
        return row
    if is_dataclass(row) and not isinstance(row, type):
        return asdict(row)
    raise TypeError(f"not an audit row: {type(row).__name__}")


def ok_rows(audit: Iterable[AuditRow], tools: Iterable[str]) -> list[Mapping[str, Any]]:
    """The successful calls of these tools, in the order they ran (the mocks log only calls they answered)."""
    names = set(tools)
    rows = [_plain(r) for r in audit]
    return sorted((r for r in rows if r["outcome"] == "ok" and r["tool"] in names), key=lambda r: int(r["seq"]))


def calls(audit: Iterable[AuditRow], endpoints: Mapping[str, str], tools: Sequence[ToolSpec]) -> list[Row]:
    """The ``calls`` of a mock's ``/audit``: endpoint, request body (defaults filled in), response, time."""
    specs = {t.name: t for t in tools}
    out: list[Row] = []
    for row in ok_rows(audit, endpoints):
        spec = specs[row["tool"]]
        request = spec.args_model.model_validate(row["arguments"] or {}).model_dump(mode="json")
        out.append(
            {
                "endpoint": endpoints[row["tool"]],
                "request_body": request,
                "response_body": row["result"],
                "timestamp": iso_now(parse_time(row["sim_time"])),
            }
        )
    return out


def results(audit: Iterable[AuditRow], tool: str) -> list[Row]:
    """What the successful calls of one tool answered, in order."""
    return [dict(r["result"]) for r in ok_rows(audit, (tool,)) if isinstance(r["result"], Mapping)]
