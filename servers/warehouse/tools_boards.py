"""Tools of the warehouse service: dashboards and their tiles, and exports of a saved query's result to someone."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from coworkenv.servers.kit import PageSize, PageToken, ServiceError, ToolContext, Where, tool
from coworkenv.servers.warehouse.models import (
    Dashboard,
    DashboardDetail,
    DashboardPage,
    Email,
    Export,
    ExportPage,
    Removed,
    Tile,
    Visualization,
)
from coworkenv.servers.warehouse.query import Column, Item, render
from coworkenv.servers.warehouse.tools import QUERY_TOOLS, QueryId, execute, me, prepare

DashboardId = Annotated[str, Field(description="The dashboard's id. Example: 'dash_sales'")]
TileId = Annotated[str, Field(description="The tile's id. Example: 'tile_1001'")]
Position = Annotated[int, Field(ge=1, le=1_000, description="Its place on the dashboard, 1 first. Example: 3")]
_FIND_DASHBOARD = "Use list_dashboards to find its id."
_FIND_TILE = "Use get_dashboard to see its tiles and their ids."


def _tile(ctx: ToolContext, tile_id: str) -> dict[str, Any]:
    return ctx.fetch("tiles", tile_id, "tile", _FIND_TILE)


@tool(read_only=True)
def list_dashboards(
    ctx: ToolContext,
    query: Annotated[str | None, Field(description="Text in a name or description. Example: 'sales'")] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> DashboardPage:
    """List dashboards by name."""
    where = Where().text(["name", "description"], query)
    rows, total, nxt = ctx.paginate("dashboards", where.sql, where.params, "name, id", page_size, page_token)
    return DashboardPage(items=[Dashboard.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def get_dashboard(ctx: ToolContext, dashboard_id: DashboardId) -> DashboardDetail:
    """Read a dashboard with its tiles in order: each tile's title, query and visualization."""
    row = ctx.fetch("dashboards", dashboard_id, "dashboard", _FIND_DASHBOARD)
    tiles = ctx.table("tiles").select("dashboard_id = ?", [dashboard_id], order_by="position, id")
    return DashboardDetail.model_validate({**row, "tiles": tiles})


@tool()
def add_tile(
    ctx: ToolContext,
    dashboard_id: DashboardId,
    title: Annotated[str, Field(min_length=1, max_length=200, description="Example: 'Daily revenue, EMEA'")],
    sql: Annotated[
        str | None,
        Field(
            min_length=1,
            max_length=5_000,
            description="The tile's query, one SELECT; or give query_id instead. "
            "Example: 'SELECT day, SUM(amount) FROM orders GROUP BY day'",
        ),
    ] = None,
    query_id: Annotated[
        str | None, Field(description="A saved query to show instead of sql. Example: 'sq_1001'")
    ] = None,
    visualization: Annotated[
        Visualization, Field(description="number, table, line, bar or pie. Example: 'line'")
    ] = "table",
    position: Annotated[int | None, Field(ge=1, le=1_000, description="Its place; omit to add it last.")] = None,
) -> Tile:
    """Add a tile to a dashboard: a query (give sql, or the id of a saved query) shown as a number, table, line,
    bar or pie chart. The query is checked and kept in canonical form."""
    ctx.fetch("dashboards", dashboard_id, "dashboard", _FIND_DASHBOARD)
    if (sql is None) == (query_id is None):
        raise ServiceError("Give the tile's query as sql or as query_id (one of them).")
    if query_id is not None:
        sql = ctx.fetch("saved_queries", query_id, "saved query", "Use list_saved_queries to find its id.")["sql"]
    assert sql is not None
    query, _ = prepare(ctx, sql)
    tiles = ctx.table("tiles").select("dashboard_id = ?", [dashboard_id])
    now = ctx.now_iso()
    row = ctx.table("tiles").insert(
        {
            "id": ctx.new_id("tiles"),
            "dashboard_id": dashboard_id,
            "title": title,
            "sql": render(query),
            "query_id": query_id,
            "visualization": visualization,
            "position": position or max((int(t["position"]) for t in tiles), default=0) + 1,
            "created_at": now,
            "updated_at": now,
        }
    )
    return Tile.model_validate(row)


@tool(idempotent=True)
def update_tile(
    ctx: ToolContext,
    tile_id: TileId,
    title: Annotated[str | None, Field(min_length=1, max_length=200, description="A new title")] = None,
    sql: Annotated[str | None, Field(min_length=1, max_length=5_000, description="A new query (a SELECT)")] = None,
    visualization: Annotated[Visualization | None, Field(description="number, table, line, bar or pie")] = None,
    position: Annotated[int | None, Field(ge=1, le=1_000, description="A new place on the dashboard")] = None,
) -> Tile:
    """Change a tile's title, query, visualization or place (what is left out stays)."""
    row = _tile(ctx, tile_id)
    changes: dict[str, Any] = {"title": title, "visualization": visualization, "position": position}
    if sql is not None:
        changes["sql"] = render(prepare(ctx, sql)[0])
    changes = {k: v for k, v in changes.items() if v is not None and v != row.get(k)}
    if not changes:
        return Tile.model_validate(row)
    return Tile.model_validate(ctx.table("tiles").update(tile_id, {**changes, "updated_at": ctx.now_iso()}))


@tool(destructive=True)
def remove_tile(ctx: ToolContext, tile_id: TileId) -> Removed:
    """Remove a tile from its dashboard, for everyone who uses the dashboard. Cannot be undone."""
    _tile(ctx, tile_id)
    ctx.table("tiles").delete(tile_id)
    return Removed(id=tile_id)


@tool(destructive=True)
def export_query_result(
    ctx: ToolContext,
    query_id: QueryId,
    to: Annotated[
        Email, Field(description="Who receives the result as a CSV file. Example: 'lena.ortiz@brightwave.io'")
    ],
    note: Annotated[str, Field(max_length=2_000, description="A message sent with the file.")] = "",
) -> Export:
    """Run a saved query and send its whole result as a CSV file to an email address. The data leaves the
    warehouse: check who may see it (columns holding personal data are flagged by describe_table)."""
    saved = ctx.fetch("saved_queries", query_id, "saved query", "Use list_saved_queries to find its id.")
    query, table = prepare(ctx, saved["sql"])
    names, rows = execute(ctx, query, table)
    personal = {c["name"] for c in table["columns"] if c.get("personal")}
    items = query.items or tuple(Item(Column(str(c["name"]))) for c in table["columns"])
    sent = [n for n, i in zip(names, items, strict=True) if isinstance(i.expr, Column) and i.expr.name in personal]
    row = ctx.table("exports").insert(
        {
            "id": ctx.new_id("exports"),
            "query_id": query_id,
            "sql": render(query),
            "to": to,
            "columns": names,
            "personal_columns": sent,
            "row_count": len(rows),
            "note": note,
            "exported_by": me(ctx)["email"],
            "created_at": ctx.now_iso(),
        }
    )
    return Export.model_validate(row)


@tool(read_only=True)
def list_exports(ctx: ToolContext, page_size: PageSize = 20, page_token: PageToken = None) -> ExportPage:
    """List the exports sent so far, newest first: which query, to whom, how many rows."""
    rows, total, nxt = ctx.paginate("exports", "", [], "created_at DESC, id DESC", page_size, page_token)
    return ExportPage(items=[Export.model_validate(r) for r in rows], total=total, next_page_token=nxt)


TOOLS = (
    *QUERY_TOOLS,
    list_dashboards,
    get_dashboard,
    add_tile,
    update_tile,
    remove_tile,
    export_query_result,
    list_exports,
)
