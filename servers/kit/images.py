"""Seeded database images and a pool of in-memory connections: what makes a fresh environment a copy.

A seed is validated and loaded once; the database it makes is kept as an image (``Connection.serialize``)
keyed by the service object, its version and a hash of the seed's content, so the next environment from the
same seed is ``Connection.deserialize`` of that image (a memory copy, no validation, no inserts). The images
share one memory budget (:data:`DEFAULT_BUDGET_MB`, or ``COWORKENV_SEED_CACHE_MB``; 0 turns the cache off) and
the least recently used go first.

A closed environment's connection goes back to a pool, and the next environment whose image has the same
*layout* (:func:`layout_of`: the schema cookie and every ``sqlite_master`` row, root pages included) gets it:
its compiled statements (the audit insert, the tools' queries) then run on the new image without being compiled
again. Only the same layout is safe: SQLite keeps running a compiled statement after ``deserialize`` when the
schema cookie matches, and a statement compiled for other root pages would read the wrong table.
"""

from __future__ import annotations

import hashlib
import io
import logging
import math
import os
import pickle
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from coworkenv.servers.kit import sqlfunctions
from coworkenv.servers.kit.service import Service

log = logging.getLogger(__name__)

DEFAULT_BUDGET_MB = 256

CLOSED = sqlite3.connect(":memory:", check_same_thread=False)
CLOSED.close()
"""What a closed state points at, so that using it raises like any closed connection."""


def seed_key(service: Service, seed: Mapping[str, Any] | None) -> tuple[Any, ...] | None:
    """The cache key of a seed: its service (the object, so two services of one name never share), version and
    a hash of the seed's pickle (exact about types: a tuple is not a list, ``1`` not ``"1"`` nor ``True``; equal
    seeds built differently may hash apart, which only misses the cache). None for a seed pickle cannot write.

    The pickler runs in fast mode (no memo: twice as quick on a seed of many small records; a value shared by
    two records is written twice, which changes nothing for a hash of the content)."""
    if not seed:
        return (id(service), service.version, "")
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=5)
    pickler.fast = True  # no memo; a cycle raises ValueError instead
    try:
        pickler.dump(seed)
    except Exception:  # an object pickle refuses, a cycle, absurd nesting: no caching, the seed is validated as usual
        return None
    return (id(service), service.version, hashlib.sha256(buffer.getbuffer()).hexdigest())


class ImageCache:
    """Seeded database images, least recently used first out, within a byte budget; each with its layout
    (:func:`layout_of`, None when not known) so that a copy of it can go into a pooled connection."""

    def __init__(self, budget_bytes: int) -> None:
        self.budget = budget_bytes
        self.size = 0
        self._images: OrderedDict[tuple[Any, ...], tuple[bytes, Service, str | None]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...] | None) -> bytes | None:
        entry = self.entry(key)
        return None if entry is None else entry[0]

    def entry(self, key: tuple[Any, ...] | None) -> tuple[bytes, str | None] | None:
        """The image kept under ``key`` and its layout."""
        if key is None:
            return None
        with self._lock:
            entry = self._images.get(key)
            if entry is None:
                return None
            self._images.move_to_end(key)
            return entry[0], entry[2]

    def put(self, key: tuple[Any, ...] | None, image: bytes, service: Service, layout: str | None = None) -> None:
        """Keep ``image`` (the service is held so its id cannot be reused while the entry lives)."""
        if key is None or len(image) > self.budget // 4:
            return
        with self._lock:
            old = self._images.pop(key, None)
            if old is not None:
                self.size -= len(old[0])
            self._images[key] = (image, service, layout)
            self.size += len(image)
            while self.size > self.budget:
                _, (dropped, _svc, _layout) = self._images.popitem(last=False)
                self.size -= len(dropped)

    def clear(self) -> None:
        with self._lock:
            self._images.clear()
            self.size = 0

    def __len__(self) -> int:
        return len(self._images)


def _number_from_env(name: str, default: float, kind: type[int] | type[float]) -> float:
    """A setting read from the environment: a number, at least 0; unset or blank gives ``default``, anything
    else a warning that says what was used instead (a typo must not change how a run behaves unnoticed)."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or not math.isfinite(value) or value > 2**40:
        log.warning("%s=%r is not a %s: using %s", name, text, _KIND_WORDS[kind], default)
        return default
    if value < 0:
        log.warning("%s=%r is below 0: using 0 (off)", name, text)
        return 0
    return value


_KIND_WORDS = {int: "whole number", float: "number of megabytes"}


def _budget_from_env() -> int:
    megabytes = _number_from_env("COWORKENV_SEED_CACHE_MB", DEFAULT_BUDGET_MB, float)
    return int(megabytes * 2**20)


IMAGES = ImageCache(_budget_from_env())
"""The process's seeded images (``IMAGES.clear()`` drops them)."""


