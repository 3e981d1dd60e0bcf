"""coworkenv.servers: mock workplace services, each its own MCP server with SQLite state and an audit log.

The names below are imported when first read, so a module of this package that needs none of them (the quick
stdio start-up, :mod:`coworkenv.servers.quick`) starts without importing the MCP SDK.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coworkenv.servers.kit import Environment, ServiceError, ServiceServer, ToolResult
    from coworkenv.servers.registry import SERVICES, get_service, register_service

_LAZY = {
    "Environment": "coworkenv.servers.kit",
    "ServiceError": "coworkenv.servers.kit",
    "ServiceServer": "coworkenv.servers.kit",
    "ToolResult": "coworkenv.servers.kit",
    "SERVICES": "coworkenv.servers.registry",  # every service, imported when first read (get_service: one alone)
    "get_service": "coworkenv.servers.registry",
    "register_service": "coworkenv.servers.registry",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(module), name)


__all__ = ["SERVICES", "Environment", "ServiceError", "ServiceServer", "ToolResult", "get_service", "register_service"]
