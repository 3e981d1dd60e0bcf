"""Diagnostics: what validation found wrong with a task, where (a JSON path into the task), and how to fix it.

They are structured so that a generator can be given them back to repair the task.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

Severity = Literal["error", "warning"]


class Diagnostic(BaseModel):
    code: str = Field(description="A stable, machine-readable code. Example: 'WEIGHTS_SUM'")
    path: str = Field(description="Where in the task, as a JSON path. Example: '$.completion_checks[2].weight'")
    message: str = Field(description="What is wrong, with what was expected and what was found.")
    fix: str = Field(description="How to fix it.")
    severity: Severity = "error"
    check: str | None = Field(default=None, description="The id of the check or forbidden action concerned.")

    def line(self) -> str:
        about = f" [{self.check}]" if self.check else ""
        return f"{self.severity.upper()} {self.code} at {self.path}{about}: {self.message} Fix: {self.fix}"


def errors(diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
    return [d for d in diagnostics if d.severity == "error"]


def is_valid(diagnostics: Sequence[Diagnostic]) -> bool:
    return not errors(diagnostics)


def json_path(*parts: str | int) -> str:
    """``json_path("completion_checks", 2, "check", "where", "status")`` → ``$.completion_checks[2]...``."""
    out = "$"
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.replace("_", "").isalnum():
            out += f".{part}"
        else:
            out += f"[{part!r}]"
    return out
