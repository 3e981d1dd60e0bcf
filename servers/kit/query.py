"""A small builder for the WHERE clauses of search and list tools.

Each method adds one filter and ignores an absent value (``None``, ``''`` or an empty list), so a tool's
filters read as a flat list::

    where = Where().text(["subject", "description"], query).any_of("status", status).eq("assignee_id", assignee_id)
    rows, total, nxt = ctx.paginate("tickets", where.sql, where.params, "created_at, id", page_size, page_token)

Column names are SQL: they must be literals at the call site, never user input. Values always travel as bound
parameters. ``0`` and ``False`` are values, not absences.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from coworkenv.servers.kit.sqlfunctions import list_holds, list_item_contains
from coworkenv.servers.kit.text import contains_clause


def _absent(value: Any) -> bool:
    return value is None or (isinstance(value, (str, list, tuple, set, frozenset)) and len(value) == 0)


class Where:
    """Filters joined with AND: :attr:`sql` is the WHERE fragment ('' when empty), :attr:`params` its values."""

    def __init__(self) -> None:
        self._clauses: list[str] = []
        self._params: list[Any] = []

    @property
    def sql(self) -> str:
        return " AND ".join(self._clauses)

    @property
    def params(self) -> list[Any]:
        return list(self._params)

    def __bool__(self) -> bool:
        return bool(self._clauses)

    def raw(self, sql: str, *params: Any) -> Where:
        """Add a fragment as is (always, whatever the params); for the rare filter the other methods miss."""
        self._clauses.append(sql)
        self._params.extend(params)
        return self

    def text(self, columns: Sequence[str], query: str | None, lists: Sequence[str] = ()) -> Where:
        """Any of ``columns`` contains ``query``, or an item of any of the JSON lists of strings in ``lists`` does:
        literal (``%``, ``_``, quotes mean themselves), case-folded. A list is matched by its items' text, never by
        its JSON (``[`` or ``","`` match no room's features)."""
        if _absent(query):
            return self
        assert query is not None
        parts, params = [], []
        if columns:
            clause, values = contains_clause(list(columns), query)
            parts.append(clause)
            params.extend(values)
        for column in lists:
            clause, values = list_item_contains(column, query.casefold())
            parts.append(clause)
            params.extend(values)
        return self.raw("(" + " OR ".join(parts) + ")", *params)

    def eq(self, column: str, value: Any) -> Where:
        """``column = value``."""
        return self if _absent(value) else self.raw(f"{column} = ?", value)

    def eq_folded(self, column: str, value: str | None) -> Where:
        """``column`` equals ``value`` ignoring case (both sides case-folded)."""
        return self if _absent(value) else self.raw(f"casefold({column}) = ?", str(value).casefold())

    def any_of(self, column: str, values: Sequence[Any] | None) -> Where:
        """``column`` is one of ``values``."""
        if values is None or _absent(list(values)):
            return self
        return self.raw(f"{column} IN ({', '.join('?' * len(values))})", *values)

    def gte(self, column: str, value: Any) -> Where:
        """``column >= value`` (the start of a window, included)."""
        return self if _absent(value) else self.raw(f"{column} >= ?", value)

    def lte(self, column: str, value: Any) -> Where:
        """``column <= value`` (an upper bound, included)."""
        return self if _absent(value) else self.raw(f"{column} <= ?", value)

    def lt(self, column: str, value: Any) -> Where:
        """``column < value`` (the end of a window, excluded)."""
        return self if _absent(value) else self.raw(f"{column} < ?", value)

    def has_tag(self, column: str, value: Any) -> Where:
        """The JSON list of strings in ``column`` (qualified, e.g. ``tickets.tags``) holds ``value``."""
        if _absent(value):
            return self
        sql, params = list_holds(column, value)
        return self.raw(sql, *params)

    def lacks_tag(self, column: str, value: Any) -> Where:
        """The JSON list of strings in ``column`` does not hold ``value``."""
        if _absent(value):
            return self
        sql, params = list_holds(column, value)
        return self.raw(f"NOT {sql}", *params)
