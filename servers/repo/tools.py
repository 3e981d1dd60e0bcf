"""Every tool of the repo service, in the order an agent meets them: the code, pull requests, issues and CI."""

from __future__ import annotations

from coworkenv.servers.kit import ToolSpec
from coworkenv.servers.repo import tools_code, tools_issues, tools_pulls

TOOLS: tuple[ToolSpec, ...] = (*tools_code.TOOLS, *tools_pulls.TOOLS, *tools_issues.TOOLS)
