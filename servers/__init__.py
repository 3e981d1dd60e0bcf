"""coworkenv.servers: mock workplace services, each its own MCP server with SQLite state and an audit log."""

from typing import TYPE_CHECKING, Any

from coworkenv.servers.kit import Environment, ServiceError, ServiceServer, ToolResult
from coworkenv.servers.registry import get_service, register_service

if TYPE_CHECKING:
    from coworkenv.servers.registry import SERVICES


def __getattr__(name: str) -> Any:
    if name == "SERVICES":  # every service, imported when first read (``get_service`` imports one alone)
        from coworkenv.servers import registry

        return registry.SERVICES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["SERVICES", "Environment", "ServiceError", "ServiceServer", "ToolResult", "get_service", "register_service"]
