"""The audit log: one row per tools/call of any outcome, written in the call's own transaction."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Outcome = Literal["ok", "error", "invalid_arguments", "unknown_tool", "internal_error"]
Actor = Literal["agent", "user", "system"]

AUDIT_DDL = (
    "CREATE TABLE IF NOT EXISTS _audit ("
    " seq INTEGER PRIMARY KEY, sim_time TEXT NOT NULL, wall_time TEXT NOT NULL, actor TEXT NOT NULL,"
    " tool TEXT NOT NULL, arguments TEXT NOT NULL, outcome TEXT NOT NULL, result TEXT, error TEXT,"
    " duration_ms REAL NOT NULL, state_changed INTEGER NOT NULL, raw_arguments TEXT, changes TEXT)"
)


def migrate(conn: sqlite3.Connection) -> None:
    """Bring an audit table written by an older version up to date (it had no ``raw_arguments`` column:
    its ``arguments`` held the raw arguments, so reading such a row gives those as both; nor a ``changes``
    column: its rows read as having noted no change)."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(_audit)")}
    if columns and "raw_arguments" not in columns:
        conn.execute("ALTER TABLE _audit ADD COLUMN raw_arguments TEXT")
    if columns and "changes" not in columns:
        conn.execute("ALTER TABLE _audit ADD COLUMN changes TEXT")


@dataclass(frozen=True)
class AuditRow:
    """One tools/call.

    ``arguments`` are the arguments the tool ran with, as validated and typed by its input schema (only
    those the caller gave; defaults are not filled in), as JSON: what the grader's matchers read. For an
    invalid_arguments or unknown_tool outcome nothing was validated and they are the raw arguments.
    ``raw_arguments`` are always the arguments exactly as the caller sent them.
    ``changes`` are the call's writes, in order: ``{"table", "id", "op"}`` and, for a ``create``, the record
    (``row``), for an ``update``, the fields that changed with their new values (``fields``); None when it
    changed nothing. They show what a run did even where a later call undid it (a file shared outside the
    company, then unshared); :func:`replay_changes` rebuilds a record's versions from them.
    """

    seq: int
    service: str
    sim_time: str
    wall_time: str
    actor: str
    tool: str
    arguments: Any
    outcome: str
    result: Any
    error: str | None
    duration_ms: float
    state_changed: bool
    raw_arguments: Any = None
    changes: list[dict[str, Any]] | None = None

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


MAX_DEPTH = 64
"""How deep arguments may nest (objects and lists); deeper is an invalid-arguments answer."""
MAX_MESSAGE = 2_000
"""The longest error message a call answers with; echoed input past it is cut."""


