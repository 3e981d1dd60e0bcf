"""The state of one service in one environment, and the dispatcher every tool call goes through.

``ServiceState.call`` is the single entry for a tool call, whichever door it came through (MCP on any
transport, or the direct in-process door): it validates the arguments, runs the tool inside a
transaction, and writes the audit row in that same transaction, for every outcome.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from coworkenv.servers.kit import audit
from coworkenv.servers.kit.audit import Outcome
from coworkenv.servers.kit.clock import SimClock
from coworkenv.servers.kit.errors import EnvironmentConfigError, NotFound, ServiceError
from coworkenv.servers.kit.schema import schema_statements, schema_template, sortable_id
from coworkenv.servers.kit.seed import Seed, load_seed, parse_seed
from coworkenv.servers.kit.service import Service
from coworkenv.servers.kit.store import Row, TableStore
from coworkenv.servers.kit.text import casefold
from coworkenv.servers.kit.tool import ToolSpec

log = logging.getLogger("coworkenv.servers")


@dataclass(frozen=True)
class ToolResult:
    """What a tool call returned: structured data on success, a message on error."""

    tool: str
    outcome: Outcome
    data: dict[str, Any] | None
    text: str
    seq: int

    @property
    def is_error(self) -> bool:
        return self.outcome != "ok"


class ToolContext:
    """What a tool body sees: the tables, the simulated clock, id minting, and who is calling."""

    __slots__ = ("actor", "state")

    def __init__(self, state: ServiceState, actor: str) -> None:
        self.state = state
        self.actor = actor

    def table(self, name: str) -> TableStore:
        return self.state.tables[name]

    @property
    def now(self) -> datetime:
        return self.state.clock.now()

    def now_iso(self) -> str:
        return self.state.clock.iso()

    def fetch(self, table: str, record_id: str, kind: str, hint: str | None = None) -> Row:
        """The row of ``table`` with this id, or :class:`NotFound` naming ``kind`` (with ``hint`` if given)."""
        row = self.table(table).get(record_id)
        if row is None:
            raise NotFound(kind, record_id, hint)
        return row

    def new_id(self, table: str) -> str:
        return self.state.new_id(table)

    def paginate(
        self,
        table: str,
        where: str,
        params: list[Any],
        order_by: str,
        page_size: int,
        page_token: str | None,
    ) -> tuple[list[Row], int, str | None]:
        """One page of a query: (rows, total matched, next page token or None)."""
        offset = 0
        if page_token:
            if not page_token.isdigit():
                raise ServiceError(
                    f"page_token {page_token!r} is not valid.", "Pass the next_page_token of the previous page."
                )
            offset = int(page_token)
        store = self.table(table)
        total = store.count(where, params)
        rows = store.select(where, params, order_by=order_by, limit=page_size, offset=offset)
        nxt = offset + len(rows)
        return rows, total, (str(nxt) if nxt < total else None)


def _format_validation(tool: str, exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        parts.append(f"{loc}: {err['msg']}")
    return f"Invalid arguments for {tool}: " + "; ".join(parts) + ". Check the tool's input schema and call again."


class ServiceState:
    """One service's SQLite database, clock and dispatcher. Create with :meth:`open`."""

    def __init__(self, service: Service, conn: sqlite3.Connection, clock: SimClock, seed: Seed) -> None:
        self.service = service
        self.conn = conn
        self.clock = clock
        self.seed = seed
        self.initial_now = clock.iso()
        self.tables = {t.name: TableStore(conn, t) for t in service.tables}

    # ------------------------------------------------------------------ creation
    @classmethod
    def open(
        cls,
        service: Service,
        seed: Mapping[str, Any] | None = None,
        now: str | datetime | None = None,
        path: str | Path | None = None,
    ) -> ServiceState:
        """Open a service database: in memory (``path=None``) or a file.

        A new database gets the schema, the seed (validated whole before anything is written) and the
        clock. An existing file is reopened as it is: giving a seed for it is an error.
        """
        parsed = parse_seed(service, seed or {})
        conn = sqlite3.connect(":memory:" if path is None else str(path), isolation_level=None, check_same_thread=False)
        conn.create_function("casefold", 1, casefold, deterministic=True)
        try:
            if path is not None:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute("PRAGMA busy_timeout=5000")
            existing = cls._read_meta(conn)
            if existing:
                if existing.get("service") != service.name:
                    raise EnvironmentConfigError(
                        f"{path} holds the {existing.get('service')!r} service, not {service.name!r}"
                    )
                if seed:
                    raise EnvironmentConfigError(
                        f"{path} is already seeded; reset it (coworkenv serve --reset) or use a new file"
                    )
                clock = SimClock(now if now is not None else existing["now"])
                audit.migrate(conn)
                stored_seed = parse_seed(service, json.loads(existing.get("seed", "{}")))
                state = cls(service, conn, clock, stored_seed)
                state.initial_now = existing.get("initial_now", clock.iso())
                if now is not None:
                    state._set_meta({"now": clock.iso()})
                return state
            clock = SimClock(now) if now is not None else SimClock()
            state = cls(service, conn, clock, parsed)
            state._create(persistent=path is not None)
            return state
        except BaseException:
            conn.close()
            raise

    @staticmethod
    def _read_meta(conn: sqlite3.Connection) -> dict[str, str]:
        has = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='_meta'").fetchone()
        if not has:
            return {}
        return dict(conn.execute("SELECT key, value FROM _meta").fetchall())

    def _set_meta(self, values: Mapping[str, str]) -> None:
        self.conn.executemany(
            "INSERT INTO _meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            list(values.items()),
        )

    def _create(self, persistent: bool) -> None:
        if persistent:
            self.conn.execute("BEGIN")
            for stmt in schema_statements(self.service):
                self.conn.execute(stmt)
        else:  # copying a ready schema is ~20x faster than running its DDL
            schema_template(self.service).backup(self.conn)
            self.conn.execute("BEGIN")
        try:
            self._load(self.seed)
            meta = {
                "service": self.service.name,
                "version": self.service.version,
                "now": self.clock.iso(),
                "initial_now": self.initial_now,
            }
            if persistent:  # a reopened file must be able to reset to its seed
                meta["seed"] = json.dumps(self.seed, sort_keys=True)
            self._set_meta(meta)
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def _load(self, seed: Seed) -> None:
        for name, rows in seed.items():
            self.tables[name].insert_many(rows)

    def reset(self) -> None:
        """Back to the seeded state: seed records only, empty audit log, the clock at its first "now"."""
        self.conn.execute("BEGIN")
        try:
            for table in self.service.tables:
                self.conn.execute(f'DELETE FROM "{table.name}"')
            self.conn.execute("DELETE FROM _audit")
            self.conn.execute("DELETE FROM _meta WHERE key LIKE 'seq:%'")
            self._load(self.seed)
            self.clock.set(self.initial_now)
            self._set_meta({"now": self.initial_now})
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self.conn.close()

    def fork(self) -> ServiceState:
        """An in-memory copy of this state (records, audit log, ids, clock): the fast way to start many
        episodes from one seeded environment."""
        conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        conn.create_function("casefold", 1, casefold, deterministic=True)
        self.conn.backup(conn)
        copy = ServiceState(self.service, conn, SimClock(self.clock.now()), self.seed)
        copy.initial_now = self.initial_now
        return copy

    # ------------------------------------------------------------------ reading (privileged, not tools)
    def dump(self) -> dict[str, list[Row]]:
        """Every table's records, sorted by id, as plain JSON-ready dicts."""
        return {name: store.dump() for name, store in self.tables.items()}

    def audit(self, after_seq: int = 0) -> list[audit.AuditRow]:
        return audit.read_rows(self.conn, self.service.name, after_seq)

    def state_hash(self) -> str:
        return hashlib.sha256(canonical_json(self.dump()).encode()).hexdigest()

    # ------------------------------------------------------------------ ids
    def new_id(self, table: str) -> str:
        spec = self.service.tables_by_name[table]
        key = f"seq:{table}"
        row = self.conn.execute("SELECT value FROM _meta WHERE key = ?", (key,)).fetchone()
        n = int(row[0]) if row else 0
        store = self.tables[table]
        while True:
            n += 1
            candidate = spec.id_prefix + sortable_id(self.service.name, table, n)
            if store.get(candidate) is None:
                break
        self._set_meta({key: str(n)})
        return candidate

    # ------------------------------------------------------------------ the dispatcher
    async def call(self, name: str, arguments: Mapping[str, Any] | None, actor: str = "agent") -> ToolResult:
        """Run one tool call and audit it, whatever its outcome. Never raises for a bad call."""
        return self.call_now(name, arguments, actor)

    def call_now(self, name: str, arguments: Mapping[str, Any] | None, actor: str = "agent") -> ToolResult:
        """The same call, for synchronous callers. Tool bodies never suspend, so a call is atomic."""
        started = time.perf_counter()
        raw: Any = {} if arguments is None else arguments
        spec = self.service.tools_by_name.get(name)
        data: dict[str, Any] | None = None
        changed = False
        typed: Any = raw  # nothing validated (unknown tool, invalid arguments): the audit keeps the raw ones
        conn = self.conn
        conn.execute("BEGIN")
        try:
            if spec is None:
                outcome: Outcome = "unknown_tool"
                text = (
                    f"Unknown tool {name!r} in the {self.service.name} service. "
                    f"Available tools: {', '.join(self.service.tools_by_name)}."
                )
            elif not isinstance(raw, Mapping):
                outcome, text = "invalid_arguments", f"Invalid arguments for {name}: expected an object."
            else:
                outcome, data, text, changed, validated = self._run(spec, raw, actor)
                typed = raw if validated is None else validated
            seq = audit.write_row(
                conn,
                sim_time=self.clock.iso(),
                wall_time=datetime.now(UTC).isoformat(timespec="microseconds"),
                actor=actor,
                tool=name,
                arguments=dict(typed) if isinstance(typed, Mapping) else typed,
                raw_arguments=dict(raw) if isinstance(raw, Mapping) else raw,
                outcome=outcome,
                result=data,
                result_json=text if outcome == "ok" else None,
                error=None if outcome == "ok" else text,
                duration_ms=(time.perf_counter() - started) * 1000,
                state_changed=changed,
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return ToolResult(name, outcome, data, text, seq)

    def _undo(self) -> None:
        """Drop what a failed tool body wrote; the call's audit row then goes in a fresh transaction."""
        self.conn.execute("ROLLBACK")
        self.conn.execute("BEGIN")

    def _run(
        self, spec: ToolSpec, raw: Mapping[str, Any], actor: str
    ) -> tuple[Outcome, dict[str, Any] | None, str, bool, dict[str, Any] | None]:
        """Validate and run one call: (outcome, data, text, state changed, the validated arguments or None)."""
        try:
            args = spec.args_model.model_validate(raw)
        except ValidationError as exc:
            return "invalid_arguments", None, _format_validation(spec.name, exc), False, None
        except Exception as exc:  # a validator that raised something else: still the caller's bad input
            log.warning("argument validation of %s raised %r", spec.name, exc)
            return (
                "invalid_arguments",
                None,
                f"Invalid arguments for {spec.name}: {exc}. Check the input schema.",
                False,
                None,
            )
        typed = _typed_arguments(args)
        return (*self._execute(spec, args, actor), typed)

    def _execute(self, spec: ToolSpec, args: BaseModel, actor: str) -> tuple[Outcome, dict[str, Any] | None, str, bool]:
        conn = self.conn
        before = conn.total_changes
        try:
            coro = spec.fn(ToolContext(self, actor), **{k: getattr(args, k) for k in type(args).model_fields})
            try:
                coro.send(None)
            except StopIteration as stop:
                model = stop.value
            else:  # the body awaited something that suspended: not allowed inside a transaction
                coro.close()
                raise RuntimeError(f"tool {spec.name} suspended inside its transaction")
            data = model.model_dump(mode="json")
            return "ok", data, audit.to_json(data), conn.total_changes != before
        except ServiceError as exc:
            self._undo()
            return "error", None, str(exc), False
        except ValidationError as exc:  # a tool tried to store a record that breaks its model
            self._undo()
            return (
                "error",
                None,
                _format_validation(spec.name, exc).replace("Invalid arguments", "Invalid values"),
                False,
            )
        except Exception:
            self._undo()
            log.exception("tool %s of %s crashed", spec.name, self.service.name)
            return "internal_error", None, f"Internal error in {spec.name}; nothing was changed. Try again.", False


def _typed_arguments(args: BaseModel) -> dict[str, Any] | None:
    """The arguments a tool runs with, as JSON: validated and typed by its input schema, only those the caller
    gave (an omitted argument stays absent, so a matcher ``{"exists": false}`` on it still holds)."""
    try:
        return args.model_dump(mode="json", exclude_unset=True)
    except Exception:  # a value pydantic cannot write as JSON: keep the raw arguments rather than fail the call
        log.warning("arguments of %s cannot be written as JSON", type(args).__name__, exc_info=True)
        return None


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


__all__ = ["ServiceState", "ToolContext", "ToolResult", "canonical_json", "load_seed"]
