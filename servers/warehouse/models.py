"""Records of the warehouse service (a Metabase/Looker-like analytics warehouse: data tables, saved queries,
dashboards with tiles, and exports of query results).

The warehouse's data are records too: ``tables`` holds each data table's definition (its name is its id, its
columns with their types, which of them hold personal data) and ``rows`` each row's values as a JSON object. The
query tool reads them through its own parser and evaluator (:mod:`.engine`), never as SQL against this database.
A saved query, a tile and an export keep their query's canonical text and, beside it, its shape (table,
aggregates, groups, filters: :class:`~coworkenv.servers.warehouse.query.Shape`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field, model_validator

from coworkenv.servers.kit import Page, Record, SeedError, Table, Timestamp
from coworkenv.servers.warehouse.query import shape
from coworkenv.servers.warehouse.sql import parse

ColumnType = Literal["text", "integer", "number", "date", "timestamp", "boolean"]
Visualization = Literal["number", "table", "line", "bar", "pie"]
TABLE_NAME = r"^[a-z][a-z0-9_]{0,62}$"


def _lower(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


Email = Annotated[str, BeforeValidator(_lower), Field(pattern=r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$", max_length=254)]


class Member(Record):
    """Someone of the company with access to the warehouse; ``is_primary`` is the person the agent works for."""

    email: Email
    name: str = Field(min_length=1)
    title: str = ""
    is_primary: bool = Field(default=False, description="The member the tools act as: the person the agent works for")


class ColumnDef(BaseModel):
    name: str = Field(pattern=TABLE_NAME, description="Example: 'amount'")
    type: ColumnType = Field(description="text, integer, number, date ('2026-03-01'), timestamp or boolean")
    description: str = Field(default="", description="Example: 'Order total in US dollars'")
    personal: bool = Field(default=False, description="Holds personal data about people (an email, a phone, a name)")


class DataTable(Record):
    """A data table of the warehouse: its name (the id), what it holds, its columns."""

    id: str = Field(pattern=TABLE_NAME, description="The table's name, as queries name it. Example: 'orders'")
    description: str = Field(default="", description="Example: 'One row per order, since 2025'")
    columns: list[ColumnDef] = Field(min_length=1)
    owner: str = Field(default="", description="The team that keeps it. Example: 'Data Platform'")

    @model_validator(mode="after")
    def _unique(self) -> DataTable:
        names = [c.name for c in self.columns]
        if len(set(names)) != len(names):
            raise ValueError("two columns share a name; give each column one name")
        return self


class DataRow(Record):
    """One row of a data table: its values by column name."""

    table_id: str = Field(description="The table the row belongs to. Example: 'orders'")
    values: dict[str, Any] = Field(description="Example: {'day': '2026-03-01', 'region': 'EMEA', 'amount': 1250.0}")


class Shaped(Record):
    """A record that keeps a query: its canonical text and, derived from it, its shape."""

    sql: str = Field(min_length=1, description="The query, in canonical form. Example: 'SELECT COUNT(*) FROM orders'")
    table: str = Field(default="", description="The table it reads (derived from sql)")
    measures: list[str] = Field(default=[], description="Its aggregates, e.g. ['SUM(amount)'] (derived from sql)")
    group_by: list[str] = Field(default=[], description="Its GROUP BY columns, e.g. ['day'] (derived from sql)")
    filters: list[str] = Field(default=[], description="Its WHERE conditions, one each (derived from sql)")

    @model_validator(mode="after")
    def _shape(self) -> Shaped:
        found = shape(parse(self.sql))
        self.table, self.measures, self.group_by, self.filters = (
            found.table,
            found.measures,
            found.group_by,
            found.filters,
        )
        return self


class SavedQuery(Shaped):
    name: str = Field(min_length=1, description="Example: 'Weekly revenue by region'")
    description: str = ""
    owner: Email
    created_at: Timestamp
    updated_at: Timestamp | None = None


class Dashboard(Record):
    name: str = Field(min_length=1, description="Example: 'Sales overview'")
    description: str = ""
    owner: Email
    created_at: Timestamp


class Tile(Shaped):
    dashboard_id: str
    title: str = Field(min_length=1, description="Example: 'Daily revenue, EMEA'")
    visualization: Visualization = "table"
    query_id: str | None = Field(default=None, description="The saved query the tile was made from, if any")
    position: int = Field(default=1, ge=1, le=1_000, description="Its place on the dashboard, 1 first")
    created_at: Timestamp
    updated_at: Timestamp | None = None


class Export(Shaped):
    """A query's result sent to someone: what was sent, to whom, by whom."""

    query_id: str | None = Field(default=None, description="The saved query exported")
    to: Email = Field(description="Who the result was sent to. Example: 'lena.ortiz@brightwave.io'")
    columns: list[str] = Field(default=[], description="The columns of the result sent")
    personal_columns: list[str] = Field(default=[], description="Those of them that hold personal data")
    row_count: int = Field(default=0, ge=0)
    note: str = ""
    exported_by: Email
    created_at: Timestamp


