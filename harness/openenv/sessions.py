"""The OpenEnv server's sessions: each an episode of its own with its lock, closed when its socket closes or, made
over HTTP and left idle past the timeout, by the reaper."""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from coworkenv.harness.openenv.episode import Episode, Limits, TaskPool

MAX_SESSIONS = 1024
IDLE_TIMEOUT_S = 600.0


class CapacityError(RuntimeError):
    def __init__(self, active: int, limit: int) -> None:
        super().__init__(f"the server holds its maximum of {limit} sessions ({active} open); close one or retry later")
        self.active, self.limit = active, limit


@dataclass
class Session:
    id: str
    episode: Episode
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    last_active: float = field(default_factory=time.monotonic)
    attached: bool = False
    """A WebSocket holds it (never reaped; closed when that socket closes if asked to close meanwhile)."""
    closing: bool = False


class SessionTable:
    """The open sessions, each with its own episode."""

    def __init__(self, pool: TaskPool, limits: Limits, max_sessions: int, idle_timeout_s: float) -> None:
        self.pool, self.limits = pool, limits
        self.max_sessions, self.idle_timeout_s = max_sessions, idle_timeout_s
        self.open: dict[str, Session] = {}
        self.opened = self.closed = 0

    def create(self) -> Session:
        if len(self.open) >= self.max_sessions:
            raise CapacityError(len(self.open), self.max_sessions)
        session = Session(uuid.uuid4().hex, Episode(self.pool, self.limits))
        self.open[session.id] = session
        self.opened += 1
        return session

    def close(self, session_id: str) -> bool:
        session = self.open.pop(session_id, None)
        if session is None:
            return False
        session.episode.close()
        self.closed += 1
        return True

    def reap(self) -> int:
        """Close the sessions no socket holds that were idle past the timeout; how many."""
        cutoff = time.monotonic() - self.idle_timeout_s
        stale = [s.id for s in self.open.values() if not s.attached and s.last_active < cutoff]
        for session_id in stale:
            self.close(session_id)
        return len(stale)

    def close_all(self) -> None:
        for session_id in list(self.open):
            self.close(session_id)


async def run_locked(session: Session, work: Callable[[Episode], Awaitable[Any]]) -> Any:
    async with session.lock:
        session.last_active = time.monotonic()
        try:
            return await work(session.episode)
        finally:
            session.last_active = time.monotonic()


def rss_kib() -> int | None:
    """This process's resident memory (Linux), for watching sessions come and go."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            return next((int(line.split()[1]) for line in status if line.startswith("VmRSS:")), None)
    except OSError:
        return None


async def reaper(table: SessionTable) -> None:
    interval = max(1.0, min(60.0, table.idle_timeout_s / 4))
    while True:
        await anyio.sleep(interval)
        table.reap()
