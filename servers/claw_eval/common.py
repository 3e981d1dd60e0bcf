"""What every Claw-Eval profile module shares: a free-form JSON result and HTTP-shaped errors.

Claw-Eval's mock services answer with plain JSON objects; a lookup that finds nothing usually answers 200 with
``{"error": ...}`` (return :class:`ClawJson` then), and some routes raise an HTTP error (raise
:class:`ClawHTTPError`). An error's text starts ``HTTP <status>:`` so the status survives in our audit log and tool
results (:func:`http_status` reads it back for the graders' dispatch records).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict

from coworkenv.servers.kit import ServiceError


class ClawJson(BaseModel):
    """A Claw-Eval route's JSON answer, as it gives it (any keys)."""

    model_config = ConfigDict(extra="allow")

    @classmethod
    def of(cls, data: dict[str, Any]) -> ClawJson:
        return cls.model_validate(data)


class ClawHTTPError(ServiceError):
    """A Claw-Eval route's HTTP error (``HTTPException(status, detail)``)."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f"HTTP {status}: {detail}")
        self.status = status
        self.detail = detail


_STATUS = re.compile(r"^HTTP (\d{3}):")


def http_status(outcome: str, text: str) -> int:
    """The HTTP status a Claw-Eval mock would have answered a call with: from our outcome and result text."""
    found = _STATUS.match(text or "")
    if found:
        return int(found.group(1))
    return {"ok": 200, "invalid_arguments": 422, "unknown_tool": 404, "error": 400}.get(outcome, 500)
