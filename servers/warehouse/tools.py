"""Tools of the warehouse service: its tables, read-only queries, and saved queries. Names follow the analytics
tools people know (Metabase questions, Looker looks, BigQuery's tables and jobs); dashboards, tiles and exports are
in :mod:`.tools_boards`."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from coworkenv.servers.kit import PageSize, PageToken, ServiceError, ToolContext, Where, tool
from coworkenv.servers.warehouse.engine import bind, evaluate
from coworkenv.servers.warehouse.models import (
    QueryResult,
    Removed,
    SavedQuery,
    SavedQueryPage,
    TableDetail,
    TablePage,
    TableSummary,
)
from coworkenv.servers.warehouse.query import Query, render
from coworkenv.servers.warehouse.sql import parse

MAX_ROWS = 1_000
"""The most rows one query answers with; what is left over is reported as truncated."""
SAMPLE_ROWS = 5
Sql = Annotated[
    str,
    Field(
        min_length=1,
        max_length=5_000,
        description="One read-only SELECT over one table. Example: "
        "'SELECT region, SUM(amount) AS revenue FROM orders WHERE day >= '2026-03-01' GROUP BY region'",
    ),
]
TableName = Annotated[str, Field(max_length=64, description="The table's name, as queries name it. Example: 'orders'")]
QueryId = Annotated[str, Field(description="The saved query's id. Example: 'sq_1001'")]
_FIND_TABLE = "Use list_tables to see the warehouse's tables."
_FIND_QUERY = "Use list_saved_queries to find its id."


def me(ctx: ToolContext) -> dict[str, Any]:
    """The member a call acts as: the primary member (the person the agent works for), or the member the Python
    API names."""
    members = ctx.table("members")
    if ctx.member is not None:
        key = ctx.member.strip()
        row = members.get(key) or next(iter(members.select("email = ?", [key.lower()], limit=1)), None)
        if row is None:
            raise ServiceError(f"{ctx.member[:200]!r} is not a member of this warehouse.")
        return row
    rows = members.select("is_primary = 1", limit=1)
    if not rows:
        raise ServiceError("This warehouse has no primary member, so no one to act as.")
    return rows[0]


def data_table(ctx: ToolContext, name: str) -> dict[str, Any]:
    row = ctx.table("tables").get(name.strip().lower())
    if row is None:
        names = ", ".join(r["id"] for r in ctx.table("tables").select(limit=50)) or "(none)"
        raise ServiceError(f"The warehouse has no table {name[:64]!r}.", f"Its tables: {names}. {_FIND_TABLE}")
    return row


def prepare(ctx: ToolContext, sql: str) -> tuple[Query, dict[str, Any]]:
    """The query ``sql`` says, checked against its table (names as the table spells them), and the table."""
    parsed = parse(sql)
    table = data_table(ctx, parsed.table.split(".")[-1])
    return bind(parsed, table["id"], table["columns"]), table


def execute(ctx: ToolContext, query: Query, table: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]]]:
    """All the rows a bound query answers (LIMIT and OFFSET applied), in order."""
    rows = [r["values"] for r in ctx.table("rows").select("table_id = ?", [table["id"]], order_by="id")]
    names, found = evaluate(query, table["columns"], rows)
    end = None if query.limit is None else query.offset + query.limit
    return names, found[query.offset : end]


@tool(read_only=True)
def list_tables(
    ctx: ToolContext,
    query: Annotated[str | None, Field(description="Text in a table's name or description. Example: 'order'")] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> TablePage:
    """List the warehouse's data tables by name, each with its columns and number of rows. Use describe_table for
    the columns' types and a few sample rows."""
    where = Where().text(["id", "description"], query)
    rows, total, nxt = ctx.paginate("tables", where.sql, where.params, "id", page_size, page_token)
    counts = ctx.table("rows")
    items = [
        TableSummary(
            name=r["id"],
            description=r["description"],
            columns=[c["name"] for c in r["columns"]],
            row_count=counts.count("table_id = ?", [r["id"]]),
        )
        for r in rows
    ]
    return TablePage(items=items, total=total, next_page_token=nxt)


@tool(read_only=True)
def describe_table(ctx: ToolContext, table: TableName) -> TableDetail:
    """Describe one table: its columns with their types (text, integer, number, date, timestamp, boolean), which
    hold personal data, how many rows it has, and its first few rows."""
    row = data_table(ctx, table)
    rows = ctx.table("rows")
    sample = [r["values"] for r in rows.select("table_id = ?", [row["id"]], order_by="id", limit=SAMPLE_ROWS)]
    return TableDetail(
        name=row["id"],
        description=row["description"],
        owner=row["owner"],
        columns=row["columns"],
        row_count=rows.count("table_id = ?", [row["id"]]),
        sample_rows=sample,
    )


