"""Seeded database images and a pool of in-memory connections: what makes a fresh environment a copy.

A seed is validated and loaded once; the database it makes is kept as an image (``Connection.serialize``)
keyed by the service object, its version and a hash of the seed's content, so the next environment from the
same seed is ``Connection.deserialize`` of that image (a memory copy, no validation, no inserts). The images
share one memory budget (:data:`DEFAULT_BUDGET_MB`, or ``COWORKENV_SEED_CACHE_MB``; 0 turns the cache off) and
the least recently used go first.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from coworkenv.servers.kit.text import casefold

if TYPE_CHECKING:
    from coworkenv.servers.kit.service import Service

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
    """Seeded database images, least recently used first out, within a byte budget."""

    def __init__(self, budget_bytes: int) -> None:
        self.budget = budget_bytes
        self.size = 0
        self._images: OrderedDict[tuple[Any, ...], tuple[bytes, Service]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...] | None) -> bytes | None:
        if key is None:
            return None
        with self._lock:
            entry = self._images.get(key)
            if entry is None:
                return None
            self._images.move_to_end(key)
            return entry[0]

    def put(self, key: tuple[Any, ...] | None, image: bytes, service: Service) -> None:
        """Keep ``image`` (the service is held so its id cannot be reused while the entry lives)."""
        if key is None or len(image) > self.budget // 4:
            return
        with self._lock:
            old = self._images.pop(key, None)
            if old is not None:
                self.size -= len(old[0])
            self._images[key] = (image, service)
            self.size += len(image)
            while self.size > self.budget:
                _, (dropped, _svc) = self._images.popitem(last=False)
                self.size -= len(dropped)

    def clear(self) -> None:
        with self._lock:
            self._images.clear()
            self.size = 0

    def __len__(self) -> int:
        return len(self._images)


def _budget_from_env() -> int:
    text = os.environ.get("COWORKENV_SEED_CACHE_MB", "")
    try:
        megabytes = float(text) if text.strip() else DEFAULT_BUDGET_MB
    except ValueError:
        megabytes = DEFAULT_BUDGET_MB
    return max(0, int(megabytes * 2**20))


IMAGES = ImageCache(_budget_from_env())
"""The process's seeded images (``IMAGES.clear()`` drops them)."""


def new_connection() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    conn.create_function("casefold", 1, casefold, deterministic=True)
    return conn


def acquire(service: Service, image: bytes) -> sqlite3.Connection:
    """A new in-memory connection holding a copy of ``image``.

    Connections are not pooled: reusing one across ``deserialize`` would keep its compiled statements (four
    times cheaper first calls), but SQLite 3.40 does not expire a statement that reads a table-valued function
    (``json_each``) when the schema is swapped underneath, and running it then crashes the process."""
    del service
    conn = new_connection()
    try:
        conn.deserialize(image)
    except BaseException:
        conn.close()
        raise
    return conn


def release(service: Service, conn: sqlite3.Connection) -> None:
    """Close an in-memory connection no one uses any more."""
    del service
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
