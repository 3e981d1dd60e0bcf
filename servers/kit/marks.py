"""Marks on a service's state: savepoints to roll a run back to (:class:`Mark`), and the :class:`Marks` part of
:class:`~coworkenv.servers.kit.state.ServiceState` that makes, rolls back to and releases them."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass

from coworkenv.servers.kit import connection
from coworkenv.servers.kit.clock import SimClock
from coworkenv.servers.kit.errors import EnvironmentConfigError
from coworkenv.servers.kit.store import Row, TableStore


@dataclass(frozen=True)
class Mark:
    """A point in a service's history that :meth:`ServiceState.rollback` returns to (see :meth:`ServiceState.mark`)."""

    depth: int
    now: str
    writes: dict[str, int]
    dirty: dict[str, bool]
    seq: int
    """The last audit row's sequence number at the mark (0 when none)."""

    @property
    def savepoint(self) -> str:
        return f"_mark{self.depth}"


class Marks:
    """The privileged (not a tool) marks of one service's state: the part of :class:`ServiceState` that keeps them."""

    conn: sqlite3.Connection
    clock: SimClock
    tables: dict[str, TableStore]
    marks: list[Mark]
    """The open marks, innermost last."""

    def mark(self) -> Mark:
        """Mark the state as it stands, to come back to it with :meth:`rollback` (validation plays many runs from
        one state this way: a rollback costs what the run changed, where a fork copies the whole database, and
        the connection keeps its compiled statements). The mark is a SQLite savepoint: the calls made after it
        each run in a savepoint of their own inside it (state change and audit row together, as ever), and
        nothing is committed until :meth:`release`. Marks nest. In-memory databases only (a file would stay
        locked for writing while marked)."""
        if isinstance(self.conn, connection.FileConnection):
            raise EnvironmentConfigError("marks are for in-memory states; fork a file's state first")
        row = self.conn.execute("SELECT MAX(seq) FROM _audit").fetchone()
        mark = Mark(
            depth=len(self.marks),
            now=self.clock.iso(),
            writes={n: s.writes for n, s in self.tables.items()},
            dirty={n: s.dirty for n, s in self.tables.items()},
            seq=int(row[0] or 0),
        )
        if not self.marks:
            # the outermost mark opens a plain transaction first: calls in savepoints of a transaction that a
            # savepoint opened cost SQLite 3.40 about ten times as much as in one that BEGIN opened
            self.conn.execute("BEGIN")
        self.conn.execute(f"SAVEPOINT {mark.savepoint}")
        self.marks.append(mark)
        return mark

    def rollback(self, mark: Mark) -> None:
        """Back to the state at ``mark``: what was written since (records, audit rows, ids) is undone and the
        clock is set back. The mark stays (marks made after it are dropped), so one can come back again."""
        self._check_mark(mark)
        self.conn.execute(f"ROLLBACK TO {mark.savepoint}")
        del self.marks[mark.depth + 1 :]
        for name, store in self.tables.items():
            store.writes, store.dirty = mark.writes[name], mark.dirty[name]
        if self.clock.iso() != mark.now:
            self.clock.set(mark.now)

    def release(self, mark: Mark) -> None:
        """Keep what was done since ``mark`` and drop the mark (and those made after it); releasing the outermost
        commits."""
        self._check_mark(mark)
        self.conn.execute(f"RELEASE {mark.savepoint}")
        del self.marks[mark.depth :]
        if not self.marks:
            self.conn.execute("COMMIT")

    def _check_mark(self, mark: Mark) -> None:
        if mark.depth >= len(self.marks) or self.marks[mark.depth] is not mark:
            raise EnvironmentConfigError("this mark is not open on this state (rolled back past, or released)")

    def dump_since(self, mark: Mark, base: Mapping[str, list[Row]]) -> dict[str, list[Row]]:
        """Like :meth:`dump_over`, with ``base`` a dump of the state at ``mark``: a table nothing wrote to since
        the mark is ``base``'s own list."""
        return {
            name: base[name] if store.writes == mark.writes[name] and name in base else store.dump_shared()
            for name, store in self.tables.items()
        }