@tool(read_only=True)
def run_query(
    ctx: ToolContext,
    sql: Sql,
    limit: Annotated[
        int, Field(ge=1, le=MAX_ROWS, description="The most rows to return (1 to 1000). Example: 100")
    ] = 100,
) -> QueryResult:
    """Run a read-only query over one warehouse table and return its rows. The warehouse reads a subset of SQL:
    SELECT [DISTINCT] columns or aggregates (COUNT(*), COUNT([DISTINCT] col), SUM, AVG, MIN, MAX, each with AS
    alias) FROM one table [WHERE conditions with = != < <= > >= IN BETWEEN LIKE IS NULL, AND, OR, NOT]
    [GROUP BY columns] [ORDER BY column, alias, aggregate or position, ASC or DESC] [LIMIT n [OFFSET m]].
    Example: SELECT day, SUM(amount) AS revenue FROM orders WHERE region = 'EMEA' GROUP BY day ORDER BY day.
    No joins, subqueries or writes; dates are text like '2026-03-01' and compare as such."""
    query, table = prepare(ctx, sql)
    names, rows = execute(ctx, query, table)
    return QueryResult(
        sql=render(query),
        columns=names,
        rows=rows[:limit],
        row_count=min(len(rows), limit),
        truncated=len(rows) > limit,
    )


@tool(read_only=True)
def list_saved_queries(
    ctx: ToolContext,
    query: Annotated[str | None, Field(description="Text in a name or description. Example: 'revenue'")] = None,
    member: Annotated[
        str | None, Field(description="Only those this member saved. Example: 'lena.ortiz@brightwave.io'")
    ] = None,
    table: Annotated[
        str | None, Field(max_length=64, description="Only queries of this table. Example: 'orders'")
    ] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> SavedQueryPage:
    """List saved queries by name, with their SQL."""
    where = Where().text(["name", "description"], query).eq_folded("owner", member).eq_folded('"table"', table)
    rows, total, nxt = ctx.paginate("saved_queries", where.sql, where.params, "name, id", page_size, page_token)
    return SavedQueryPage(items=[SavedQuery.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def get_saved_query(ctx: ToolContext, query_id: QueryId) -> SavedQuery:
    """Read one saved query (run its sql with run_query to see its result)."""
    return SavedQuery.model_validate(ctx.fetch("saved_queries", query_id, "saved query", _FIND_QUERY))


@tool()
def save_query(
    ctx: ToolContext,
    name: Annotated[str, Field(min_length=1, max_length=200, description="Example: 'Daily revenue, EMEA'")],
    sql: Sql,
    description: Annotated[str, Field(max_length=2_000, description="What it answers, for colleagues.")] = "",
) -> SavedQuery:
    """Save a query under a name so that you and colleagues can run it again, add it to a dashboard or export its
    result. The query is checked and kept in canonical form; you are its owner."""
    query, _ = prepare(ctx, sql)
    owner = me(ctx)["email"]
    taken = ctx.table("saved_queries").select("casefold(name) = ? AND owner = ?", [name.casefold(), owner], limit=1)
    if taken:
        raise ServiceError(
            f"You already have a saved query named {name!r} ({taken[0]['id']}).",
            "Use update_saved_query to change it, or pick another name.",
        )
    now = ctx.now_iso()
    row = ctx.table("saved_queries").insert(
        {
            "id": ctx.new_id("saved_queries"),
            "name": name,
            "description": description,
            "sql": render(query),
            "owner": owner,
            "created_at": now,
            "updated_at": now,
        }
    )
    return SavedQuery.model_validate(row)


@tool(idempotent=True)
def update_saved_query(
    ctx: ToolContext,
    query_id: QueryId,
    name: Annotated[str | None, Field(min_length=1, max_length=200, description="A new name")] = None,
    sql: Annotated[str | None, Field(min_length=1, max_length=5_000, description="The new query (a SELECT)")] = None,
    description: Annotated[str | None, Field(max_length=2_000, description="A new description")] = None,
) -> SavedQuery:
    """Change a saved query's name, SQL or description (what is left out stays). Tiles made from it keep the SQL
    they were made with."""
    row = ctx.fetch("saved_queries", query_id, "saved query", _FIND_QUERY)
    changes: dict[str, Any] = {"name": name, "description": description}
    if sql is not None:
        changes["sql"] = render(prepare(ctx, sql)[0])
    changes = {k: v for k, v in changes.items() if v is not None and v != row.get(k)}
    if not changes:
        return SavedQuery.model_validate(row)
    return SavedQuery.model_validate(
        ctx.table("saved_queries").update(query_id, {**changes, "updated_at": ctx.now_iso()})
    )


@tool(destructive=True)
def delete_saved_query(ctx: ToolContext, query_id: QueryId) -> Removed:
    """Delete a saved query for everyone. Tiles made from it keep their own copy of the SQL. Cannot be undone."""
    ctx.fetch("saved_queries", query_id, "saved query", _FIND_QUERY)
    ctx.table("saved_queries").delete(query_id)
    return Removed(id=query_id)


QUERY_TOOLS = (
    list_tables,
    describe_table,
    run_query,
    list_saved_queries,
    get_saved_query,
    save_query,
    update_saved_query,
    delete_saved_query,
)
