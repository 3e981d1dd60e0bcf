"""What a tool body sees (:class:`ToolContext`) and what a tool call returns (:class:`ToolResult`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from coworkenv.servers.kit.audit import Outcome
from coworkenv.servers.kit.clock import SimClock
from coworkenv.servers.kit.errors import NotFound, ServiceError
from coworkenv.servers.kit.store import Row, TableStore


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


class ToolState(Protocol):
    """What a :class:`ToolContext` needs of the state it runs on: the tables, the clock and id minting.
    :class:`~coworkenv.servers.kit.state.ServiceState` is one; the context never reaches for more."""

    @property
    def tables(self) -> Mapping[str, TableStore]: ...

    @property
    def clock(self) -> SimClock: ...

    def new_id(self, table: str) -> str:
        """A fresh id for a new record of ``table``."""
        ...


class ToolContext:
    """What a tool body sees: the tables, the simulated clock, id minting, and who is calling.

    ``member`` is the workspace member a call acts as where a service has members (docs, chat): None means the
    task's own user, the only one an agent or the user simulator can act as. Naming another member is a
    privileged act of the Python API (:meth:`ServiceState.call_now`), never a tool argument."""

    __slots__ = ("actor", "member", "state")

    def __init__(self, state: ToolState, actor: str, member: str | None = None) -> None:
        self.state = state
        self.actor = actor
        self.member = member

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
        rows, total = self.table(table).page(where, params, order_by, page_size, offset)
        nxt = offset + len(rows)
        return rows, total, (str(nxt) if nxt < total else None)
