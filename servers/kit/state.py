"""The state of one service in one environment, and the dispatcher every tool call goes through.

``ServiceState.call`` is the single entry for a tool call, whichever door it came through (MCP on any
transport, or the direct in-process door): it validates the arguments, runs the tool inside a
transaction, and writes the audit row in that same transaction, for every outcome. Marks on a state (savepoints that
runs are rolled back to) are :mod:`coworkenv.servers.kit.marks`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from coworkenv.servers.kit import audit, connection, files, images
from coworkenv.servers.kit.clock import SimClock
from coworkenv.servers.kit.columns import Columns
from coworkenv.servers.kit.context import ToolContext, ToolResult
from coworkenv.servers.kit.dispatch import Dispatcher
from coworkenv.servers.kit.errors import EnvironmentConfigError, SeedError
from coworkenv.servers.kit.marks import Mark, Marks
from coworkenv.servers.kit.records import Seed
from coworkenv.servers.kit.schema import schema_statements, schema_template, sortable_id
from coworkenv.servers.kit.seed import insert_seed, load_seed, parse_seed, parse_seed_columns
from coworkenv.servers.kit.service import Service
from coworkenv.servers.kit.store import Row, TableStore

log = logging.getLogger("coworkenv.servers")


class ServiceState(Dispatcher, Marks):
    """One service's SQLite database, clock and dispatcher. Create with :meth:`open`."""

    def __init__(
        self,
        service: Service,
        conn: sqlite3.Connection,
        clock: SimClock,
        seed: Seed | None,
        image: bytes | None = None,
        layout: str | None = None,
    ) -> None:
        self.service = service
        self.conn = conn
        self.clock = clock
        self.seed = seed
        """The validated seed, for a database reset by reloading it; None where ``image`` is kept instead."""
        self.image = image
        """The seeded database (in memory: a reset copies it back; shared with the seed cache, never written)."""
        self.layout = layout
        """:func:`images.layout_of` this in-memory database (its schema never changes), when its connection may
        go back to the pool on close; None otherwise."""
        self.initial_now = clock.iso()
        self.tables = {t.name: TableStore(conn, t) for t in service.tables}
        self.journal = []
        for table in service.tables:
            if not table.history:
                self.tables[table.name].journal = self.journal
        self.marks: list[Mark] = []
        """The open marks, innermost last."""

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
        parsed: Seed | None = None,
    ) -> ServiceState:
        """Open a service database: in memory (``path=None``) or a file.

        A new database gets the schema, the seed (validated whole before anything is written) and the
        clock. A new file is built beside its path and moved into place only once complete, so a bad seed
        leaves nothing behind. An existing file is reopened as it is (giving a seed for it is an error)
        unless ``reset``: then it is rebuilt from the seed and swapped in atomically. A file that is not a
        coworkenv database of this service is refused, never changed. With ``create=False`` a file that
        holds no database yet is refused too (for readers: nothing is written).

        ``parsed``: what ``parse_seed(service, seed)`` returned for this very seed, when the caller has it (an
        in-memory database then loads it instead of validating the seed again).
        """
        if path is None:
            return cls._open_memory(service, seed, now, parsed)
        parsed = parse_seed(service, seed or {})
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
    def _open_memory(
        cls, service: Service, seed: Mapping[str, Any] | None, now: str | datetime | None, parsed: Seed | None = None
    ) -> ServiceState:
        """In memory: a copy of this seed's cached image, or (the first time) the seed validated whole (unless
        ``parsed`` is given), loaded, and its image kept for the next environment (see :mod:`.images`)."""
        clock = SimClock(now) if now is not None else SimClock()
        key = images.seed_key(service, seed)
        entry = images.IMAGES.entry(key)
        if entry is None:
            columns = None
            if parsed is None:
                parsed, columns = parse_seed_columns(service, seed or {})
            conn = images.acquire(service, images.EMPTY)
            try:
                state = cls(service, conn, clock, parsed)
                state._create(persistent=False, columns=columns)
                state.image, state.seed = conn.serialize(), None
                if images.poolable(state.image):
                    state.layout = images.layout_of(conn)
            except BaseException:
                images.release(service, conn)
                raise
            images.IMAGES.put(key, state.image, service, state.layout)
            return state
        image, layout = entry
        conn = images.acquire(service, image, layout)
        try:
            state = cls(service, conn, clock, None, image, layout)
            state._stamp_clock()
        except BaseException:
            images.release(service, conn)
            raise
        return state

    def _stamp_clock(self) -> None:
        self.conn.execute("BEGIN")
        try:
            self._set_meta({"now": self.clock.iso(), "initial_now": self.initial_now})
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    @classmethod
    def _build_file(cls, service: Service, seed: Seed, now: str | datetime | None, path: Path, replace: bool) -> bool:
        """Build the database in a temporary file beside ``path`` and move it there; False when another
        process created ``path`` first (and ``replace`` is off). What an earlier, killed build left beside
        ``path`` is removed first."""
        files.remove_dead_temps(path)
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

    def _create(self, persistent: bool, columns: Mapping[str, Columns] | None = None) -> None:
        """The schema, the seed and the meta rows in one transaction (``columns``: the seed's stored values, as
        :func:`parse_seed_columns` made them)."""
        if persistent:
            self.conn.execute("BEGIN")
            for stmt in schema_statements(self.service):
                self.conn.execute(stmt)
        else:  # copying a ready schema is ~20x faster than running its DDL
            schema_template(self.service).backup(self.conn)
            self.conn.execute("BEGIN")
        try:
            try:
                self._load(self.seed, columns)
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

    def _load(self, seed: Seed | None, columns: Mapping[str, Columns] | None = None) -> None:
        """The seed's records into the empty tables: in bulk, indexes built after the rows (``insert_seed``)."""
        insert_seed(self.conn, self.service, seed or {}, columns)
        for name in seed or {}:
            store = self.tables[name]
            store.dirty = True
            store.writes += 1

    def reset(self) -> None:
        """Back to the seeded state: seed records only, empty audit log, the clock at its first "now"."""
        if self.image is not None:
            self.conn.deserialize(self.image)
            for store in self.tables.values():
                store.dirty = True
            self.clock.set(self.initial_now)
            self._stamp_clock()
            return
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
        """Close the database (an in-memory one's connection goes back to the pool, emptied); using this state
        afterwards raises as a closed connection does. Closing twice is fine."""
        conn = self.conn
        if conn is images.CLOSED:
            return
        self.conn = images.CLOSED
        for store in self.tables.values():
            store.conn = images.CLOSED
        if isinstance(conn, connection.FileConnection):
            conn.close()
        else:
            images.release(self.service, conn, self.layout)

    def fork(self) -> ServiceState:
        """An in-memory copy of this state (records, audit log, ids, clock): the fast way to start many
        episodes from one seeded environment."""
        layout = None
        if isinstance(self.conn, connection.FileConnection):  # a WAL file: copy its pages
            conn = images.acquire(self.service, images.EMPTY)
            self.conn.backup(conn)
        else:
            layout = self.layout
            conn = images.acquire(self.service, self.conn.serialize(), layout)
        copy = ServiceState(self.service, conn, SimClock(self.clock.now()), self.seed, self.image, layout)
        copy.initial_now = self.initial_now
        for name, store in self.tables.items():
            mine = copy.tables[name]
            mine.dirty = store.dirty  # written before the fork: not as it was opened (for dump_over)
            mine.memo = store.memo  # rows decoded once serve every fork of one state
        return copy

    # ------------------------------------------------------------------ reading (privileged, not tools)
    def dump(self) -> dict[str, list[Row]]:
        """Every table's records, sorted by id, as plain JSON-ready dicts."""
        return {name: store.dump() for name, store in self.tables.items()}

    def dump_over(self, base: Mapping[str, list[Row]]) -> dict[str, list[Row]]:
        """Like :meth:`dump`, but a table nothing wrote to since this state was opened is ``base``'s own list
        (``base``: a dump of what it was opened or forked from). Cheaper, and a diff can skip it by identity.
        The other tables' rows are shared too where stored as before (:meth:`TableStore.dump_shared`): read only.
        Only for a database no other connection writes to (an in-memory fork), as the flags see only this one."""
        return {
            name: base[name] if not store.dirty and name in base else store.dump_shared()
            for name, store in self.tables.items()
        }

    def audit(self, after_seq: int = 0) -> list[audit.AuditRow]:
        return audit.read_rows(self.conn, self.service.name, after_seq)

    def audit_call(self, seq: int) -> dict[str, Any] | None:
        """The call of one audit row as a call pattern reads it, and its ``changes`` (:func:`audit.read_call`)."""
        return audit.read_call(self.conn, self.service.name, seq)

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


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


__all__ = ["Mark", "ServiceState", "ToolContext", "ToolResult", "canonical_json", "load_seed"]
