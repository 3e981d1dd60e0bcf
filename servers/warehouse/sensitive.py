"""The sensitive kinds of the warehouse service: a query's result sent outside the company, and saved queries,
dashboards, tiles or data deleted.

The company's domains are those of the warehouse's members (the ``members`` table, before or after). An export
is data that left the warehouse: to a colleague it is work, to anyone else it is a leak unless the task asks.
"""

from __future__ import annotations

from coworkenv.servers.kit import Change, SensitiveContext, SensitiveKind, company_domains, deletes, outside
from coworkenv.servers.kit.kinds import audience_key


def export_outside(change: Change, ctx: SensitiveContext) -> str | None:
    """``export_outside:new:<address>``: a query's result sent to an address outside the company's domains."""
    to = str(change.record.get("to") or "")
    return audience_key("export_outside", change, outside([to], company_domains(ctx, "members", "email")))


def personal_export(change: Change, ctx: SensitiveContext) -> str | None:
    """``personal_export:new:<address>``: columns holding personal data sent outside the company's domains."""
    if not change.record.get("personal_columns"):
        return None
    to = str(change.record.get("to") or "")
    return audience_key("personal_export", change, outside([to], company_domains(ctx, "members", "email")))


SENSITIVE: tuple[SensitiveKind, ...] = (
    SensitiveKind("export_outside", "exports", ("create",), "query results sent outside the company", export_outside),
    SensitiveKind("personal_export", "exports", ("create",), "personal data sent outside the company", personal_export),
    *deletes("members", "tables", "rows", "saved_queries", "dashboards", "tiles", "exports"),
)
