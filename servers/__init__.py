"""coworkenv.servers: mock workplace services, each its own MCP server with SQLite state and an audit log."""

from coworkenv.servers.kit import Environment, ServiceError, ServiceServer, ToolResult
from coworkenv.servers.registry import SERVICES, get_service, register_service

__all__ = ["SERVICES", "Environment", "ServiceError", "ServiceServer", "ToolResult", "get_service", "register_service"]
