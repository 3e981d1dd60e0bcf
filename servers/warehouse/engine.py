"""Runs a parsed warehouse query over one table's rows, in Python.

:func:`bind` checks a :class:`~.query.Query` against the table's columns (names resolved as the table spells
them, values of the column's type, aggregates over columns they make sense for, every selected column grouped
when the query groups) and gives back the query with canonical names; :func:`evaluate` filters, groups, orders
and cuts the rows. Nothing here touches a database: the rows are handed in.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from coworkenv.servers.warehouse.query import (
    Aggregate,
    Between,
    Column,
    Compare,
    Condition,
    Expr,
    InList,
    IsNull,
    Item,
    Like,
    Logic,
    Order,
    Query,
    SqlError,
    Value,
    expr,
)

NUMERIC = ("integer", "number")
MAX_WILDCARDS = 10


class Binder:
    """The columns of one table, by name (case-insensitive), and their types."""

    def __init__(self, table: str, columns: Sequence[Mapping[str, Any]]) -> None:
        self.table = table
        self.types = {str(c["name"]): str(c["type"]) for c in columns}
        self.by_fold = {name.casefold(): name for name in self.types}

    def column(self, raw: str) -> str:
        name = raw.split(".")[-1]
        found = self.by_fold.get(name.casefold())
        if found is None:
            raise SqlError(
                f"{self.table} has no column {name!r}.",
                f"Its columns: {', '.join(self.types)} (describe_table shows their types).",
            )
        return found

    def value(self, column: str, value: Value) -> Value:
        kind = self.types[column]
        if kind in NUMERIC:
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            want = "a number, e.g. 100"
        elif kind == "boolean":
            if isinstance(value, int) and not isinstance(value, bool) and value in (0, 1):
                return bool(value)
            ok, want = isinstance(value, bool), "TRUE or FALSE"
        else:
            ok = isinstance(value, str)
            want = "quoted text, e.g. '2026-03-01'" if kind in ("date", "timestamp") else "quoted text, e.g. 'EMEA'"
        if not ok:
            raise SqlError(f"{column} is a {kind} column: compare it with {want}, not {value!r}.")
        return value

    def aggregate(self, agg: Aggregate) -> Aggregate:
        if agg.column is None:
            return agg
        column = self.column(agg.column)
        if agg.fn in ("SUM", "AVG") and self.types[column] not in NUMERIC:
            raise SqlError(f"{agg.fn} needs a numeric column; {column} is {self.types[column]}.")
        return replace(agg, column=column)

    def expr(self, e: Expr) -> Expr:
        return self.aggregate(e) if isinstance(e, Aggregate) else Column(self.column(e.name))

    def condition(self, c: Condition) -> Condition:
        if isinstance(c, Logic):
            return replace(c, parts=tuple(self.condition(p) for p in c.parts))
        column = self.column(c.column)
        if isinstance(c, Compare):
            return replace(c, column=column, value=self.value(column, c.value))
        if isinstance(c, InList):
            return replace(c, column=column, values=tuple(self.value(column, v) for v in c.values))
        if isinstance(c, Between):
            return replace(c, column=column, low=self.value(column, c.low), high=self.value(column, c.high))
        if isinstance(c, Like):
            if self.types[column] in NUMERIC or self.types[column] == "boolean":
                raise SqlError(f"LIKE matches text; {column} is {self.types[column]}.")
            if c.pattern.count("%") + c.pattern.count("_") > MAX_WILDCARDS:
                raise SqlError(f"A LIKE pattern may hold at most {MAX_WILDCARDS} wildcards.")
            return replace(c, column=column)
        return replace(c, column=column)


def bind(q: Query, table: str, columns: Sequence[Mapping[str, Any]]) -> Query:
    """``q`` checked against the table's columns, with every name as the table spells it."""
    b = Binder(table, columns)
    items = tuple(Item(b.expr(i.expr), i.alias) for i in q.items)
    grouped = bool(q.group_by) or any(isinstance(i.expr, Aggregate) for i in items)
    if grouped and not items:
        raise SqlError("SELECT * cannot be grouped: name the columns and the aggregates.")
    aliases = {i.alias.casefold(): i for i in items if i.alias}
    group: list[str | int] = []
    for key in q.group_by:
        if isinstance(key, int):
            if key > len(items) or not isinstance(items[key - 1].expr, Column):
                raise SqlError(f"GROUP BY {key} must name a selected column by its position.")
            group.append(str(items[key - 1].expr.name))  # type: ignore[union-attr]
        elif key.casefold() in aliases and isinstance(aliases[key.casefold()].expr, Column):
            group.append(aliases[key.casefold()].expr.name)  # type: ignore[union-attr]
        else:
            group.append(b.column(key))
    if grouped:
        for i in items:
            if isinstance(i.expr, Column) and i.expr.name not in group:
                raise SqlError(
                    f"{i.expr.name} is selected but not grouped.",
                    f"Add it to GROUP BY, or aggregate it (MAX({i.expr.name})).",
                )
    names = [i.alias or expr(i.expr) for i in items] or list(b.types)
    if len({n.casefold() for n in names}) != len(names):
        raise SqlError("Two result columns share a name.", "Give one of them another name with AS.")
    order: list[Order] = []
    for o in q.order_by:
        if isinstance(o.key, int):
            if o.key > len(names):
                raise SqlError(f"ORDER BY {o.key}: the result has only {len(names)} columns.")
            order.append(o)
        elif isinstance(o.key, Column) and o.key.name.casefold() in aliases:
            order.append(replace(o, key=Column(aliases[o.key.name.casefold()].alias or "")))
        else:
            bound = b.expr(o.key)
            if grouped and isinstance(bound, Column) and bound.name not in group:
                raise SqlError(
                    f"ORDER BY {bound.name}: the query groups, so order by a grouped column or an aggregate."
                )
            if not grouped and isinstance(bound, Aggregate):
                raise SqlError("ORDER BY an aggregate needs a GROUP BY or an aggregate in the SELECT.")
            order.append(replace(o, key=bound))
    where = None if q.where is None else b.condition(q.where)
    return replace(q, items=items, table=table, where=where, group_by=tuple(group), order_by=tuple(order))