def clip(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


MAX_RECORDED_ARGUMENTS = 16_384
"""Arguments no tool took (invalid arguments, unknown tool) whose JSON text is longer than this many characters
are recorded capped (:func:`capped`), in the audit log and in trajectories: a 50 MB argument the server refused
must not be kept verbatim wherever the call is recorded."""
CAPPED = "_capped"
"""The one key of recorded arguments that were capped: ``{"_capped": {"prefix", "bytes", "sha256"}}``."""
UNTAKEN = frozenset({"invalid_arguments", "unknown_tool"})
"""Outcomes of calls whose arguments no tool took (so no schema bounded them)."""


def capped(text: str) -> dict[str, Any]:
    """Arguments as recorded when their JSON ``text`` is too long to keep: its start cut like an error message
    (:func:`clip`), its size in bytes of UTF-8 and its SHA-256 (to tell two such calls apart or alike)."""
    data = text.encode("utf-8", "surrogatepass")
    return {CAPPED: {"prefix": clip(text, MAX_MESSAGE), "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}}


def recorded_arguments(arguments: Any, outcome: str) -> Any:
    """``arguments`` as a record keeps them: as they are, or :func:`capped` when no tool took them (``outcome``
    in :data:`UNTAKEN`) and their JSON is longer than :data:`MAX_RECORDED_ARGUMENTS`."""
    if outcome not in UNTAKEN:
        return arguments
    try:
        text = to_json(arguments)
    except (RecursionError, ValueError):  # nested past the JSON encoder's stack, or a cycle
        text = to_json(safe_value(arguments))
    return arguments if len(text) <= MAX_RECORDED_ARGUMENTS else capped(text)


def _unencodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


_PLAIN = frozenset({int, float, bool, type(None)})


def _flat_and_sound(value: dict[Any, Any]) -> bool:
    """True for the usual arguments, checked fast: text keys and values that are valid Unicode text, numbers,
    booleans, nulls or lists of those (ASCII text needs no encoding check)."""
    for key, sub in value.items():
        if type(key) is not str or not (key.isascii() or not _unencodable(key)):
            return False
        kind = type(sub)
        if kind is str:
            if not sub.isascii() and _unencodable(sub):
                return False
        elif kind is list:
            for item in sub:
                if type(item) is str:
                    if not item.isascii() and _unencodable(item):
                        return False
                elif type(item) not in _PLAIN:
                    return False
        elif kind not in _PLAIN:
            return False
    return True


def argument_problem(value: Any) -> str | None:
    """What makes ``value`` unusable as tool arguments, in words, or None: text that is not valid Unicode
    (a lone surrogate such as "\\ud800"), nesting deeper than :data:`MAX_DEPTH`, or an object key that is
    not text. Iterative, so absurd depth cannot exhaust the stack."""
    if type(value) is dict and _flat_and_sound(value):
        return None
    if type(value) is str and (value.isascii() or not _unencodable(value)):
        return None
    stack: list[tuple[Any, int, str]] = [(value, 0, "arguments")]
    while stack:
        item, depth, where = stack.pop()
        if isinstance(item, str):
            if _unencodable(item):
                return f"{clip(where, 200)} holds text that is not valid Unicode (a lone surrogate)"
        elif isinstance(item, dict | list | tuple):
            if depth >= MAX_DEPTH:
                return f"the arguments nest deeper than {MAX_DEPTH} levels"
            if isinstance(item, dict):
                for key, sub in item.items():
                    if not isinstance(key, str) or _unencodable(key):
                        return f"{clip(where, 200)} has a key that is not valid Unicode text"
                    stack.append((sub, depth + 1, f"{where}.{key}" if depth < 8 else where))
            else:
                stack.extend((sub, depth + 1, f"{where}[{i}]" if depth < 8 else where) for i, sub in enumerate(item))
    return None


def safe_value(value: Any, depth: int = 0) -> Any:
    """A copy of ``value`` that can always be stored as JSON text: invalid Unicode escaped as ``\\udXXX``,
    nesting past :data:`MAX_DEPTH` replaced by a marker, keys made text."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8") if _unencodable(value) else value
    if isinstance(value, dict | list | tuple) and depth >= MAX_DEPTH:
        return f"<nested deeper than {MAX_DEPTH} levels>"
    if isinstance(value, dict):
        return {safe_value(str(k)): safe_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [safe_value(v, depth + 1) for v in value]
    return value


def same_json(a: Any, b: Any) -> bool:
    """Whether two values are written as the same JSON text: equal, with the same types all the way down (``1``
    and ``1.0`` or ``True`` are equal in Python, not in JSON)."""
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is dict:
        return a.keys() == b.keys() and all(same_json(v, b[k]) for k, v in a.items())
    if kind is list:
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    if kind is float:
        return a == b and repr(a) == repr(b)  # 0.0 and -0.0, nan
    return kind in _JSON_SCALARS and a == b


_JSON_SCALARS = frozenset({str, int, bool, type(None)})


to_json = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=repr).encode
"""``value`` as the audit log's JSON text: sorted keys, Unicode as is, what JSON cannot hold as its repr.
(One encoder made once: ``json.dumps`` with options builds a new one per call.)"""


def write_row(
    conn: sqlite3.Connection,
    *,
    sim_time: str,
    wall_time: str,
    actor: str,
    tool: str,
    arguments: Any,
    outcome: Outcome,
    result: Any,
    error: str | None,
    duration_ms: float,
    state_changed: bool,
    raw_arguments: Any,
    result_json: str | None = None,
    arguments_json: str | None = None,
    raw_json: str | None = None,
    changes_json: str | None = None,
) -> int:
    """Insert one audit row; ``*_json`` give values already encoded by :func:`to_json` (not encoded again);
    ``changes_json`` is :func:`changes_text` of the call's writes (None: it wrote nothing)."""
    cur = conn.execute(
        "INSERT INTO _audit (sim_time, wall_time, actor, tool, arguments, outcome, result, error, duration_ms,"
        " state_changed, raw_arguments, changes) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            sim_time,
            wall_time,
            actor,
            tool,
            arguments_json if arguments_json is not None else to_json(arguments),
            outcome,
            result_json if result_json is not None else (None if result is None else to_json(result)),
            error,
            round(duration_ms, 4),
            int(state_changed),
            raw_json if raw_json is not None else to_json(raw_arguments),
            changes_json,
        ),
    )
    return int(cur.lastrowid or 0)


Written = tuple[str, str, str, "str | None"]
"""One write of a tool call, as a table store notes it: (table, record id, op, JSON text of what it wrote: the
whole record for a create, the fields that changed with their new values for an update, None for a delete)."""

_WHAT = {"create": "row", "update": "fields"}


def changes_text(written: list[Written]) -> str:
    """A call's writes as the audit row's ``changes`` JSON: in order, ``{"table", "id", "op"}`` plus the created
    record (``row``) or the changed fields with their new values (``fields``)."""
    parts = []
    for table, rid, op, what in written:
        extra = f', "{_WHAT[op]}": {what}' if what is not None else ""
        parts.append(f'{{"id": {to_json(rid)}, "op": "{op}", "table": {to_json(table)}{extra}}}')
    return "[" + ", ".join(parts) + "]"


def replay_changes(record: Mapping[str, Any] | None, change: Mapping[str, Any]) -> dict[str, Any] | None:
    """The record after one noted write of it, from the record before (None: it did not exist)."""
    op = change.get("op")
    if op == "delete":
        return None
    if op == "create":
        return dict(change.get("row") or {})
    return {**(record or {}), **(change.get("fields") or {})}


_loads = json.JSONDecoder().decode
"""``json.loads`` without its per-call keyword checks (the audit table holds our own JSON text)."""


def read_call(conn: sqlite3.Connection, service: str, seq: int) -> dict[str, Any] | None:
    """What a call pattern reads of one audit row (service, tool, actor, outcome, the typed arguments) and the
    call's ``changes``, without decoding its result: for a caller that checks each call as it is made."""
    r = conn.execute("SELECT actor, tool, arguments, outcome, changes FROM _audit WHERE seq = ?", (seq,)).fetchone()
    if r is None:
        return None
    changes = None if r[4] is None else _loads(r[4])
    return {
        "seq": seq,
        "service": service,
        "actor": r[0],
        "tool": r[1],
        "arguments": _loads(r[2]),
        "outcome": r[3],
        "changes": changes,
    }


def read_rows(conn: sqlite3.Connection, service: str, after_seq: int = 0) -> list[AuditRow]:
    rows = conn.execute(
        "SELECT seq, sim_time, wall_time, actor, tool, arguments, outcome, result, error, duration_ms,"
        " state_changed, raw_arguments, changes FROM _audit WHERE seq > ? ORDER BY seq",
        (after_seq,),
    ).fetchall()
    return [
        AuditRow(
            seq=r[0],
            service=service,
            sim_time=r[1],
            wall_time=r[2],
            actor=r[3],
            tool=r[4],
            arguments=_loads(r[5]),
            outcome=r[6],
            result=None if r[7] is None else _loads(r[7]),
            error=r[8],
            duration_ms=r[9],
            state_changed=bool(r[10]),
            raw_arguments=_loads(r[11] if r[11] is not None else r[5]),
            changes=None if r[12] is None else _loads(r[12]),
        )
        for r in rows
    ]
