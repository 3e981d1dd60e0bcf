"""The warehouse's query language: one read-only ``SELECT`` over one table, parsed here into a :class:`Query`.

The text is never handed to SQLite. It is tokenized and parsed into a small tree that :mod:`.engine` checks
against the table's columns and evaluates over the warehouse's rows in Python, so a query can neither write nor
reach anything but the warehouse's own tables, whatever it says::

    SELECT [DISTINCT] item, ... FROM table [WHERE condition] [GROUP BY column, ...]
           [ORDER BY key [ASC|DESC], ...] [LIMIT n [OFFSET m]]

An item is ``*``, a column, or ``COUNT(*)``, ``COUNT([DISTINCT] column)``, ``SUM|AVG|MIN|MAX(column)``, each with
an optional ``AS alias``. A condition joins comparisons (``=  !=  <>  <  <=  >  >=`` against a literal),
``[NOT] IN (...)``, ``[NOT] BETWEEN a AND b``, ``[NOT] LIKE 'pattern'`` and ``IS [NOT] NULL`` with AND, OR, NOT
and parentheses. An order key is a column, an alias, an aggregate or a position (``ORDER BY 2 DESC``).
Anything else is a :class:`SqlError` saying what is not supported and what to write instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from coworkenv.servers.warehouse.query import (
    HINT,
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
    OrderKey,
    Query,
    SqlError,
    Value,
    words,
)

T = TypeVar("T")
AGGREGATES = ("COUNT", "SUM", "AVG", "MIN", "MAX")
COMPARE_OPS = ("=", "!=", "<", "<=", ">", ">=")
MAX_DEPTH = 20
"""The deepest nesting of parentheses a condition may have."""
MAX_TERMS = 200
"""The most select items, conditions, group and order keys, and IN values a query may hold in all."""
WRITES = words(
    "INSERT UPDATE DELETE REPLACE UPSERT MERGE CREATE DROP ALTER TRUNCATE ATTACH DETACH PRAGMA VACUUM "
    "REINDEX GRANT REVOKE COPY CALL EXEC EXECUTE BEGIN COMMIT ROLLBACK SAVEPOINT"
)
RESERVED = words(
    "SELECT DISTINCT FROM WHERE GROUP BY ORDER LIMIT OFFSET AS AND OR NOT IN BETWEEN LIKE IS NULL TRUE "
    "FALSE ASC DESC HAVING JOIN ON UNION WITH"
)


# ---------------------------------------------------------------------------------------------- tokens
_TOKEN = re.compile(
    r"(?P<ws>\s+)|(?P<comment>--[^\n]*)|(?P<num>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)"
    r"|(?P<str>'(?:[^']|'')*')|(?P<qid>\"(?:[^\"]|\"\")+\")|(?P<id>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op><=|>=|<>|!=|==|[=<>(),*;.\-])"
)


@dataclass(frozen=True)
class Token:
    kind: str
    """num, str, id (a word or quoted name), op, end."""
    text: str
    value: Value
    pos: int
    quoted: bool = False

    def word(self) -> str:
        return self.text.upper() if self.kind == "id" and not self.quoted else ""


def tokenize(sql: str) -> list[Token]:
    out: list[Token] = []
    pos = 0
    while pos < len(sql):
        m = _TOKEN.match(sql, pos)
        if m is None:
            if sql[pos] in "'\"":
                raise SqlError(f"A quote opened at character {pos + 1} is never closed.")
            raise SqlError(f"Unexpected character {sql[pos]!r} at character {pos + 1}.")
        kind, text = m.lastgroup or "", m.group()
        if kind == "num":
            number = float(text)
            value: Value = int(text) if re.fullmatch(r"\d+", text) else number
            out.append(Token("num", text, value, pos))
        elif kind == "str":
            out.append(Token("str", text, text[1:-1].replace("''", "'"), pos))
        elif kind == "qid":
            name = text[1:-1].replace('""', '"')
            out.append(Token("id", name, name, pos, quoted=True))
        elif kind == "id":
            out.append(Token("id", text, text, pos))
        elif kind == "op":
            out.append(Token("op", "=" if text == "==" else "!=" if text == "<>" else text, text, pos))
        pos = m.end()
    out.append(Token("end", "", None, len(sql)))
    return out


# ---------------------------------------------------------------------------------------------- parser
class _Parser:
    def __init__(self, sql: str) -> None:
        self.tokens = tokenize(sql)
        self.i = 0
        self.terms = 0

    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def take(self) -> Token:
        tok = self.tokens[self.i]
        self.i = min(self.i + 1, len(self.tokens) - 1)
        return tok

    def at(self, *words: str) -> bool:
        return self.tok.word() in words

    def at_op(self, op: str) -> bool:
        return self.tok.kind == "op" and self.tok.text == op

    def accept(self, word: str) -> bool:
        if self.at(word):
            self.take()
            return True
        return False

    def expect(self, word: str, where: str) -> None:
        if not self.accept(word):
            raise SqlError(f"Expected {word} {where}, found {self._shown()}.")

    def expect_op(self, op: str, where: str) -> None:
        if not self.at_op(op):
            raise SqlError(f"Expected '{op}' {where}, found {self._shown()}.")
        self.take()

    def _shown(self) -> str:
        return "the end of the query" if self.tok.kind == "end" else repr(self.tok.text[:40])

    def count(self) -> None:
        self.terms += 1
        if self.terms > MAX_TERMS:
            raise SqlError(f"The query is too long: at most {MAX_TERMS} items, conditions and keys.")

    def name(self, what: str) -> str:
        tok = self.tok
        if tok.kind != "id" or (not tok.quoted and tok.word() in RESERVED):
            raise SqlError(f"Expected {what}, found {self._shown()}.")
        self.take()
        if self.at_op("."):  # table.column: the table is checked by the caller's binding
            self.take()
            column = self.name(what)
            return f"{tok.text}.{column}"
        return tok.text

    # -- statement
    def statement(self) -> Query:
        first = self.tok.word()
        if first in WRITES:
            raise SqlError(
                f"{first} is not allowed: the warehouse answers read-only queries.",
                "Only SELECT runs here; to keep a query, use save_query; to change a dashboard, use its tile tools.",
            )
        if first == "WITH":
            raise SqlError("WITH (common table expressions) is not supported.", HINT)
        if first != "SELECT":
            raise SqlError(f"A query starts with SELECT, not {self._shown()}.")
        self.take()
        distinct = self.accept("DISTINCT")
        items = self.items()
        self.expect("FROM", "after the selected columns")
        if self.at_op("("):
            raise SqlError("Subqueries are not supported: query one table directly.")
        table = self.name("a table name after FROM")
        if self.at("JOIN", "INNER", "LEFT", "RIGHT", "FULL", "CROSS") or self.at_op(","):
            raise SqlError("Joins are not supported: query one table at a time and combine the answers yourself.")
        self.accept_alias_of_table()
        where = self.condition(0) if self.accept("WHERE") else None
        group_by: tuple[str | int, ...] = ()
        if self.accept("GROUP"):
            self.expect("BY", "after GROUP")
            group_by = tuple(self.comma_list(self.group_key))
        if self.at("HAVING"):
            raise SqlError(
                "HAVING is not supported.", "Filter rows with WHERE, or ORDER BY the aggregate and read the top rows."
            )
        order_by: tuple[Order, ...] = ()
        if self.accept("ORDER"):
            self.expect("BY", "after ORDER")
            order_by = tuple(self.comma_list(self.order_item))
        limit, offset = None, 0
        if self.accept("LIMIT"):
            limit = self.whole("LIMIT")
            if self.accept("OFFSET"):
                offset = self.whole("OFFSET")
        if self.at("UNION", "INTERSECT", "EXCEPT"):
            raise SqlError(f"{self.tok.word()} is not supported: run each SELECT on its own.")
        if self.at_op(";"):
            self.take()
        if self.tok.kind != "end":
            word = self.tok.word()
            if word in WRITES or word == "SELECT":
                raise SqlError("Only one statement runs at a time, and only a SELECT.")
            raise SqlError(f"Unexpected {self._shown()} at character {self.tok.pos + 1}.")
        return Query(items, table, distinct, where, group_by, order_by, limit, offset)

    def accept_alias_of_table(self) -> None:
        if self.accept("AS") or (self.tok.kind == "id" and not self.tok.quoted and self.tok.word() not in RESERVED):
            self.name("a table alias")

    def comma_list(self, one: Callable[[], T]) -> list[T]:
        out = [one()]
        while self.at_op(","):
            self.take()
            out.append(one())
        return out

    def items(self) -> tuple[Item, ...]:
        if self.at_op("*"):
            self.take()
            return ()
        return tuple(self.comma_list(self.item))

    def item(self) -> Item:
        self.count()
        if self.at_op("*"):
            raise SqlError("'*' cannot be mixed with other columns: select * alone, or name the columns.")
        expr = self.expr()
        alias = None
        if self.accept("AS") or (self.tok.kind == "id" and (self.tok.quoted or self.tok.word() not in RESERVED)):
            alias = self.name("an alias after AS")
        return Item(expr, alias)

    def expr(self) -> Expr:
        tok = self.tok
        if tok.kind == "id" and self.tokens[self.i + 1].text == "(" and not tok.quoted:
            fn = tok.word()
            if fn not in AGGREGATES:
                raise SqlError(
                    f"The function {tok.text}() is not supported.",
                    "Use COUNT, SUM, AVG, MIN or MAX over a column, or select the column itself.",
                )
            self.take()
            self.take()
            if self.at_op("*"):
                if fn != "COUNT":
                    raise SqlError(f"{fn}(*) is not allowed: name a column, e.g. {fn}(amount).")
                self.take()
                self.expect_op(")", "after COUNT(*")
                return Aggregate("COUNT", None)
            distinct = self.accept("DISTINCT")
            if distinct and fn != "COUNT":
                raise SqlError(f"{fn}(DISTINCT ...) is not supported; only COUNT(DISTINCT column) is.")
            if self.tok.kind == "id" and self.tokens[self.i + 1].text == "(":
                raise SqlError("Aggregates take a column, not another function.")
            column = self.name(f"a column inside {fn}()")
            self.expect_op(")", f"to close {fn}(")
            return Aggregate(fn, column, distinct)
        if tok.kind in ("num", "str"):
            raise SqlError("Select columns or aggregates, not literal values.")
        return Column(self.name("a column or an aggregate"))

    def group_key(self) -> str | int:
        self.count()
        if self.tok.kind == "num":
            return self.position("GROUP BY")
        return self.name("a column after GROUP BY")

    def order_item(self) -> Order:
        self.count()
        key: OrderKey = self.position("ORDER BY") if self.tok.kind == "num" else self.expr()
        desc = False
        if self.accept("DESC"):
            desc = True
        else:
            self.accept("ASC")
        return Order(key, desc)

    def position(self, where: str) -> int:
        tok = self.take()
        if not isinstance(tok.value, int) or isinstance(tok.value, bool) or tok.value < 1:
            raise SqlError(f"A position in {where} is a whole number from 1, not {tok.text!r}.")
        return tok.value

    def whole(self, where: str) -> int:
        tok = self.take()
        if tok.kind != "num" or not isinstance(tok.value, int):
            raise SqlError(f"{where} takes a whole number, not {tok.text or 'nothing'!r}.")
        return tok.value

    # -- conditions
    def condition(self, depth: int) -> Condition:
        parts = [self.conjunction(depth)]
        while self.accept("OR"):
            parts.append(self.conjunction(depth))
        return parts[0] if len(parts) == 1 else Logic("OR", tuple(parts))

    def conjunction(self, depth: int) -> Condition:
        parts = [self.negation(depth)]
        while self.accept("AND"):
            parts.append(self.negation(depth))
        return parts[0] if len(parts) == 1 else Logic("AND", tuple(parts))

    def negation(self, depth: int) -> Condition:
        if depth > MAX_DEPTH:
            raise SqlError(f"The condition nests too deep (more than {MAX_DEPTH} levels).")
        if self.accept("NOT"):
            return Logic("NOT", (self.negation(depth + 1),))
        if self.at_op("("):
            self.take()
            if self.at("SELECT"):
                raise SqlError("Subqueries are not supported: run the inner query first and use its values.")
            inner = self.condition(depth + 1)
            self.expect_op(")", "to close '('")
            return inner
        return self.predicate()

    def predicate(self) -> Condition:
        self.count()
        if self.tok.kind in ("num", "str"):
            raise SqlError("Put the column first in a condition, e.g. WHERE amount > 100.")
        column = self.name("a column in the condition")
        if self.accept("IS"):
            return IsNull(column, self.expect_null())
        negated = self.accept("NOT")
        if self.accept("IN"):
            self.expect_op("(", "after IN")
            if self.at("SELECT"):
                raise SqlError("Subqueries are not supported: list the values, e.g. IN ('EMEA', 'APAC').")
            values = [self.literal()]
            while self.at_op(","):
                self.take()
                self.count()
                values.append(self.literal())
            self.expect_op(")", "to close IN (")
            return InList(column, tuple(values), negated)
        if self.accept("BETWEEN"):
            low = self.literal()
            self.expect("AND", "between the bounds of BETWEEN")
            return Between(column, low, self.literal(), negated)
        if self.accept("LIKE"):
            tok = self.take()
            if tok.kind != "str":
                raise SqlError("LIKE takes a quoted pattern, e.g. LIKE '%@gmail.com'.")
            return Like(column, str(tok.value), negated)
        if negated:
            raise SqlError(f"Expected IN, BETWEEN or LIKE after NOT, found {self._shown()}.")
        tok = self.take()
        if tok.kind != "op" or tok.text not in COMPARE_OPS:
            raise SqlError(
                f"Expected a comparison after {column}, found {tok.text[:40] or 'the end of the query'!r}.",
                "Compare a column with a value: = != < <= > >=, IN (...), BETWEEN ... AND ..., LIKE, IS NULL.",
            )
        if self.at("NULL"):
            raise SqlError(f"{column} {tok.text} NULL is never true.", "Write IS NULL or IS NOT NULL.")
        return Compare(column, tok.text, self.literal())

    def expect_null(self) -> bool:
        negated = self.accept("NOT")
        self.expect("NULL", "after IS")
        return negated

    def literal(self) -> Value:
        tok = self.take()
        if tok.kind == "op" and tok.text == "-" and self.tok.kind == "num":
            number = self.take().value
            assert isinstance(number, int | float)
            return -number
        if tok.kind in ("num", "str"):
            return tok.value
        if tok.word() in ("TRUE", "FALSE"):
            return tok.word() == "TRUE"
        if tok.word() == "NULL":
            raise SqlError("NULL is not a value to compare with.", "Write column IS NULL or IS NOT NULL.")
        if tok.kind == "id":
            raise SqlError(
                f"Expected a value, found {tok.text[:40]!r}.",
                "Quote text in single quotes ('EMEA'); comparing two columns is not supported.",
            )
        raise SqlError(f"Expected a value, found {tok.text[:40] or 'the end of the query'!r}.")


def parse(sql: str) -> Query:
    """The query ``sql`` says, or a :class:`SqlError` naming what is wrong."""
    if not sql.strip():
        raise SqlError("The query is empty.")
    return _Parser(sql).statement()
