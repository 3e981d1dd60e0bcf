"""The state of one service in one environment, and the dispatcher every tool call goes through.

``ServiceState.call`` is the single entry for a tool call, whichever door it came through (MCP on any
transport, or the direct in-process door): it validates the arguments, runs the tool inside a
transaction, and writes the audit row in that same transaction, for every outcome.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from coworkenv.servers.kit import audit, connection, files
from coworkenv.servers.kit.audit import MAX_MESSAGE, Outcome, argument_problem, clip, safe_value
from coworkenv.servers.kit.clock import SimClock
from coworkenv.servers.kit.context import ToolContext, ToolResult
from coworkenv.servers.kit.errors import EnvironmentConfigError, SeedError, ServiceError
from coworkenv.servers.kit.schema import schema_statements, schema_template, sortable_id
from coworkenv.servers.kit.seed import Seed, load_seed, parse_seed
from coworkenv.servers.kit.service import Service
from coworkenv.servers.kit.store import Row, TableStore
from coworkenv.servers.kit.text import casefold
from coworkenv.servers.kit.tool import ToolSpec

log = logging.getLogger("coworkenv.servers")


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
        *,
        reset: bool = False,
        create: bool = True,
    ) -> ServiceState:
        """Open a service database: in memory (``path=None``) or a file.

        A new database gets the schema, the seed (validated whole before anything is written) and the
        clock. A new file is built beside its path and moved into place only once complete, so a bad seed
        leaves nothing behind. An existing file is reopened as it is (giving a seed for it is an error)
        unless ``reset``: then it is rebuilt from the seed and swapped in atomically. A file that is not a
        coworkenv database of this service is refused, never changed. With ``create=False`` a file that
        holds no database yet is refused too (for readers: nothing is written).
        """
        parsed = parse_seed(service, seed or {})
        if path is None:
            conn = connection.connect(None)
            try:
                state = cls(service, conn, SimClock(now) if now is not None else SimClock(), parsed)
                state._create(persistent=False)
                return state
            except BaseException:
                conn.close()
                raise
        path = Path(path)
        exists = path.exists() and not connection.is_blank(path)
        if not create and not exists:
            raise EnvironmentConfigError(
                f"{path} holds no database; create it with `coworkenv serve {service.name} --db {path} --seed FILE`"
            )
        if exists:
            files.check_database_file(path, service.name)
            if reset:  # never delete what isn't ours
                cls._check_owner(path, service)
        if (reset or not exists) and cls._build_file(service, parsed, now, path, replace=exists or path.exists()):
            seed, now = None, None  # the new file holds them
        return cls._reopen(service, path, seed, now)

    @classmethod
    def _build_file(cls, service: Service, seed: Seed, now: str | datetime | None, path: Path, replace: bool) -> bool:
        """Build the database in a temporary file beside ``path`` and move it there; False when another
        process created ``path`` first (and ``replace`` is off)."""
        tmp = files.new_temp_beside(path)
        try:
            conn = connection.connect(tmp)
            try:
                cls(service, conn, SimClock(now) if now is not None else SimClock(), seed)._create(persistent=True)
            finally:
                conn.close()  # the last close folds the WAL into the file and removes it
            if replace:
                if path.exists() and not connection.is_blank(path):
                    files.checkpoint_and_drop_wal(path)
                else:
                    files.remove_database(path)
                os.replace(tmp, path)
                return True
            try:
                os.link(tmp, path)  # fails if another process made the file meanwhile
            except FileExistsError:
                return False
            except OSError:  # a file system without hard links
                os.replace(tmp, path)
            return True
        except OSError as exc:
            raise EnvironmentConfigError(
                f"cannot create the database {path}: {exc.strerror or exc}; pass --db a file in a writable folder"
            ) from exc
        finally:
            files.remove_database(tmp)

    @classmethod
    def _reopen(
        cls, service: Service, path: Path, seed: Mapping[str, Any] | None, now: str | datetime | None
    ) -> ServiceState:
        try:
            conn = connection.connect(path, wal=False)
        except sqlite3.Error as exc:
            raise EnvironmentConfigError(f"cannot open the database {path}: {exc}") from exc
        try:
            existing = cls._read_meta(conn)
            connection.refuse_foreign(existing, path, service)
            if seed:
                raise EnvironmentConfigError(
                    f"{path} is already seeded; reset it (coworkenv serve --reset) or use a new file"
                )
            clock = SimClock(now if now is not None else existing["now"])
            connection.use_wal(conn)
            audit.migrate(conn)
            try:
                stored_seed = parse_seed(service, json.loads(existing.get("seed", "{}")))
            except SeedError as exc:
                raise EnvironmentConfigError(
                    f"{path} was seeded by an older coworkenv and its seed no longer loads ({exc}); "
                    "rebuild it with `coworkenv serve --reset --seed FILE`"
                ) from exc
            state = cls(service, conn, clock, stored_seed)
            state.initial_now = existing.get("initial_now", clock.iso())
            if now is not None:
                state._set_meta({"now": clock.iso()})
            return state
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise EnvironmentConfigError(
                f"cannot use {path} as a database: {exc}; pass a new file (or one `coworkenv serve` created)"
            ) from exc
        except BaseException:
            conn.close()
            raise

    @classmethod
    def _check_owner(cls, path: Path, service: Service) -> None:
        """Refuse ``path`` unless it is a coworkenv database of ``service`` (reads only)."""
        try:
            conn = connection.connect(path, wal=False)
            try:
                existing = cls._read_meta(conn)
            finally:
                conn.close()
        except sqlite3.Error as exc:
            raise EnvironmentConfigError(
                f"cannot use {path} as a database: {exc}; pass a new file (or one `coworkenv serve` created)"
            ) from exc
        connection.refuse_foreign(existing, path, service)

    @staticmethod
    def _read_meta(conn: sqlite3.Connection) -> dict[str, str]:
        has = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='_meta'").fetchone()
        if not has:
            return {}
        return {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM _meta").fetchall()}

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
            try:
                self._load(self.seed)
            except OverflowError as exc:  # parse_seed refuses these first; a last guard
                raise SeedError(f"{self.service.name}: a number in the seed is too large for SQLite ({exc})") from exc
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
                self.tables[table.name].dirty = True
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

    def dump_over(self, base: Mapping[str, list[Row]]) -> dict[str, list[Row]]:
        """Like :meth:`dump`, but a table nothing wrote to since this state was opened is ``base``'s own list
        (``base``: a dump of what it was opened or forked from). Cheaper, and a diff can skip it by identity.
        Only for a database no other connection writes to (an in-memory fork), as the flags see only this one."""
        return {
            name: base[name] if not store.dirty and name in base else store.dump()
            for name, store in self.tables.items()
        }

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
    async def call(
        self, name: str, arguments: Mapping[str, Any] | None, actor: str = "agent", member: str | None = None
    ) -> ToolResult:
        """Run one tool call and audit it, whatever its outcome. Never raises for a bad call."""
        return self.call_now(name, arguments, actor, member)

    def call_now(
        self, name: str, arguments: Mapping[str, Any] | None, actor: str = "agent", member: str | None = None
    ) -> ToolResult:
        """The same call, for synchronous callers. Tool bodies never suspend, so a call is atomic.

        ``member`` (privileged, Python API only) runs the call as another workspace member of a service that has
        members (docs, chat); the audit row's actor then reads ``actor:member``.

        Arguments no tool could take (text that is not valid Unicode, nesting past :data:`MAX_DEPTH`) are an
        ``invalid_arguments`` answer like any other bad input: audited, with a safe copy of what was sent."""
        started = time.perf_counter()
        raw: Any = {} if arguments is None else arguments
        problem = argument_problem(raw)
        if argument_problem(name) is not None:
            problem = "the tool name is not valid Unicode text"
        if problem is not None:
            name, raw = safe_value(name), safe_value(raw)
        spec = None if problem is not None else self.service.tools_by_name.get(name)
        data: dict[str, Any] | None = None
        changed = False
        typed: Any = raw  # nothing validated (unknown tool, invalid arguments): the audit keeps the raw ones
        conn = self.conn
        conn.execute("BEGIN")
        try:
            if problem is not None:
                outcome: Outcome = "invalid_arguments"
                text = (
                    f"Invalid arguments for {clip(name, 100)}: {problem}. Check the tool's input schema and call again."
                )
            elif spec is None:
                outcome = "unknown_tool"
                text = (
                    f"Unknown tool {clip(name, 100)!r} in the {self.service.name} service. "
                    f"Available tools: {', '.join(self.service.tools_by_name)}."
                )
            elif not isinstance(raw, Mapping):
                outcome, text = "invalid_arguments", f"Invalid arguments for {name}: expected an object."
            else:
                outcome, data, text, changed, validated = self._run(spec, raw, actor, member)
                typed = raw if validated is None else validated
            if outcome != "ok":
                text = clip(text, MAX_MESSAGE)
            seq = audit.write_row(
                conn,
                sim_time=self.clock.iso(),
                wall_time=datetime.now(UTC).isoformat(timespec="microseconds"),
                actor=actor if member is None else f"{actor}:{clip(safe_value(member), 200)}",
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
        self, spec: ToolSpec, raw: Mapping[str, Any], actor: str, member: str | None = None
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
        return (*self._execute(spec, args, actor, member), typed)

    def _execute(
        self, spec: ToolSpec, args: BaseModel, actor: str, member: str | None = None
    ) -> tuple[Outcome, dict[str, Any] | None, str, bool]:
        conn = self.conn
        before = conn.total_changes
        try:
            model = spec.fn(ToolContext(self, actor, member), **{k: getattr(args, k) for k in type(args).model_fields})
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