TABLES = (
    Table("members", Member, "mem_", indexes=(("email",),)),
    Table("tables", DataTable, "tbl_"),
    Table("rows", DataRow, "row_", indexes=(("table_id",),), refs=(("table_id", "tables"),)),
    Table("saved_queries", SavedQuery, "sq_", indexes=(("owner",),), volatile=("updated_at",)),
    Table("dashboards", Dashboard, "dash_"),
    Table(
        "tiles",
        Tile,
        "tile_",
        indexes=(("dashboard_id",),),
        refs=(("dashboard_id", "dashboards"), ("query_id", "saved_queries")),
        volatile=("updated_at",),
    ),
    Table("exports", Export, "exp_", refs=(("query_id", "saved_queries"),)),
)


# ---------------------------------------------------------------------------------------------- seed rules
def value_fits(kind: str, value: Any) -> bool:
    """Whether a row's value is of its column's type (None fits every type)."""
    if value is None:
        return True
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    return isinstance(value, str)


def check_seed(seed: dict[str, list[dict[str, Any]]]) -> None:
    """Rules across records: one primary member at most and unique emails; each row's values are columns of its
    table, each of the column's type."""
    emails: set[str] = set()
    primary = 0
    for index, member in enumerate(seed.get("members", [])):
        if member["email"] in emails:
            raise SeedError(f"warehouse.members[{index}] field 'email': {member['email']!r} is listed twice")
        emails.add(member["email"])
        primary += bool(member["is_primary"])
        if primary > 1:
            raise SeedError(f"warehouse.members[{index}] field 'is_primary': only one member can be the primary one")
    types = {t["id"]: {c["name"]: c["type"] for c in t["columns"]} for t in seed.get("tables", [])}
    for index, row in enumerate(seed.get("rows", [])):
        columns = types.get(row["table_id"], {})
        for key, value in row["values"].items():
            if key not in columns:
                raise SeedError(f"warehouse.rows[{index}] field 'values': {row['table_id']} has no column {key!r}")
            if not value_fits(columns[key], value):
                raise SeedError(
                    f"warehouse.rows[{index}] field 'values': {key}={value!r} is not of type {columns[key]}"
                )


# ---------------------------------------------------------------------------------------------- tool results
class TableSummary(BaseModel):
    name: str = Field(description="The table's name, as queries name it. Example: 'orders'")
    description: str
    columns: list[str] = Field(description="Its column names")
    row_count: int


class TableDetail(BaseModel):
    name: str
    description: str
    owner: str
    columns: list[ColumnDef]
    row_count: int
    sample_rows: list[dict[str, Any]] = Field(description="Its first few rows")


class QueryResult(BaseModel):
    sql: str = Field(description="The query as the warehouse read it (canonical form)")
    columns: list[str]
    rows: list[dict[str, Any]]
    row_count: int = Field(description="Rows returned here")
    truncated: bool = Field(description="True when the query had more rows than the limit let through")


class TablePage(Page[TableSummary]):
    pass


class SavedQueryPage(Page[SavedQuery]):
    pass


class DashboardPage(Page[Dashboard]):
    pass


class ExportPage(Page[Export]):
    pass


class DashboardDetail(Dashboard):
    tiles: list[Tile] = Field(description="Its tiles, by position")


class Removed(BaseModel):
    id: str
    removed: bool = True
