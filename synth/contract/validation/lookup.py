"""The services validation's adversaries and mutations look tools and tables up in: those of the task's own
baseline for the length of one validation (:func:`validating_with`, which ``validate_exec`` enters), so a service
only the caller holds (``validate_task(registry=...)``) is validated like a shipped one; else every known service."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

from coworkenv.servers.kit import Service
from coworkenv.servers.registry import SERVICES

_CURRENT: ContextVar[Mapping[str, Service] | None] = ContextVar("coworkenv_validation_services", default=None)


def services() -> Mapping[str, Service]:
    """The services of the validation under way, else every known service."""
    found = _CURRENT.get()
    return found if found is not None else SERVICES


@contextmanager
def validating_with(found: Mapping[str, Service]) -> Iterator[None]:
    """Look services up in ``found`` until the block ends (in this task and the tasks it starts)."""
    token = _CURRENT.set(found)
    try:
        yield
    finally:
        _CURRENT.reset(token)


__all__ = ["services", "validating_with"]