def _count_from_env(name: str, default: int) -> int:
    return int(_number_from_env(name, default, int))


POOL_PER_LAYOUT = _count_from_env("COWORKENV_CONNECTION_POOL", 4)
"""Idle connections kept per (service, layout) (``COWORKENV_CONNECTION_POOL``; 0 turns the pool off)."""
POOL_MAX_IDLE = 32
"""Idle connections kept in all."""
POOL_MAX_IMAGE = 1 << 20
"""Images larger than this get a connection of their own (a pooled one would hold its pages while idle)."""
STATEMENT_CACHE = 256
"""Compiled statements a connection keeps (Python's default is 128; a service's tools use fewer than this)."""


def layout_of(conn: sqlite3.Connection) -> str:
    """What a compiled statement depends on in a database: the schema cookie and every ``sqlite_master`` row,
    root pages included (a hash). Two databases of one layout run each other's compiled statements correctly."""
    version = conn.execute("PRAGMA schema_version").fetchone()[0]
    rows = conn.execute("SELECT type, name, tbl_name, rootpage, sql FROM sqlite_master ORDER BY rowid").fetchall()
    return hashlib.sha256(repr((version, rows)).encode()).hexdigest()


class ConnectionPool:
    """Idle in-memory connections by (service, layout): at most :data:`POOL_PER_LAYOUT` each and
    :data:`POOL_MAX_IDLE` in all (the layout used least recently gives one up first)."""

    def __init__(self) -> None:
        self._idle: dict[tuple[int, str], list[tuple[sqlite3.Connection, Service]]] = {}
        self._count = 0
        self._lock = threading.Lock()

    def take(self, service: Service, layout: str) -> sqlite3.Connection | None:
        with self._lock:
            idle = self._idle.get((id(service), layout))
            if not idle:
                return None
            self._count -= 1
            return idle.pop()[0]

    def give(self, service: Service, layout: str, conn: sqlite3.Connection) -> bool:
        """Keep ``conn`` for the next image of this layout; False when there is no room (the caller closes it).
        The service is held so its id cannot be reused while its connections wait."""
        dropped = None
        with self._lock:
            key = (id(service), layout)
            idle = self._idle.pop(key, [])
            self._idle[key] = idle  # the most recently used layout last
            if len(idle) >= POOL_PER_LAYOUT:
                return False
            if self._count >= POOL_MAX_IDLE:
                oldest = next(k for k, conns in self._idle.items() if conns)
                dropped = self._idle[oldest].pop(0)[0]
                self._count -= 1
            idle.append((conn, service))
            self._count += 1
        if dropped is not None:
            dropped.close()
        return True

    def clear(self) -> None:
        with self._lock:
            idle, self._idle, self._count = self._idle, {}, 0
        for conns in idle.values():
            for conn, _service in conns:
                conn.close()

    def __len__(self) -> int:
        with self._lock:
            return self._count


POOL = ConnectionPool()
"""The process's idle connections (``POOL.clear()`` closes them)."""


def new_connection() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False, cached_statements=STATEMENT_CACHE)
    sqlfunctions.register(conn)
    return conn


def poolable(image: bytes) -> bool:
    return len(image) <= POOL_MAX_IMAGE


def acquire(service: Service, image: bytes, layout: str | None = None) -> sqlite3.Connection:
    """An in-memory connection holding a copy of ``image``: an idle one of the same ``layout`` when there is one
    (its compiled statements kept), else a new one. ``layout`` must be :func:`layout_of` the image (None: unknown,
    always a new connection)."""
    conn = POOL.take(service, layout) if layout is not None else None
    if conn is not None:
        try:
            conn.deserialize(image)
            return conn
        except sqlite3.Error:  # e.g. a statement left running: this one is not reused
            conn.close()
    conn = new_connection()
    try:
        conn.deserialize(image)
    except BaseException:
        conn.close()
        raise
    return conn


def release(service: Service, conn: sqlite3.Connection, layout: str | None = None) -> None:
    """An in-memory connection no one uses any more: back to the pool when its database has ``layout`` (what
    :func:`layout_of` said of the image it was given; None: unknown) and nothing is left open in it, else
    closed."""
    if layout is None or conn.in_transaction or not POOL.give(service, layout, conn):
        conn.close()


def _empty_image() -> bytes:
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE TABLE _empty (x)")  # a database never written to has nothing to serialize
        conn.execute("DROP TABLE _empty")
        return conn.serialize()
    finally:
        conn.close()


EMPTY = _empty_image()
