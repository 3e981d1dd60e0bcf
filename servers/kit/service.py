"""A service: its tables and its tools. Every service package exports one ``SERVICE``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from coworkenv.servers.kit.records import Table
from coworkenv.servers.kit.seed import Seed
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
        object.__setattr__(self, "tools_by_name", by_tool)
        object.__setattr__(self, "tables_by_name", by_table)
