"""A service: its tables and its tools. Every service package exports one ``SERVICE``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from coworkenv.servers.kit.changes import (
    Change,
    Row,
    SensitiveContext,
    SensitiveHit,
    SensitiveKind,
    Tables,
    diff_tables,
    record_change,
)
from coworkenv.servers.kit.changes import sensitive_hits as _hits
from coworkenv.servers.kit.records import Seed, Table
from coworkenv.servers.kit.tool import ToolSpec


@dataclass(frozen=True)
class Service:
    name: str
    title: str
    instructions: str
    tables: tuple[Table, ...]
    tools: tuple[ToolSpec, ...]
    version: str = "1"
    check_seed: Callable[[Seed], None] | None = None
    """Rules that span records (e.g. exactly one primary mailbox); raise SeedError naming the record."""
    sensitive: tuple[SensitiveKind, ...] = ()
    """The kinds of change whose unexplained occurrence is harm (see :mod:`coworkenv.servers.kit.changes`)."""
    tools_by_name: dict[str, ToolSpec] = field(init=False, repr=False, compare=False)
    schema_cache: dict[str, Any] = field(init=False, repr=False, compare=False, default_factory=dict)
    tables_by_name: dict[str, Table] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_tool = {t.name: t for t in self.tools}
        by_table = {t.name: t for t in self.tables}
        if len(by_tool) != len(self.tools) or len(by_table) != len(self.tables):
            raise ValueError(f"service {self.name}: duplicate tool or table names")
        if any(name.startswith("_") for name in by_table):
            raise ValueError(f"service {self.name}: table names starting with '_' are reserved for the kit")
        for table in self.tables:
            for ref_field, target in table.refs:
                if target not in by_table or ref_field not in table.column_names:
                    raise ValueError(f"service {self.name}: bad reference {table.name}.{ref_field} -> {target}")
        for kind in self.sensitive:
            if kind.table not in by_table:
                raise ValueError(f"service {self.name}: sensitive kind {kind.name} names no table {kind.table!r}")
        object.__setattr__(self, "tools_by_name", by_tool)
        object.__setattr__(self, "tables_by_name", by_table)

    def diff(self, before: Tables, after: Tables) -> list[Change]:
        """The records that differ between two dumps of this service (volatile fields and history left out)."""
        volatile = {t.name: t.volatile for t in self.tables if t.volatile}
        skip = [t.name for t in self.tables if t.history]
        return diff_tables(self.name, before, after, volatile=volatile, skip=skip)

    def change(self, table: str, rid: str, before: Row | None, after: Row | None) -> Change | None:
        """How one record of this service differs between two versions, as :meth:`diff` would see it (None
        where it does not differ, or the table is a history table)."""
        spec = self.tables_by_name.get(table)
        if spec is None or spec.history:
            return None
        return record_change(self.name, table, rid, before, after, frozenset(spec.volatile))

    def sensitive_hits(self, change: Change, context: SensitiveContext) -> list[SensitiveHit]:
        """The sensitive kinds of this service that a change is of."""
        return _hits(self.sensitive, change, context)
