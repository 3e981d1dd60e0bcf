"""Errors of the service kit.

A :class:`ServiceError` is a business error: the tool call was well formed but the request cannot be
honoured (unknown id, wrong status transition, amount too large). It becomes a tool result flagged as
an error, with a message that tells the agent what it can do instead. The server keeps serving.
"""

from __future__ import annotations


class ServiceError(Exception):
    """A business error returned to the agent as an error result, never a crash."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} {self.hint}" if self.hint else self.message


class NotFound(ServiceError):
    """A record named by id does not exist."""

    def __init__(self, kind: str, record_id: str, hint: str | None = None) -> None:
        plural = kind[:-1] + "ies" if kind.endswith("y") else kind + "s"
        super().__init__(f"No {kind} with id {record_id!r}.", hint or f"Search or list {plural} to find a valid id.")


class SeedError(ValueError):
    """Seed data that cannot be loaded; names the table, record index and field. Nothing was loaded."""


class EnvironmentConfigError(ValueError):
    """A misuse of the Python API (unknown service, database of another service, bad clock)."""