# ---------------------------------------------------------------------------------------------- evaluation
def _like(pattern: str) -> re.Pattern[str]:
    parts = ("." if ch == "_" else ".*" if ch == "%" else re.escape(ch) for ch in pattern)
    return re.compile("".join(parts), re.IGNORECASE | re.DOTALL)


def _compare(op: str, left: Any, right: Any) -> bool:
    if op == "=":
        return bool(left == right)
    if op == "!=":
        return bool(left != right)
    if op == "<":
        return bool(left < right)
    if op == "<=":
        return bool(left <= right)
    if op == ">":
        return bool(left > right)
    return bool(left >= right)


def test(c: Condition, row: Mapping[str, Any]) -> bool | None:
    """SQL's three-valued truth of a condition on one row (None: unknown, a NULL was compared)."""
    if isinstance(c, Logic):
        found = [test(p, row) for p in c.parts]
        if c.op == "NOT":
            return None if found[0] is None else not found[0]
        if c.op == "AND":
            return False if False in found else None if None in found else True
        return True if True in found else None if None in found else False
    value = row.get(c.column)
    if isinstance(c, IsNull):
        return (value is not None) if c.negated else (value is None)
    if value is None:
        return None
    if isinstance(c, Compare):
        return _compare(c.op, value, c.value)
    if isinstance(c, InList):
        return (value in c.values) != c.negated
    if isinstance(c, Between):
        return bool(c.low <= value <= c.high) != c.negated
    assert isinstance(c, Like)
    return (_like(c.pattern).fullmatch(str(value)) is not None) != c.negated


def _number(total: float, integer: bool, digits: int) -> int | float:
    return int(total) if integer else round(total, digits)


def compute(agg: Aggregate, rows: Sequence[Mapping[str, Any]], types: Mapping[str, str]) -> Any:
    if agg.column is None:
        return len(rows)
    values: list[Any] = [r.get(agg.column) for r in rows if r.get(agg.column) is not None]
    if agg.fn == "COUNT":
        return len(set(map(repr, values))) if agg.distinct else len(values)
    if not values:
        return None
    if agg.fn == "MIN":
        return min(values)
    if agg.fn == "MAX":
        return max(values)
    total = sum(values)
    if agg.fn == "SUM":
        return _number(total, types.get(agg.column) == "integer", 6)
    return round(total / len(values), 4)


def _sort_value(value: Any) -> tuple[bool, Any]:
    return (value is not None, value)


def evaluate(
    q: Query, columns: Sequence[Mapping[str, Any]], rows: Sequence[Mapping[str, Any]]
) -> tuple[list[str], list[dict[str, Any]]]:
    """The result's column names and all its rows (before LIMIT and OFFSET), for a query :func:`bind` gave."""
    types = {str(c["name"]): str(c["type"]) for c in columns}
    kept = [r for r in rows if q.where is None or test(q.where, r) is True]
    items = q.items or tuple(Item(Column(n)) for n in types)
    names = [i.alias or expr(i.expr) for i in items]
    grouped = bool(q.group_by) or any(isinstance(i.expr, Aggregate) for i in items)
    found: list[tuple[dict[str, Any], dict[str, Any]]] = []  # (the result row, what ordering may read)
    if grouped:
        groups: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
        for r in kept:
            groups.setdefault(tuple(r.get(str(k)) for k in q.group_by), []).append(r)
        if not q.group_by and not groups:
            groups[()] = []
        for key in sorted(groups, key=lambda k: tuple(_sort_value(v) for v in k)):
            members = groups[key]
            env: dict[str, Any] = dict(zip(map(str, q.group_by), key, strict=True))
            for o in q.order_by:
                if isinstance(o.key, Aggregate):
                    env[expr(o.key)] = compute(o.key, members, types)
            out = {
                n: compute(i.expr, members, types) if isinstance(i.expr, Aggregate) else env[i.expr.name]
                for n, i in zip(names, items, strict=True)
            }
            found.append((out, env))
    else:
        for r in kept:
            out = {n: r.get(i.expr.name) for n, i in zip(names, items, strict=True) if isinstance(i.expr, Column)}
            found.append((out, dict(r)))
    if q.distinct:
        seen: set[str] = set()
        unique = []
        for out, env in found:
            mark = repr(sorted(out.items()))
            if mark not in seen:
                seen.add(mark)
                unique.append((out, env))
        found = unique
    for o in reversed(q.order_by):
        found.sort(key=functools.partial(_order_key, o, names), reverse=o.desc)
    return names, [out for out, _ in found]


def _order_key(o: Order, names: list[str], pair: tuple[dict[str, Any], dict[str, Any]]) -> tuple[bool, Any]:
    return _sort_value(_order_value(o, pair, names))


def _order_value(o: Order, pair: tuple[dict[str, Any], dict[str, Any]], names: list[str]) -> Any:
    out, env = pair
    if isinstance(o.key, int):
        return out[names[o.key - 1]]
    text = o.key.name if isinstance(o.key, Column) else expr(o.key)
    return out[text] if text in out else env.get(text)
