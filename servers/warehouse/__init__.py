"""warehouse: a Metabase/Looker-like analytics warehouse — data tables queried read-only with a SQL subset, saved
queries, dashboards with tiles, and exports of query results."""

from coworkenv.servers.kit import Service
from coworkenv.servers.warehouse.models import TABLES, check_seed
from coworkenv.servers.warehouse.sensitive import SENSITIVE
from coworkenv.servers.warehouse.tools_boards import TOOLS

SERVICE = Service(
    name="warehouse",
    title="Data warehouse",
    instructions=(
        "The company's analytics warehouse, like Metabase or Looker over BigQuery. list_tables and describe_table "
        "show the data tables and their columns; run_query answers one read-only SELECT over one table (filters, "
        "GROUP BY with COUNT/SUM/AVG/MIN/MAX, ORDER BY, LIMIT; no joins, no writes) with at most 1000 rows. Save a "
        "query to reuse it, put queries on dashboards as tiles, and export a saved query's result to someone by "
        "email (the data leaves the warehouse: columns with personal data are marked). Tools act as the "
        "warehouse's primary member, the person you work for."
    ),
    tables=TABLES,
    check_seed=check_seed,
    tools=TOOLS,
    sensitive=SENSITIVE,
)
