"""The task: what the user asks, the seed records, the checks, the forbidden actions, a reference solution.

A task is data, validated by :class:`Task` (``task_json_schema()`` publishes its JSON Schema). A later
reference step may use an earlier step's result through a typed reference, ``{"$ref": "step_id.path"}``:
it is resolved by looking the path up in that step's result, never by evaluating anything
(:mod:`coworkenv.synth.contract.refs`, whose names are importable from here too).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from coworkenv.servers.kit import format_time, parse_time
from coworkenv.synth.contract.checks import Check, ForbiddenMatch
from coworkenv.synth.contract.matchers import Filter
from coworkenv.synth.contract.refs import RefError as RefError
from coworkenv.synth.contract.refs import find_refs as find_refs
from coworkenv.synth.contract.refs import is_ref as is_ref
from coworkenv.synth.contract.refs import resolve_refs as resolve_refs
from coworkenv.synth.contract.refs import split_ref as split_ref
from coworkenv.synth.contract.turns import Trigger, trigger_from_text

TASK_ID = r"^[a-z0-9][a-z0-9._-]*$"
STEP_ID = r"^[A-Za-z_][A-Za-z0-9_-]*$"
Difficulty = Literal["easy", "medium", "hard"]
ChangeOp = Literal["create", "update", "delete"]


def _all_ops() -> list[ChangeOp]:
    return ["create", "update", "delete"]


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
    why: str | None = Field(
        default=None,
        description="Why the check tests the path rather than the outcome (e.g. a call to a read-only tool), "
        "when it must; without it such a check is flagged.",
    )
    after_turn: int | None = Field(
        default=None,
        ge=1,
        description="Only what the run did after the user's N-th later turn counts (1: the first of user.turns): "
        "calls made after it, records written after it ('paid after the approval'). The turn must make edits "
        "(they mark when it came in the audit log).",
    )


class ForbiddenAction(_Model):
    id: str = Field(pattern=STEP_ID)
    description: str
    match: ForbiddenMatch = Field(description="When this check passes, the forbidden thing happened.")
    example: Step | None = Field(
        default=None,
        description="A concrete call (or message) that commits it; validation runs it after the reference.",
    )
    before_turn: int | None = Field(
        default=None,
        ge=1,
        description="Only what the run did before the user's N-th later turn counts (1: the first of user.turns): "
        "'paying before the approval'. The turn must make edits (they mark when it came in the audit log); "
        "validation runs the example before it.",
    )


class UserTurn(_Model):
    """A later message from the user, optionally with edits the user makes to the workspace (as actor 'user')."""

    message: str
    when: Trigger | None = Field(
        default=None,
        description="When the user says it (absent: when the agent finishes a turn): "
        '{"after_tool": "docs.edit_document", "count": 1} (right after the agent\'s count-th successful call of '
        'that tool), {"after_calls": 3} (right after its 3rd tool call), {"after_turn": 2} (when it finishes its '
        '2nd turn) or {"on_finish": true}. A turn whose trigger has not come is still given when the agent '
        "finishes a turn that the user has nothing else to answer.",
    )
    edits: list[ToolStep] = Field(
        default_factory=list,
        description="Edits the user makes before saying it, as written (no $ref: the user does not see the "
        "agent's results).",
    )

    @field_validator("when", mode="before")
    @classmethod
    def _when_phrase(cls, value: Any) -> Any:
        """Free text is read strictly: only the exact phrasings of ``turns.PHRASES``, as their typed form."""
        return trigger_from_text(value) if isinstance(value, str) else value


class UserSpec(_Model):
    persona: str = ""
    held_back: list[str] = Field(default_factory=list, description="Facts the user gives only when asked.")
    turns: list[UserTurn] = Field(default_factory=list)


class AllowedChange(_Model):
    """Changes the task allows beyond what it expects (drafts, read flags, labels), with the reason why.

    A change is allowed when its service, table and operation match, the record (as it is after a create
    or update, as it was before a delete) matches ``where``, and, for an update, every changed field is in
    ``fields`` (empty: any field).
    """

    service: str = Field(description="Example: 'email'")
    table: str = Field(description="Example: 'messages'")
    ops: list[ChangeOp] = Field(default_factory=_all_ops, min_length=1)
    where: Filter = Field(
        default_factory=dict, description="Which records. Example: {'label_ids': {'contains': 'DRAFT'}}"
    )
    fields: list[str] = Field(default_factory=list, description="Update: only these fields. Example: ['label_ids']")
    reason: str = Field(min_length=3, description="Why the guard is relaxed here. Example: 'drafts are harmless'")


class ExpectedChange(_Model):
    """One change the reference solution makes (derived by running it; stored with the task)."""

    service: str
    table: str
    op: ChangeOp
    id: str | None = Field(default=None, description="The seed record updated or deleted; null for a create.")
    fields: list[str] = Field(default_factory=list, description="Update: the fields the reference changed.")
    keys: list[str] = Field(default_factory=list, description="The sensitive kinds of the change ('kind/key').")
    count: int = Field(default=1, ge=1, description="Create: how many such records the reference creates.")
    records: list[dict[str, Any]] | None = Field(
        default=None,
        description="Create: what each record the reference creates holds in its determined fields (single values: "
        "ids of seed records, addresses, amounts, statuses, times; not free text, nor the ids of records the run "
        "made); a run's created record is explained by one of them only when it holds the same (coworkenv.synth."
        "contract.guard). Absent in tasks derived before: the grader derives them again.",
    )
    meets: list[list[str]] | None = Field(
        default=None,
        description="Create: per record of 'records', the ids of the record_exists / record_count checks it meets; a "
        "run's record stands in for it only when it meets them too.",
    )
    values: dict[str, Any] | None = Field(
        default=None,
        description="Update: the value the reference left in each changed field whose value it determines (not "
        "the id of a record the run made); a run's new value must be the same (coworkenv.synth.contract.values). "
        "Absent in tasks derived before values were kept: the grader derives them again.",
    )
    kept: dict[str, list[str]] | None = Field(
        default=None,
        description="Update of free text or a list: per field, the lines, sentences or items that were there before "
        "(in the seed or as the simulated user wrote them) and that the reference kept; a run must keep them all.",
    )
    by_user: list[str] | None = Field(
        default=None,
        description="Update: the fields the simulated user set and the reference left as the user set them (a run "
        "that undoes or corrupts them harms the user's work).",
    )


class ToolProfile(_Model):
    """Another tool surface on the task's services: the agent sees these names and schemas instead of the services'
    own tools (an imported benchmark's tasks name its own tools in their prompts and graders)."""

    name: Literal["claw-eval"] = Field(description="The profile. Example: 'claw-eval'")
    services: list[str] = Field(
        min_length=1,
        description="The profile's services the task uses, each served by one of ours. Example: ['gmail', 'contacts']",
    )
    tools: list[dict[str, Any]] = Field(
        default_factory=list,
        description="The tools the agent sees, as the source task declares them ({name, description, input_schema});"
        " empty: every tool of the profile's services.",
    )


class ExternalGrading(_Model):
    """A task graded by its source's own grader rather than by completion checks (an imported benchmark task)."""

    kind: Literal["claw-eval"]
    source: str = Field(min_length=1, description="The source task's id. Example: 'T002_email_triage'")
    spec: dict[str, Any] = Field(
        default_factory=dict,
        description="What the source's grader reads of its task file: scoring components, safety checks, judge "
        "rubric, expected actions, the reference solution's text, the environment's limits.",
    )


class Task(_Model):
    id: str = Field(pattern=TASK_ID, description="Stable id. Example: 'escalate-stale-enterprise-tickets'")
    version: int = Field(default=1, ge=1)
    scenario: str = Field(description="The situation, for people and generators. Example: 'support escalation'")
    capabilities: list[str] = Field(default_factory=list, description="Example: ['search', 'cross-service lookup']")
    difficulty: Difficulty = "medium"
    safety: bool = Field(
        default=False,
        description="A safety task: the request or the workspace carries something the agent must refuse or guard "
        "against (an injected instruction, a look-alike bank change, an out-of-policy ask); its forbidden actions "
        "are the point of it. Reports split scores by it.",
    )
    services: list[str] = Field(
        default_factory=list,
        description="The services the agent gets (at least one, unless the task is graded externally). "
        "Example: ['tickets', 'crm']",
    )
    now: str = Field(description="The simulated time, ISO 8601. Example: '2026-03-02T09:00:00Z'")
    request: str = Field(min_length=1, description="What the user asks, in their words.")
    user: UserSpec | None = None
    initial_records: Records = Field(default_factory=dict, description="{service: {table: [records]}}")
    completion_checks: list[CompletionCheck] = Field(
        default_factory=list, description="At least one, unless the task is graded externally (`external`)."
    )
    forbidden_actions: list[ForbiddenAction] = Field(default_factory=list)
    reference_solution: list[Step] = Field(default_factory=list)
    alternative_solutions: list[list[Step]] | None = Field(
        default=None,
        description="Other correct ways to do the task (other tools, another order or lookup path), each a list of "
        "steps like the reference. Validation requires each to score 1.0 too, so the checks test outcomes, not "
        "the path.",
    )
    allowed_changes: list[AllowedChange] = Field(
        default_factory=list,
        description="Changes allowed beyond the expected ones; each says why. Anything else that changes costs "
        "completion, and a sensitive change trips the safety gate.",
    )
    expected_changes: list[ExpectedChange] | None = Field(
        default=None,
        description="The changes the reference solution makes, derived by validation (`coworkenv validate` "
        "fills them in); when absent the grader derives them by running the reference.",
    )
    tool_profile: ToolProfile | None = Field(
        default=None, description="Another tool surface the agent sees instead of the services' own tools."
    )
    external: ExternalGrading | None = Field(
        default=None, description="Graded by the source benchmark's own grader (imported tasks), not by checks."
    )
    metadata: dict[str, Any] = Field(
        default_factory=dict,
        description="Free-form. Known keys: 'request_may_name' (values the request may name on purpose), "
        "'distractors' (seed record ids that look relevant and are not).",
    )

    @model_validator(mode="before")
    @classmethod
    def _safety_from_metadata(cls, data: Any) -> Any:
        """Task files written before ``safety`` was a field kept it in ``metadata.safety``: lift it."""
        if isinstance(data, dict) and "safety" not in data and isinstance(data.get("metadata"), dict):
            flag = data["metadata"].get("safety")
            if isinstance(flag, bool):
                metadata = {k: v for k, v in data["metadata"].items() if k != "safety"}
                return {**data, "safety": flag, "metadata": metadata}
        return data

    @field_validator("now")
    @classmethod
    def _iso_time(cls, value: str) -> str:
        try:
            return format_time(parse_time(value))
        except ValueError as exc:
            raise ValueError(f"not an ISO 8601 time: {value!r}; write it like 2026-03-02T09:00:00Z") from exc

    @model_validator(mode="after")
    def _unique_ids(self) -> Task:
        if self.external is None:
            if not self.services:
                raise ValueError("services: name at least 1 service the agent gets")
            if not self.completion_checks:
                raise ValueError("completion_checks: write at least 1 check")
        for what, ids in (
            ("completion check", [c.id for c in self.completion_checks]),
            ("forbidden action", [f.id for f in self.forbidden_actions]),
            ("reference step", [s.id for s in self.reference_solution if isinstance(s, ToolStep) and s.id]),
        ):
            dupes = sorted(i for i, n in Counter(ids).items() if n > 1)  # linear: tasks may hold 100k checks
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


def task_json_schema() -> dict[str, Any]:
    """The JSON Schema of a task file."""
    schema = Task.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema.setdefault("title", "CoworkEnv task")
    return schema
