"""Connections to service databases: in memory, or a file that other processes may serve too (WAL, a busy
timeout and ``BEGIN IMMEDIATE``, so writers queue instead of failing), and the checks that keep the kit
from writing into a file that is not its own."""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from coworkenv.servers.kit import files, sqlfunctions
from coworkenv.servers.kit.errors import EnvironmentConfigError
from coworkenv.servers.kit.service import Service

log = logging.getLogger("coworkenv.servers")

BUSY_TIMEOUT_MS = 30_000
"""How long one statement waits for another process's write lock before it retries."""
LOCK_DEADLINE_S = 300.0
"""How long a write transaction waits in all for the write lock of a database another process also serves."""


class FileConnection(sqlite3.Connection):
    """A connection to a database file that other processes may serve too: every ``BEGIN`` takes the
    write lock up front (``BEGIN IMMEDIATE``), waiting for it, so two writers queue instead of one failing
    with "database is locked" when its read snapshot turns out stale at the first write."""

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        if sql != "BEGIN":
            return super().execute(sql, parameters)
        deadline = time.monotonic() + LOCK_DEADLINE_S
        while True:
            try:
                return super().execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                busy = "locked" in str(exc) or "busy" in str(exc)
                if not busy or time.monotonic() > deadline:
                    raise
                log.warning("waiting for the write lock of the database: %s", exc)


def connect(path: Path | None, wal: bool = True) -> sqlite3.Connection:
    """A connection with the kit's settings: in memory, or a file with a busy timeout (and in WAL mode
    unless ``wal`` is off: a file not yet known to be ours is only read)."""
    if path is None:
        conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    else:
        conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, factory=FileConnection)
    try:
        sqlfunctions.register(conn)
        if path is not None:
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        if path is not None and wal:
            use_wal(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def refuse_foreign(meta: Mapping[str, str], path: Path, service: Service) -> None:
    """A database whose ``_meta`` does not name ``service`` is someone else's: refuse it, change nothing."""
    if meta.get("service") == service.name:
        return
    if not meta:
        raise EnvironmentConfigError(
            f"{path} is a SQLite database of something else (no coworkenv tables); it is left untouched: "
            "pass a new file"
        )
    raise EnvironmentConfigError(
        f"{path} holds the {meta.get('service')!r} service, not {service.name!r}; pass that service's database "
        "or a new file"
    )


def use_wal(conn: sqlite3.Connection) -> None:
    """WAL mode: readers never wait for the writer, and another process's writer waits (busy timeout)."""
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")


def is_blank(path: Path) -> bool:
    """An empty file, or a SQLite database with nothing in it: nobody's data, safe to build over."""
    if files.is_empty_file(path):
        return True
    if not path.is_file():
        return False
    try:
        with path.open("rb") as fh:
            if fh.read(len(files.SQLITE_HEADER)) != files.SQLITE_HEADER:
                return False
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            return conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
        finally:
            conn.close()
    except (OSError, sqlite3.Error):
        return False
