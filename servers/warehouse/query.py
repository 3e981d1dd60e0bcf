"""The tree of a warehouse query (what :mod:`.sql` parses) and its canonical text.

:func:`render` writes a query back as one canonical line (keywords in capitals, single spaces, names as the table
spells them once :mod:`.engine` has bound them), which is what saved queries, tiles and exports keep; :func:`shape`
is what the query does in parts (its table, aggregates, groups and filters), kept beside the text so that a
check can ask "is there a tile summing amount over EMEA" without parsing SQL.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from coworkenv.servers.kit import ServiceError

Value = str | int | float | bool | None


def words(text: str) -> frozenset[str]:
    """The words of ``text`` (keyword lists)."""
    return frozenset(text.split())


HINT = "Write one SELECT over one table, e.g. SELECT region, SUM(amount) FROM orders GROUP BY region."


class SqlError(ServiceError):
    """A query the warehouse will not run: the message says why, the hint what to write instead."""

    def __init__(self, message: str, hint: str = HINT) -> None:
        super().__init__(message, hint)


@dataclass(frozen=True)
class Column:
    name: str


@dataclass(frozen=True)
class Aggregate:
    fn: str
    """COUNT, SUM, AVG, MIN or MAX."""
    column: str | None
    """None for ``COUNT(*)``."""
    distinct: bool = False


Expr = Union[Column, Aggregate]  # noqa: UP007


@dataclass(frozen=True)
class Item:
    expr: Expr
    alias: str | None = None


@dataclass(frozen=True)
class Compare:
    column: str
    op: str
    value: Value


@dataclass(frozen=True)
class InList:
    column: str
    values: tuple[Value, ...]
    negated: bool = False


@dataclass(frozen=True)
class Between:
    column: str
    low: Value
    high: Value
    negated: bool = False


@dataclass(frozen=True)
class Like:
    column: str
    pattern: str
    negated: bool = False


@dataclass(frozen=True)
class IsNull:
    column: str
    negated: bool = False


@dataclass(frozen=True)
class Logic:
    op: str
    """AND, OR or NOT (NOT has one part)."""
    parts: tuple[Condition, ...]


Condition = Union[Compare, InList, Between, Like, IsNull, Logic]  # noqa: UP007
OrderKey = Union[Column, Aggregate, int]  # noqa: UP007


@dataclass(frozen=True)
class Order:
    key: OrderKey
    desc: bool = False


@dataclass(frozen=True)
class Query:
    items: tuple[Item, ...]
    """Empty for ``SELECT *``."""
    table: str
    distinct: bool = False
    where: Condition | None = None
    group_by: tuple[str | int, ...] = ()
    order_by: tuple[Order, ...] = ()
    limit: int | None = None
    offset: int = 0


# ---------------------------------------------------------------------------------------------- canonical text
def literal(value: Value) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return repr(value)


def name(text: str) -> str:
    """A name as written in canonical text: quoted when it is not a plain lower-case word."""
    plain = text.isidentifier() and text.isascii() and text == text.lower() and text.upper() not in KEYWORDS
    return text if plain else '"' + text.replace('"', '""') + '"'


def expr(e: Expr) -> str:
    if isinstance(e, Column):
        return name(e.name)
    if e.column is None:
        return "COUNT(*)"
    return f"{e.fn}({'DISTINCT ' if e.distinct else ''}{name(e.column)})"


def condition(c: Condition, inside: str = "") -> str:
    if isinstance(c, Logic):
        if c.op == "NOT":
            return "NOT " + condition(c.parts[0], "NOT")
        text = f" {c.op} ".join(condition(p, c.op) for p in c.parts)
        return f"({text})" if inside and (inside != c.op) else text
    col = name(c.column)
    neg = "NOT " if getattr(c, "negated", False) else ""
    if isinstance(c, Compare):
        return f"{col} {c.op} {literal(c.value)}"
    if isinstance(c, InList):
        return f"{col} {neg}IN ({', '.join(literal(v) for v in c.values)})"
    if isinstance(c, Between):
        return f"{col} {neg}BETWEEN {literal(c.low)} AND {literal(c.high)}"
    if isinstance(c, Like):
        return f"{col} {neg}LIKE {literal(c.pattern)}"
    return f"{col} IS {neg}NULL"


def _key(k: OrderKey | str) -> str:
    if isinstance(k, int):
        return str(k)
    if isinstance(k, str):
        return name(k)
    return expr(k)


def render(q: Query) -> str:
    """The query as one canonical line."""
    items = ", ".join(expr(i.expr) + (f" AS {name(i.alias)}" if i.alias else "") for i in q.items) or "*"
    out = f"SELECT {'DISTINCT ' if q.distinct else ''}{items} FROM {name(q.table)}"
    if q.where is not None:
        out += " WHERE " + condition(q.where)
    if q.group_by:
        out += " GROUP BY " + ", ".join(_key(k) for k in q.group_by)
    if q.order_by:
        out += " ORDER BY " + ", ".join(_key(o.key) + (" DESC" if o.desc else "") for o in q.order_by)
    if q.limit is not None:
        out += f" LIMIT {q.limit}" + (f" OFFSET {q.offset}" if q.offset else "")
    return out


@dataclass(frozen=True)
class Shape:
    """What a query does, in parts a check can match: ``measures`` ['SUM(amount)'], ``group_by`` ['day'],
    ``filters`` (the conditions every row must meet, one each) ["region = 'EMEA'"]."""

    table: str
    measures: list[str] = field(default_factory=list)
    group_by: list[str] = field(default_factory=list)
    filters: list[str] = field(default_factory=list)


def shape(q: Query) -> Shape:
    parts: tuple[Condition, ...] = ()
    if q.where is not None:
        parts = q.where.parts if isinstance(q.where, Logic) and q.where.op == "AND" else (q.where,)
    return Shape(
        q.table,
        [expr(i.expr) for i in q.items if isinstance(i.expr, Aggregate)],
        [_key(k) for k in q.group_by],
        [condition(p) for p in parts],
    )


KEYWORDS = words(
    "SELECT DISTINCT FROM WHERE GROUP BY ORDER LIMIT OFFSET AS AND OR NOT IN BETWEEN LIKE IS NULL TRUE "
    "FALSE ASC DESC HAVING JOIN ON UNION WITH COUNT SUM AVG MIN MAX"
)
