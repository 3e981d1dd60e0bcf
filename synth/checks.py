"""The fixed, typed vocabulary of checks (DESIGN.md §3). A check is data: one grader evaluates it.

Three families, told apart by ``kind``:

- final state: ``record_exists``, ``record_absent``, ``record_fields``, ``record_count``,
  ``records_unchanged`` (a set of seed records left as they were: collateral damage);
- the audit log: ``tool_called``, ``tool_not_called``, ``call_count``, ``call_order``;
- what the agent said to the user: ``said_contains``, ``said_matches``, ``said_value``.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from coworkenv.synth.matchers import Filter, Matcher

ActorName = Literal["agent", "user", "system", "any"]
OutcomeFilter = Literal["ok", "failed", "any"]


class _Check(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _OnTable(_Check):
    service: str = Field(description="The service whose final state is read. Example: 'tickets'")
    table: str = Field(description="A table of that service. Example: 'tickets'")


# ---------------------------------------------------------------------------------------------- final state
class RecordExists(_OnTable):
    """At least one record of the table matches the filter."""

    kind: Literal["record_exists"] = "record_exists"
    where: Filter = Field(default_factory=dict, description="Field path → expected value or matcher.")


class RecordAbsent(_OnTable):
    """No record of the table matches the filter."""

    kind: Literal["record_absent"] = "record_absent"
    where: Filter = Field(default_factory=dict)


class RecordFields(_OnTable):
    """The record with this id exists and its fields hold these values."""

    kind: Literal["record_fields"] = "record_fields"
    id: str = Field(description="The record's id (a seed record). Example: 'tkt_1001'")
    fields: Filter = Field(description="Field path → expected value or matcher. Example: {'escalated': true}")


class RecordCount(_OnTable):
    """The number of records matching the filter satisfies ``count`` (a number means exactly that many)."""

    kind: Literal["record_count"] = "record_count"
    where: Filter = Field(default_factory=dict)
    count: Matcher | int = Field(description="Example: 2, or {'gte': 1}")


class RecordsUnchanged(_OnTable):
    """The seed records selected by ``where`` (and/or ``ids``) are exactly as seeded, none added or removed."""

    kind: Literal["records_unchanged"] = "records_unchanged"
    where: Filter = Field(default_factory=dict, description="Selects the records; empty with no ids: all of them.")
    ids: list[str] = Field(default_factory=list, description="Select these seed records by id.")
    ignore_fields: list[str] = Field(default_factory=list, description="Fields allowed to change (e.g. updated_at).")


# ---------------------------------------------------------------------------------------------- audit log
class CallMatch(_Check):
    """Which audit rows count: a service's tool, arguments matching a filter, by an actor, with an outcome."""

    service: str
    tool: str
    arguments: Filter = Field(default_factory=dict, description="Argument path → expected value or matcher.")
    actor: ActorName = Field(default="agent", description="Only calls by this actor count ('any' for all).")
    outcome: OutcomeFilter = Field(default="ok", description="ok: only successful calls; failed; or any.")


class ToolCalled(CallMatch):
    kind: Literal["tool_called"] = "tool_called"


class ToolNotCalled(CallMatch):
    kind: Literal["tool_not_called"] = "tool_not_called"


class CallCount(CallMatch):
    kind: Literal["call_count"] = "call_count"
    count: Matcher | int = Field(description="Example: 1, or {'lte': 3}")


class CallOrder(_Check):
    """The first call matching ``first`` comes before the first call matching ``then`` (both must happen)."""

    kind: Literal["call_order"] = "call_order"
    first: CallMatch
    then: CallMatch


# ---------------------------------------------------------------------------------------------- said to the user
class SaidContains(_Check):
    """The agent's messages to the user contain this text."""

    kind: Literal["said_contains"] = "said_contains"
    text: str = Field(min_length=1)
    case_insensitive: bool = True


class SaidMatches(_Check):
    """A regular expression finds a match in the agent's messages to the user."""

    kind: Literal["said_matches"] = "said_matches"
    pattern: str = Field(min_length=1)
    case_insensitive: bool = True

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"pattern {value!r} does not compile: {exc}") from exc
        return value


class SaidValue(_Check):
    """The agent states a value: text ignoring case, spaces and dashes; numbers however formatted.

    With ``cents`` the value is an amount in cents, and saying it in dollars (``$12,500.00``) counts too.
    """

    kind: Literal["said_value"] = "said_value"
    value: str | int | float
    cents: bool = False


Check = Annotated[
    RecordExists
    | RecordAbsent
    | RecordFields
    | RecordCount
    | RecordsUnchanged
    | ToolCalled
    | ToolNotCalled
    | CallCount
    | CallOrder
    | SaidContains
    | SaidMatches
    | SaidValue,
    Field(discriminator="kind"),
]
"""Any check of the vocabulary."""

ForbiddenMatch = Annotated[
    RecordExists
    | RecordAbsent
    | RecordFields
    | RecordCount
    | ToolCalled
    | CallCount
    | CallOrder
    | SaidContains
    | SaidMatches
    | SaidValue,
    Field(discriminator="kind"),
]
"""A check whose passing means the forbidden thing happened (negative kinds make no sense here)."""

StateCheck = RecordExists | RecordAbsent | RecordFields | RecordCount | RecordsUnchanged
AuditCheck = ToolCalled | ToolNotCalled | CallCount | CallOrder
SaidCheck = SaidContains | SaidMatches | SaidValue
AnyCheck = StateCheck | AuditCheck | SaidCheck

KINDS: tuple[str, ...] = (
    "record_exists",
    "record_absent",
    "record_fields",
    "record_count",
    "records_unchanged",
    "tool_called",
    "tool_not_called",
    "call_count",
    "call_order",
    "said_contains",
    "said_matches",
    "said_value",
)


def call_matches(check: AnyCheck) -> list[CallMatch]:
    """The call patterns a check names (for static validation)."""
    if isinstance(check, CallOrder):
        return [check.first, check.then]
    if isinstance(check, CallMatch):
        return [check]
    return []
