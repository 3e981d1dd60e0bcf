"""The SQLite store of one service in one environment.

The stdlib ``sqlite3`` driver is called on the event-loop thread: an in-memory statement takes a few
microseconds, while a thread hop through aiosqlite costs about 0.1 ms (measured in ``bench/``), more
than a whole tool call should. Tool bodies never await between statements, and the dispatcher holds
a lock per service, so a call is atomic.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from coworkenv.servers.kit.audit import Written, same_json, to_json
from coworkenv.servers.kit.records import Column, Table

Row = dict[str, Any]


_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode


def _encode_json(value: Any) -> str | None:
    if value is None:
        return None
    if not value and isinstance(value, list):
        return "[]"
    return _JSON(value)


def _encoder(col: Column) -> Any:
    if col.kind == "json":
        return _encode_json
    if col.kind == "bool":
        return lambda v: None if v is None else int(bool(v))
    return None


_loads = json.JSONDecoder().decode
"""``json.loads`` without its per-call keyword checks (what the database holds is our own JSON text)."""


MEMO_ROWS = 20_000
"""At most this many decoded rows are kept per table for :meth:`TableStore.dump_shared` (then it starts over)."""


class _Layout:
    """What a store of one table needs that depends on the table alone (built once per table, not per store)."""

    __slots__ = (
        "bool_cols",
        "count",
        "enc",
        "encoders",
        "insert",
        "json_cols",
        "names",
        "page",
        "select",
        "table",
        "update",
        "updates",
    )

    def __init__(self, table: Table) -> None:
        self.names = table.column_names
        self.enc = [(c.name, _encoder(c)) for c in table.columns]
        self.json_cols = tuple(c.name for c in table.columns if c.kind == "json")
        self.bool_cols = tuple(c.name for c in table.columns if c.kind == "bool")
        quoted = ", ".join(f'"{n}"' for n in self.names)
        self.select = f'SELECT {quoted} FROM "{table.name}"'
        self.page = f'SELECT {quoted}, COUNT(*) OVER () FROM "{table.name}"'
        self.insert = f'INSERT INTO "{table.name}" ({quoted}) VALUES ({", ".join("?" * len(self.names))})'
        self.table = table.name
        self.update = self.update_of(tuple(n for n in self.names if n != "id"))
        self.encoders = dict(self.enc)
        self.updates: dict[tuple[str, ...], str] = {}
        """``UPDATE`` statements by the columns they set (built as updates need them)."""
        self.count = f'SELECT COUNT(*) FROM "{table.name}"'

    def update_of(self, names: tuple[str, ...]) -> str:
        sets = ", ".join(f'"{n}" = ?' for n in names)
        return f'UPDATE "{self.table}" SET {sets} WHERE id = ?'


_LAYOUTS: dict[int, tuple[Table, _Layout]] = {}


def _layout(table: Table) -> _Layout:
    entry = _LAYOUTS.get(id(table))
    if entry is None or entry[0] is not table:  # the table is held, so its id is not reused while cached
        entry = (table, _Layout(table))
        _LAYOUTS[id(table)] = entry
    return entry[1]


class TableStore:
    """Typed access to one table: rows go in and come out as plain dicts matching the record model."""

    def __init__(self, conn: sqlite3.Connection, table: Table) -> None:
        self.conn = conn
        self.table = table
        layout = _layout(table)
        self.names = layout.names
        self._enc = layout.enc
        self._json_cols = layout.json_cols
        self._bool_cols = layout.bool_cols
        self._select = layout.select
        self._insert = layout.insert
        self._layout = layout
        self.dirty = False
        """True once anything was written through this store (even if rolled back): a clean table is
        exactly as it was when the store was opened, so a dump can reuse an earlier one."""
        self.writes = 0
        """How many writes went through this store (even rolled back ones): a table whose count is what a mark
        noted is as it was at the mark (:meth:`ServiceState.dump_since`)."""
        self.journal: list[Written] | None = None
        """Where each write through this store is noted for the audit row of the call running now (set by the
        service's state; None for a ``history`` table, whose rows are the record of another change)."""
        self.memo: dict[Any, Row] = {}
        """Rows :meth:`dump_shared` decoded, by their stored values (shared with the stores forked from this one)."""

    def _encode(self, row: Row) -> list[Any]:
        return [row.get(n) if enc is None else enc(row.get(n)) for n, enc in self._enc]

    def _decode(self, values: Sequence[Any]) -> Row:
        row = dict(zip(self.names, values, strict=True))
        for n in self._json_cols:
            v = row[n]
            if v is not None:  # most are empty: a new list or dict without the decoder
                row[n] = [] if v == "[]" else {} if v == "{}" else _loads(v)
        for n in self._bool_cols:
            v = row[n]
            if v is not None:
                row[n] = bool(v)
        return row

    def validate(self, row: Row) -> Row:
        """Validate against the record model and return the normalised row (raises ValidationError)."""
        return self.table.model.model_validate(row).model_dump(mode="json")

    def insert(self, row: Row) -> Row:
        clean = self.validate(row)
        self.dirty = True
        self.writes += 1
        self.conn.execute(self._insert, self._encode(clean))
        if self.journal is not None:
            self.journal.append((self.table.name, str(clean.get("id")), "create", to_json(clean)))
        return clean

    def get(self, record_id: str) -> Row | None:
        cur = self.conn.execute(f"{self._select} WHERE id = ?", (record_id,))
        values = cur.fetchone()
        return None if values is None else self._decode(values)

    def select(
        self,
        where: str = "",
        params: Sequence[Any] = (),
        order_by: str = "id",
        limit: int | None = None,
        offset: int = 0,
    ) -> list[Row]:
        sql = self._select + (f" WHERE {where}" if where else "") + f" ORDER BY {order_by}"
        if limit is not None:
            sql += f" LIMIT {int(limit)} OFFSET {int(offset)}"
        decode = self._decode
        return [decode(v) for v in self.conn.execute(sql, tuple(params))]

    def page(
        self, where: str, params: Sequence[Any], order_by: str, limit: int, offset: int = 0
    ) -> tuple[list[Row], int]:
        """One page of the rows matching ``where`` and how many match in all, in one pass over the table (the
        total rides along each row as a window count; a page past the end asks for the count alone)."""
        sql = (
            self._layout.page
            + (f" WHERE {where}" if where else "")
            + f" ORDER BY {order_by} LIMIT {int(limit)} OFFSET {int(offset)}"
        )
        found = self.conn.execute(sql, tuple(params)).fetchall()
        if not found:
            return [], (self.count(where, params) if offset else 0)
        decode = self._decode
        return [decode(values[:-1]) for values in found], int(found[0][-1])

    def count(self, where: str = "", params: Sequence[Any] = ()) -> int:
        sql = self._layout.count + (f" WHERE {where}" if where else "")
        return int(self.conn.execute(sql, tuple(params)).fetchone()[0])

    def update(self, record_id: str, changes: Row) -> Row:
        """Apply field changes to a record, re-validate the whole record, and return it."""
        current = self.get(record_id)
        if current is None:
            raise KeyError(record_id)
        merged = self.validate({**current, **changes})
        self.dirty = True
        self.writes += 1
        changed = {k: v for k, v in merged.items() if k not in current or not same_json(current[k], v)}
        layout = self._layout
        if changed and "id" not in changed:  # only the columns that changed: the other indexes stay as they are
            names = tuple(changed)
            sql = layout.updates.get(names)
            if sql is None:
                sql = layout.updates[names] = layout.update_of(names)
            encoders = layout.encoders
            values = [v if (enc := encoders[n]) is None else enc(v) for n, v in changed.items()]
        else:  # nothing changed (still a write, as SQLite counts it)
            sql = layout.update
            values = [merged.get(n) if enc is None else enc(merged.get(n)) for n, enc in self._enc if n != "id"]
        self.conn.execute(sql, [*values, record_id])
        if self.journal is not None and changed:
            self.journal.append((self.table.name, record_id, "update", to_json(changed)))
        return merged

    def delete(self, record_id: str) -> None:
        self.dirty = True
        self.writes += 1
        cur = self.conn.execute(f'DELETE FROM "{self.table.name}" WHERE id = ?', (record_id,))
        if self.journal is not None and cur.rowcount:
            self.journal.append((self.table.name, record_id, "delete", None))

    def dump(self) -> list[Row]:
        return self.select()

    def dump_shared(self) -> list[Row]:
        """Like :meth:`dump`, but a row stored exactly as one this store (or the one it was forked from) decoded
        before is that same dict: for readers that never change what they get (a state diff, a grader)."""
        memo = self.memo
        if len(memo) > MEMO_ROWS:
            memo.clear()
        decode = self._decode
        out = []
        for values in self.conn.execute(self._select + " ORDER BY id"):
            row = memo.get(values)
            if row is None:
                row = memo[values] = decode(values)
            out.append(row)
        return out


__all__ = ["Row", "TableStore", "ValidationError"]
