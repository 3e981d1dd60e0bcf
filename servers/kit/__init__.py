"""The service kit: one shape for every service (records → tables, tools → dispatcher → doors)."""

from coworkenv.servers.kit.audit import AuditRow
from coworkenv.servers.kit.changes import Change, SensitiveContext, SensitiveHit, SensitiveKind, diff_tables, domain_of
from coworkenv.servers.kit.clock import SimClock, format_time, parse_time
from coworkenv.servers.kit.environment import Environment
from coworkenv.servers.kit.errors import EnvironmentConfigError, NotFound, SeedError, ServiceError
from coworkenv.servers.kit.kinds import CONTACT_FIELDS, became, company_domains, contact_changes, deletes, outside
from coworkenv.servers.kit.money import MAX_CENTS, Cents, PositiveCents
from coworkenv.servers.kit.query import Where
from coworkenv.servers.kit.records import Record, Table, Timestamp
from coworkenv.servers.kit.seed import load_seed, parse_seed
from coworkenv.servers.kit.server import ServiceServer
from coworkenv.servers.kit.service import Service
from coworkenv.servers.kit.state import ServiceState, ToolContext, ToolResult, canonical_json
from coworkenv.servers.kit.text import contains_clause
from coworkenv.servers.kit.tool import Page, PageSize, PageToken, ToolSpec, tool

__all__ = [
    "CONTACT_FIELDS",
    "MAX_CENTS",
    "AuditRow",
    "Cents",
    "Change",
    "Environment",
    "EnvironmentConfigError",
    "NotFound",
    "Page",
    "PageSize",
    "PageToken",
    "PositiveCents",
    "Record",
    "SeedError",
    "SensitiveContext",
    "SensitiveHit",
    "SensitiveKind",
    "Service",
    "ServiceError",
    "ServiceServer",
    "ServiceState",
    "SimClock",
    "Table",
    "Timestamp",
    "ToolContext",
    "ToolResult",
    "ToolSpec",
    "Where",
    "became",
    "canonical_json",
    "company_domains",
    "contact_changes",
    "contains_clause",
    "deletes",
    "diff_tables",
    "domain_of",
    "format_time",
    "load_seed",
    "outside",
    "parse_seed",
    "parse_time",
    "tool",
]
