"""The audit log: one row per tools/call of any outcome, written in the call's own transaction."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any, Literal

Outcome = Literal["ok", "error", "invalid_arguments", "unknown_tool", "internal_error"]
Actor = Literal["agent", "user", "system"]

AUDIT_DDL = (
    "CREATE TABLE IF NOT EXISTS _audit ("
    " seq INTEGER PRIMARY KEY, sim_time TEXT NOT NULL, wall_time TEXT NOT NULL, actor TEXT NOT NULL,"
    " tool TEXT NOT NULL, arguments TEXT NOT NULL, outcome TEXT NOT NULL, result TEXT, error TEXT,"
    " duration_ms REAL NOT NULL, state_changed INTEGER NOT NULL)"
)


@dataclass(frozen=True)
class AuditRow:
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

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def to_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)


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
    result_json: str | None = None,
) -> int:
    cur = conn.execute(
        "INSERT INTO _audit (sim_time, wall_time, actor, tool, arguments, outcome, result, error, duration_ms,"
        " state_changed) VALUES (?,?,?,?,?,?,?,?,?,?)",
        (
            sim_time,
            wall_time,
            actor,
            tool,
            to_json(arguments),
            outcome,
            result_json if result_json is not None else (None if result is None else to_json(result)),
            error,
            round(duration_ms, 4),
            int(state_changed),
        ),
    )
    return int(cur.lastrowid or 0)


def read_rows(conn: sqlite3.Connection, service: str, after_seq: int = 0) -> list[AuditRow]:
    rows = conn.execute(
        "SELECT seq, sim_time, wall_time, actor, tool, arguments, outcome, result, error, duration_ms,"
        " state_changed FROM _audit WHERE seq > ? ORDER BY seq",
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
            arguments=json.loads(r[5]),
            outcome=r[6],
            result=None if r[7] is None else json.loads(r[7]),
            error=r[8],
            duration_ms=r[9],
            state_changed=bool(r[10]),
        )
        for r in rows
    ]
