"""The task: what the user asks, the seed records, the checks, the forbidden actions, a reference solution.

A task is data, validated by :class:`Task` (``task_json_schema()`` publishes its JSON Schema). A later
reference step may use an earlier step's result through a typed reference, ``{"$ref": "step_id.path"}``:
it is resolved by looking the path up in that step's result, never by evaluating anything.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from coworkenv.servers.kit import format_time, parse_time
from coworkenv.synth.checks import Check, ForbiddenMatch
from coworkenv.synth.matchers import get_path

TASK_ID = r"^[a-z0-9][a-z0-9._-]*$"
STEP_ID = r"^[A-Za-z_][A-Za-z0-9_-]*$"
Difficulty = Literal["easy", "medium", "hard"]
Records = dict[str, dict[str, list[dict[str, Any]]]]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_serializer(mode="wrap")
    def _drop_unset_optionals(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if v is not None}


class ToolStep(_Model):
    """One tool call. Arguments may hold ``{"$ref": "earlier_step_id.path.to.field"}`` values."""

    id: str | None = Field(default=None, pattern=STEP_ID, description="Name this step to refer to its result.")
    service: str = Field(description="Example: 'tickets'")
    tool: str = Field(description="Example: 'escalate_ticket'")
    arguments: dict[str, Any] = Field(default_factory=dict)


class SayStep(_Model):
    """What the agent tells the user (its final answer); checks on what was said read these."""

    say: str = Field(min_length=1)


Step = ToolStep | SayStep


class CompletionCheck(_Model):
    id: str = Field(pattern=STEP_ID)
    weight: float = Field(gt=0, le=1)
    description: str
    check: Check
    requires: list[str] = Field(
        default_factory=list,
        description="Ids of checks that must pass for this one to count (e.g. 'nothing else changed' only "
        "counts once the work itself is done, so doing nothing scores 0).",
    )


class ForbiddenAction(_Model):
    id: str = Field(pattern=STEP_ID)
    description: str
    match: ForbiddenMatch = Field(description="When this check passes, the forbidden thing happened.")
    example: Step | None = Field(
        default=None,
        description="A concrete call (or message) that commits it; validation runs it after the reference.",
    )


class UserTurn(_Model):
    """A later message from the user, optionally with edits the user makes to the workspace (as actor 'user')."""

    message: str
    when: str | None = Field(default=None, description="When the user says it, in words. Example: 'after a draft'")
    edits: list[ToolStep] = Field(default_factory=list)


class UserSpec(_Model):
    persona: str = ""
    held_back: list[str] = Field(default_factory=list, description="Facts the user gives only when asked.")
    turns: list[UserTurn] = Field(default_factory=list)


class Task(_Model):
    id: str = Field(pattern=TASK_ID, description="Stable id. Example: 'escalate-stale-enterprise-tickets'")
    version: int = Field(default=1, ge=1)
    scenario: str = Field(description="The situation, for people and generators. Example: 'support escalation'")
    capabilities: list[str] = Field(default_factory=list, description="Example: ['search', 'cross-service lookup']")
    difficulty: Difficulty = "medium"
    services: list[str] = Field(min_length=1, description="The services the agent gets. Example: ['tickets', 'crm']")
    now: str = Field(description="The simulated time, ISO 8601. Example: '2026-03-02T09:00:00Z'")
    request: str = Field(min_length=1, description="What the user asks, in their words.")
    user: UserSpec | None = None
    initial_records: Records = Field(default_factory=dict, description="{service: {table: [records]}}")
    completion_checks: list[CompletionCheck] = Field(min_length=1)
    forbidden_actions: list[ForbiddenAction] = Field(default_factory=list)
    reference_solution: list[Step] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(
        default_factory=dict,
        description="Free-form. Known keys: 'request_may_name' (values the request may name on purpose), "
        "'distractors' (seed record ids that look relevant and are not).",
    )
    _cache: dict[str, Any] = PrivateAttr(default_factory=dict)

    @field_validator("now")
    @classmethod
    def _iso_time(cls, value: str) -> str:
        try:
            return format_time(parse_time(value))
        except ValueError as exc:
            raise ValueError(f"not an ISO 8601 time: {value!r}; write it like 2026-03-02T09:00:00Z") from exc

    @model_validator(mode="after")
    def _unique_ids(self) -> Task:
        for what, ids in (
            ("completion check", [c.id for c in self.completion_checks]),
            ("forbidden action", [f.id for f in self.forbidden_actions]),
            ("reference step", [s.id for s in self.reference_solution if isinstance(s, ToolStep) and s.id]),
        ):
            dupes = sorted({i for i in ids if ids.count(i) > 1})
            if dupes:
                raise ValueError(f"duplicate {what} id(s): {', '.join(dupes)}")
        return self

    def seed(self, service: str) -> dict[str, list[dict[str, Any]]]:
        return self.initial_records.get(service, {})

    def seeds(self) -> dict[str, dict[str, list[dict[str, Any]]]]:
        """The seed of every service of the task (empty for a service without records)."""
        return {name: self.seed(name) for name in self.services}

    def reference_answer(self) -> list[str]:
        return [s.say for s in self.reference_solution if isinstance(s, SayStep)]


# ---------------------------------------------------------------------------------------------- references
class RefError(ValueError):
    """A ``$ref`` that names no earlier step, or a path that step's result does not have."""


_REF_HEAD = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)(?:\.(.+))?$")


def is_ref(value: Any) -> bool:
    return isinstance(value, Mapping) and set(value) == {"$ref"} and isinstance(value["$ref"], str)


def split_ref(ref: str) -> tuple[str, str]:
    """``"find.items.0.id"`` → ``("find", "items.0.id")``; raises RefError when malformed."""
    m = _REF_HEAD.match(ref)
    if not m:
        raise RefError(f"$ref {ref!r} must look like 'step_id.path.to.field'")
    return m.group(1), m.group(2) or ""


def find_refs(value: Any, path: str = "") -> list[tuple[str, str]]:
    """Every ``$ref`` inside a value, as (json path relative to the value, ref text)."""
    if is_ref(value):
        return [(path, value["$ref"])]
    if isinstance(value, Mapping):
        return [hit for k, v in value.items() for hit in find_refs(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [hit for i, v in enumerate(value) for hit in find_refs(v, f"{path}[{i}]")]
    return []


def resolve_refs(value: Any, results: Mapping[str, Any]) -> Any:
    """Replace every ``{"$ref": "step.path"}`` by the value at that path of that step's result."""
    if is_ref(value):
        step, path = split_ref(value["$ref"])
        if step not in results:
            raise RefError(f"$ref {value['$ref']!r}: no earlier step {step!r} with a result")
        present, found = get_path(results[step], path)
        if not present:
            raise RefError(f"$ref {value['$ref']!r}: the result of step {step!r} has no {path!r}")
        return found
    if isinstance(value, Mapping):
        return {k: resolve_refs(v, results) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve_refs(v, results) for v in value]
    return value


def task_json_schema() -> dict[str, Any]:
    """The JSON Schema of a task file."""
    schema = Task.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema.setdefault("title", "CoworkEnv task")
    return schema
