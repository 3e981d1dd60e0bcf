"""The LLM task generator (Anthropic): draft → validate → repair, behind
:class:`~coworkenv.synth.generate.generator.TaskGenerator` like the procedural one (``make_generator("llm")``).

For one cell of the coverage plan (capability, scenario, services, difficulty) and a seed:

1. the generator model drafts a task (request, seed records, checks, reference solution) given the cached
   service catalog and task schema, the cell, and an example task of that scenario from the procedural
   family (or a shipped example);
2. for a safety scenario the draft has no checks: a separate discriminator context, given the scenario,
   request, records and proposed safe handling, sets the completion checks and forbidden actions;
3. the task is validated (static, then by execution through the real services); its diagnostics go back
   to whichever context owns the failing part, up to ``max_repairs`` times; then it is accepted or given up.

Requests are retried on rate limits and server errors (:mod:`coworkenv.synth.providers`, the one place for
provider plumbing), bounded by a shared ``anyio.CapacityLimiter``; tokens and estimated cost are totalled
per outcome and per generator (:meth:`LLMGenerator.report`, for the synthesis report). Needs the ``llm`` extra.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import anyio
from pydantic import ValidationError

from coworkenv.synth.contract.diagnostics import Diagnostic
from coworkenv.synth.contract.task import Task
from coworkenv.synth.contract.validation.static import validate_static
from coworkenv.synth.contract.validation.validate import TaskReport, validate_task
from coworkenv.synth.generate import llm_prompts as prompts
from coworkenv.synth.generate.plan import Cell
from coworkenv.synth.providers import (
    Accounting,
    InfrastructureError,
    ProviderConfigError,
    RetryPolicy,
    Usage,
    estimate_cost,
    with_retries,
)

if TYPE_CHECKING:
    import anthropic

DEFAULT_MODEL = "claude-sonnet-4-6"
GRADING_PATHS = ("$.completion_checks", "$.forbidden_actions")
Validator = Callable[[Task], Awaitable[TaskReport]]
Reason = Literal["invalid", "unparseable", "infrastructure"]
_FENCE = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)


@dataclass
class LLMOutcome:
    """What the generator made of one (cell, seed): an accepted task, or why it gave up."""

    cell: Cell
    seed: int
    task: Task | None = None
    repairs: int = 0
    diagnostics: list[Diagnostic] = field(default_factory=list)
    reason: Reason | None = None
    detail: str = ""
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = 0.0
    requests: int = 0
    rejected_drafts: list[str] = field(default_factory=list)
    """The first error code of each draft that failed (for the synthesis report's rejections by reason)."""

    @property
    def accepted(self) -> bool:
        return self.task is not None


def extract_json(text: str) -> dict[str, Any] | str:
    """The JSON object of a reply (the last fenced block, else the outermost braces), or what went wrong."""
    candidates = _FENCE.findall(text)
    if not candidates and "{" in text:
        candidates = [text[text.index("{") : text.rindex("}") + 1]]
    if not candidates:
        return "the reply holds no JSON object"
    try:
        value = json.loads(candidates[-1])
    except json.JSONDecodeError as exc:
        return f"the JSON does not parse: {exc.msg} at line {exc.lineno} column {exc.colno}"
    return value if isinstance(value, dict) else "the JSON is not an object"


def _not_json(problem: str) -> Diagnostic:
    return Diagnostic(
        code="DRAFT_NOT_JSON", path="$", message=problem, fix="Reply with one JSON object in a ```json block."
    )


class Conversation:
    """One model context (the generator's or the discriminator's): system blocks plus alternating turns."""

    def __init__(self, generator: LLMGenerator, role: str, outcome: LLMOutcome) -> None:
        self.generator = generator
        self.system = prompts.system_blocks(role)
        self.messages: list[dict[str, Any]] = []
        self.outcome = outcome

    async def ask(self, text: str) -> str:
        self.messages.append({"role": "user", "content": [{"type": "text", "text": text}]})
        reply = await self.generator.request(self.system, self.messages, self.outcome)
        self.messages.append({"role": "assistant", "content": [{"type": "text", "text": reply or "(empty)"}]})
        return reply


class LLMGenerator:
    """Generates tasks with an Anthropic model. One instance serves a whole synthesis run (shared limiter and
    totals); ``client`` and ``validate`` may be injected (tests, custom validation)."""

    name = "llm"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        client: anthropic.AsyncAnthropic | None = None,
        retry: RetryPolicy | None = None,
        max_repairs: int = 2,
        concurrency: int = 4,
        max_tokens: int = 16000,
        validate: Validator | None = None,
        examples: int = 1,
    ) -> None:
        self.model = model
        self.retry = retry or RetryPolicy()
        self.max_repairs = max_repairs
        self.max_tokens = max_tokens
        self.examples = examples
        self.limiter = anyio.CapacityLimiter(concurrency)
        self.accounting = Accounting(model)
        self.outcomes: dict[str, int] = {
            "accepted": 0,
            "repaired": 0,
            "invalid": 0,
            "unparseable": 0,
            "infrastructure": 0,
        }
        self._validate = validate or validate_task
        self._client = client

    @property
    def client(self) -> anthropic.AsyncAnthropic:
        if self._client is None:
            try:
                import anthropic
            except ImportError as exc:  # pragma: no cover - depends on the installed extras
                raise ImportError("the LLM generator needs `pip install 'coworkenv[llm]'`") from exc
            self._client = anthropic.AsyncAnthropic(max_retries=0)
        return self._client

    # ------------------------------------------------------------------ one request
    async def request(self, system: list[dict[str, Any]], messages: list[dict[str, Any]], outcome: LLMOutcome) -> str:
        sent = [dict(m, content=[dict(b) for b in m["content"]]) for m in messages]
        sent[-1]["content"][-1]["cache_control"] = prompts.CACHE  # repairs re-read the conversation from cache
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": system,
            "messages": sent,
        }
        client = self.client

        async def call() -> Any:
            async with self.limiter:
                return await client.messages.create(**params)

        response = await with_retries(
            call, self.retry, what=f"task generation ({self.model})", on_retry=self.accounting.note_retry
        )
        raw = response.usage
        usage = Usage(
            input_tokens=int(getattr(raw, "input_tokens", 0) or 0),
            output_tokens=int(getattr(raw, "output_tokens", 0) or 0),
            cache_read_tokens=int(getattr(raw, "cache_read_input_tokens", 0) or 0),
            cache_write_tokens=int(getattr(raw, "cache_creation_input_tokens", 0) or 0),
        )
        self.accounting.record(usage)
        outcome.usage = outcome.usage.add(usage)
        outcome.requests += 1
        return "".join(getattr(b, "text", "") for b in response.content if getattr(b, "type", "") == "text")

    # ------------------------------------------------------------------ the cell's context
    def _family(self, cell: Cell) -> Any:
        try:
            from coworkenv.synth.generate.families import FAMILIES
        except ImportError:
            return None
        return FAMILIES.get(cell.scenario)

    def is_safety(self, cell: Cell) -> bool:
        family = self._family(cell)
        if family is not None:
            return bool(family.safety)
        return "safety" in cell.capability.lower() or "safety" in cell.scenario.lower()

    def example_tasks(self, cell: Cell, seed: int) -> list[dict[str, Any]]:
        """Examples to show: the procedural family's own task for this cell (another seed), else shipped ones."""
        if self.examples <= 0:
            return []
        family = self._family(cell)
        if family is not None:
            try:
                return [family.make(tuple(cell.services), cell.difficulty, seed + 7919).model_dump(mode="json")]
            except Exception:  # a family that cannot build this cell: fall back to the shipped examples
                pass
        from coworkenv.synth.contract.library import load_examples

        shipped = sorted(load_examples(), key=lambda t: -len(set(t.services) & set(cell.services)))
        return [t.model_dump(mode="json") for t in shipped[: self.examples]]

    def normalise(self, doc: dict[str, Any], cell: Cell, seed: int) -> dict[str, Any]:
        """Pin what the cell decides (id, services, difficulty, scenario, capability) and tag the metadata."""
        family = self._family(cell)
        out = dict(doc)
        out["id"] = (
            f"llm-{re.sub(r'[^a-z0-9]+', '-', cell.scenario.lower()).strip('-')}-{cell.difficulty}-{seed & 0xFFFFFFFFFF:010x}"
        )
        out["version"] = 1
        out["services"] = list(cell.services)
        out["difficulty"] = cell.difficulty
        out["safety"] = self.is_safety(cell)
        out["scenario"] = family.scenario if family is not None else (doc.get("scenario") or cell.scenario)
        caps = [c for c in doc.get("capabilities") or [] if isinstance(c, str)]
        out["capabilities"] = [cell.capability, *[c for c in caps if c != cell.capability]]
        metadata = dict(doc.get("metadata") or {}) if isinstance(doc.get("metadata"), dict) else {}
        metadata.update(
            generator="llm",
            model=self.model,
            family=cell.scenario,
            capability=cell.capability,
            seed=seed,
        )
        metadata.pop("safety", None)
        out["metadata"] = metadata
        return out

    async def check(self, doc: dict[str, Any]) -> tuple[Task | None, list[Diagnostic]]:
        try:
            task = Task.model_validate(doc)
        except ValidationError:
            return None, validate_static(doc)
        report = await self._validate(task)
        return (task if report.valid else None), report.diagnostics

    # ------------------------------------------------------------------ generate
    async def generate(self, cell: Cell, seed: int, feedback: list[Diagnostic] | None = None) -> LLMOutcome:
        """Draft, validate and repair one task for ``cell``; never raises for a bad draft or a provider outage
        (the outcome says why), only for configuration problems (no API key)."""
        outcome = LLMOutcome(cell, seed)
        try:
            await self._generate(outcome, feedback)
        except ProviderConfigError:
            raise
        except InfrastructureError as exc:
            outcome.reason, outcome.detail = "infrastructure", str(exc)
        outcome.cost_usd = estimate_cost(self.model, outcome.usage)
        key = (
            "repaired"
            if outcome.accepted and outcome.repairs
            else ("accepted" if outcome.accepted else str(outcome.reason))
        )
        self.outcomes[key] = self.outcomes.get(key, 0) + 1
        return outcome

    async def _generate(self, outcome: LLMOutcome, feedback: list[Diagnostic] | None) -> None:
        cell, seed = outcome.cell, outcome.seed
        safety = self.is_safety(cell)
        family = self._family(cell)
        hint = family.scenario if family is not None else ""
        distractors = family.distractors if family is not None else ""
        writer = Conversation(self, prompts.SAFETY_GENERATOR_ROLE if safety else prompts.GENERATOR_ROLE, outcome)
        judge = Conversation(self, prompts.DISCRIMINATOR_ROLE, outcome) if safety else None
        opening = prompts.cell_text(cell, seed, hint, distractors) + prompts.example_text(
            self.example_tasks(cell, seed)
        )
        if feedback:
            opening += "\n\nAn earlier attempt at this cell failed; avoid its problems:\n" + "\n".join(
                d.line() for d in feedback
            )

        draft = extract_json(await writer.ask(opening))
        grading: dict[str, Any] | str = {}
        if judge is not None and isinstance(draft, dict):
            grading = extract_json(await judge.ask(prompts.discriminator_text(draft)))
        for attempt in range(self.max_repairs + 1):
            diagnostics = self._parse_problems(draft, grading)
            task = None
            if not diagnostics:
                assert isinstance(draft, dict) and isinstance(grading, dict)
                doc: dict[str, Any] = dict(draft)
                doc.update({k: grading[k] for k in ("completion_checks", "forbidden_actions") if k in grading})
                task, diagnostics = await self.check(self.normalise(doc, cell, seed))
            outcome.diagnostics = diagnostics
            if task is not None:
                outcome.task = task
                return
            codes = [d.code for d in diagnostics if d.severity == "error"]
            outcome.rejected_drafts.append(codes[0] if codes else "INVALID")
            if attempt == self.max_repairs:
                break
            outcome.repairs += 1
            draft, grading = await self._repair(writer, judge, draft, grading, diagnostics)
        unparseable = any(d.code == "DRAFT_NOT_JSON" for d in outcome.diagnostics)
        outcome.reason = "unparseable" if unparseable else "invalid"
        errors = [d for d in outcome.diagnostics if d.severity == "error"]
        outcome.detail = f"gave up after {outcome.repairs} repair(s): " + "; ".join(d.line() for d in errors[:3])

    @staticmethod
    def _parse_problems(draft: dict[str, Any] | str, grading: dict[str, Any] | str) -> list[Diagnostic]:
        problems = []
        if isinstance(draft, str):
            problems.append(_not_json(draft))
        if isinstance(grading, str):
            problems.append(_not_json(grading).model_copy(update={"path": GRADING_PATHS[0]}))
        return problems

    async def _repair(
        self,
        writer: Conversation,
        judge: Conversation | None,
        draft: dict[str, Any] | str,
        grading: dict[str, Any] | str,
        diagnostics: list[Diagnostic],
    ) -> tuple[dict[str, Any] | str, dict[str, Any] | str]:
        """One repair round: each context gets back the diagnostics of the part it owns."""
        if judge is None:
            return extract_json(await writer.ask(prompts.feedback_text(diagnostics))), grading
        mine = [d for d in diagnostics if not d.path.startswith(GRADING_PATHS)]
        theirs = [d for d in diagnostics if d.path.startswith(GRADING_PATHS)]
        if mine or isinstance(draft, str):
            draft = extract_json(await writer.ask(prompts.feedback_text(mine or diagnostics)))
            if isinstance(draft, dict):
                text = prompts.discriminator_text(draft)
                if theirs:
                    text += "\n\n" + prompts.feedback_text(theirs, "grading")
                grading = extract_json(await judge.ask(text))
        else:
            grading = extract_json(await judge.ask(prompts.feedback_text(theirs, "grading")))
        return draft, grading

    # ------------------------------------------------------------------ the synthesis report
    def report(self) -> dict[str, Any]:
        """Totals for the synthesis report: outcomes, requests, retries, tokens, estimated cost (USD)."""
        return {"generator": self.name, "outcomes": dict(self.outcomes), **self.accounting.as_dict()}
