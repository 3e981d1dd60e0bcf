"""The LLM task generator: draft → validate → review → revise, behind
:class:`~coworkenv.synth.generate.generator.TaskGenerator` like the procedural one (``make_generator("llm")``).

The model is Anthropic's (``claude-…`` or ``anthropic:claude-…``) or any OpenAI-compatible endpoint
(``openai:MODEL`` with a base URL, e.g. an open model served locally by vLLM); see
:mod:`~coworkenv.synth.generate.llm_clients`. For one cell of the coverage plan (capability, scenario,
services, difficulty) and a seed:

1. the generator model drafts a task (request, seed records, checks, reference solution) given the service
   catalog and task schema, the cell, and an example task of that scenario from the procedural family (or a
   shipped example);
2. for a safety scenario the draft has no checks: a separate discriminator context, given the scenario,
   request, records and proposed safe handling, sets the completion checks and forbidden actions;
3. the task is validated (static, then by execution through the real services);
4. a reviewer in its own context (:mod:`~coworkenv.synth.generate.llm_review`) reads the spec, the task and
   the execution evidence and accepts it or writes revision notes, up to ``max_reviews`` rounds;
5. the diagnostics and notes go back to whichever context owns the part concerned, and the revised task is
   validated (and reviewed) again; a failed draft is repaired up to ``max_repairs`` times; then the task is
   accepted (a valid one: validation, not the reviewer, is the gate) or given up.

Requests are retried on rate limits and server errors (:mod:`coworkenv.synth.providers`) under a shared
``anyio.CapacityLimiter``; tokens, estimated cost and review rounds with their notes are recorded per outcome
and per generator (:meth:`LLMGenerator.report`; each accepted task keeps its rounds in ``metadata.review``).
What one (cell, seed) came to is an :class:`~coworkenv.synth.generate.llm_outcome.LLMOutcome` (importable from here).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import anyio
from pydantic import ValidationError

from coworkenv.synth.contract.diagnostics import Diagnostic
from coworkenv.synth.contract.task import Task
from coworkenv.synth.contract.validation.static import validate_static
from coworkenv.synth.contract.validation.validate import TaskReport, validate_task
from coworkenv.synth.generate import llm_prompts as prompts
from coworkenv.synth.generate.llm_clients import ChatClient, ChatReply, Turn, make_chat, parse_model
from coworkenv.synth.generate.llm_grounding import ground_draft, grounding_text
from coworkenv.synth.generate.llm_json import extract_json
from coworkenv.synth.generate.llm_outcome import LLMOutcome
from coworkenv.synth.generate.llm_outcome import Reason as Reason
from coworkenv.synth.generate.llm_review import ReviewRound, evidence_summary, evidence_text, parse_review
from coworkenv.synth.generate.plan import Cell
from coworkenv.synth.generate.resources import ResourceSet
from coworkenv.synth.model_io import InfrastructureError, ProviderConfigError
from coworkenv.synth.providers import Accounting, RetryPolicy, estimate_cost, with_retries

__all__ = ["DEFAULT_MODEL", "LLMGenerator", "LLMOutcome", "extract_json"]

DEFAULT_MODEL = "claude-sonnet-4-6"
GRADING_PATHS = ("$.completion_checks", "$.forbidden_actions")
MAX_LOGGED_REVIEWS = 200
Validator = Callable[[Task], Awaitable[TaskReport]]
Json = dict[str, Any] | str


def _not_json(problem: str) -> Diagnostic:
    return Diagnostic(
        code="DRAFT_NOT_JSON", path="$", message=problem, fix="Reply with one JSON object in a ```json block."
    )


class Conversation:
    """One model context (the writer's, the discriminator's or the reviewer's): system blocks and its turns."""

    def __init__(self, generator: LLMGenerator, role: str, outcome: LLMOutcome) -> None:
        self.generator = generator
        self.system = prompts.system_blocks(role, generator.catalog_services(outcome.cell))
        self.turns: list[Turn] = []
        self.outcome = outcome

    async def ask(self, text: str) -> str:
        self.turns.append(Turn("user", text))
        reply = await self.generator.request(self.system, self.turns, self.outcome)
        self.turns.append(Turn("assistant", reply or "(empty)"))
        return reply


class LLMGenerator:
    """Generates tasks with an Anthropic model or an OpenAI-compatible endpoint. One instance serves a whole
    synthesis run (shared limiter and totals); ``client`` (an ``anthropic.AsyncAnthropic`` or
    ``openai.AsyncOpenAI``, by the model's provider), ``chat`` and ``validate`` may be injected."""

    name = "llm"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: Any | None = None,
        chat: ChatClient | None = None,
        retry: RetryPolicy | None = None,
        max_repairs: int = 2,
        max_reviews: int = 2,
        concurrency: int = 4,
        max_tokens: int = 16000,
        temperature: float | None = None,
        validate: Validator | None = None,
        examples: int = 1,
        catalog: Literal["all", "cell"] | None = None,
        resources: ResourceSet | None = None,
    ) -> None:
        self.spec = parse_model(model, base_url)
        self.model = self.spec.model
        self.chat = chat or make_chat(self.spec, client, api_key=api_key, temperature=temperature)
        self.retry = retry or RetryPolicy()
        self.max_repairs = max_repairs
        self.max_reviews = max_reviews
        self.max_tokens = max_tokens
        self.examples = examples
        self.catalog = catalog or ("all" if self.spec.provider == "anthropic" else "cell")
        """``all``: every service in one prompt-cached block; ``cell``: the cell's services only (local models)."""
        self.limiter = anyio.CapacityLimiter(concurrency)
        self.accounting = Accounting(self.model)
        self.outcomes = dict.fromkeys(("accepted", "repaired", "invalid", "unparseable", "infrastructure"), 0)
        self.review_totals = dict.fromkeys(
            ("rounds", "accept", "revise", "unreadable", "revisions", "kept_earlier_draft"), 0
        )
        self.review_log: list[dict[str, Any]] = []
        self._validate = validate or validate_task
        self._ready = False
        self.resources = resources
        """A user's loaded files (``--from``): shown to the writer and kept in every draft's seed."""

    def catalog_services(self, cell: Cell) -> tuple[str, ...] | None:
        return tuple(sorted(cell.services)) if self.catalog == "cell" else None

    # ------------------------------------------------------------------ one request
    async def request(self, system: list[dict[str, Any]], turns: list[Turn], outcome: LLMOutcome) -> str:
        async def call() -> ChatReply:
            async with self.limiter:
                return await self.chat.complete(system, list(turns), self.max_tokens)

        reply = await with_retries(
            call,
            self.retry,
            what=f"task generation ({self.spec.label})",
            on_retry=self.accounting.note_retry,
            key_env=self.chat.key_env,
        )
        self.accounting.record(reply.usage)
        outcome.usage = outcome.usage.add(reply.usage)
        outcome.requests += 1
        return reply.text

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
                made = family.make(tuple(cell.services), cell.difficulty, seed + 7919, self.resources)
                return [made.model_dump(mode="json")]
            except Exception:  # a family that cannot build this cell: fall back to the shipped examples
                pass
        from coworkenv.synth.contract.library import load_examples

        shipped = sorted(load_examples(), key=lambda t: -len(set(t.services) & set(cell.services)))
        return [t.model_dump(mode="json") for t in shipped[: self.examples]]

    def spec_text(self, cell: Cell, seed: int) -> str:
        """The cell as the writer and the reviewer read it."""
        family = self._family(cell)
        hint = family.scenario if family is not None else ""
        distractors = family.distractors if family is not None else ""
        return prompts.cell_text(cell, seed, hint, distractors)

    def normalise(self, doc: dict[str, Any], cell: Cell, seed: int) -> dict[str, Any]:
        """Pin what the cell decides (id, services, difficulty, scenario, capability) and tag the metadata."""
        family = self._family(cell)
        out = dict(doc)
        slug = re.sub(r"[^a-z0-9]+", "-", cell.scenario.lower()).strip("-")
        out["id"] = f"llm-{slug}-{cell.difficulty}-{seed & 0xFFFFFFFFFF:010x}"
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
            provider=self.spec.provider,
            model=self.model,
            family=cell.scenario,
            capability=cell.capability,
            seed=seed,
        )
        for key in ("safety", "review"):
            metadata.pop(key, None)
        out["metadata"] = metadata
        if self.resources is not None:
            metadata["grounded_on"] = self.resources.fingerprint()
            return ground_draft(out, self.resources, tuple(cell.services))
        return out

    async def check(self, doc: dict[str, Any]) -> tuple[Task | None, TaskReport]:
        try:
            task = Task.model_validate(doc)
        except ValidationError:
            return None, TaskReport(task_id=None, source="", valid=False, diagnostics=validate_static(doc))
        report = await self._validate(task)
        return (task if report.valid else None), report

    # ------------------------------------------------------------------ generate
    async def generate(self, cell: Cell, seed: int, feedback: list[Diagnostic] | None = None) -> LLMOutcome:
        """Draft, validate, review and revise one task for ``cell``; never raises for a bad draft or a provider
        outage (the outcome says why), only for configuration problems (no API key, unknown model, no server)."""
        outcome = LLMOutcome(cell, seed)
        try:
            if not self._ready:  # once per generator: the endpoint serves the model (a clear line if not)
                await self.chat.preflight()
                self._ready = True
            await self._generate(outcome, feedback)
        except ProviderConfigError:
            raise
        except InfrastructureError as exc:
            if outcome.kept is not None:  # the provider failed during a review or revision of a valid task
                (outcome.task, outcome.diagnostics), outcome.detail = outcome.kept, f"kept the last valid draft: {exc}"
            else:
                outcome.reason, outcome.detail = "infrastructure", str(exc)
        outcome.cost_usd = estimate_cost(self.model, outcome.usage)
        if outcome.task is not None and outcome.reviews:
            metadata = {**outcome.task.metadata, "review": [r.as_dict() for r in outcome.reviews]}
            outcome.task = outcome.task.model_copy(update={"metadata": metadata})
        self._tally(outcome)
        return outcome

    async def _generate(self, outcome: LLMOutcome, feedback: list[Diagnostic] | None) -> None:
        cell, seed = outcome.cell, outcome.seed
        safety = self.is_safety(cell)
        spec = self.spec_text(cell, seed)
        writer = Conversation(self, prompts.SAFETY_GENERATOR_ROLE if safety else prompts.GENERATOR_ROLE, outcome)
        judge = Conversation(self, prompts.DISCRIMINATOR_ROLE, outcome) if safety else None
        reviewer = Conversation(self, prompts.REVIEWER_ROLE, outcome) if self.max_reviews > 0 else None
        opening = spec + prompts.example_text(self.example_tasks(cell, seed))
        if self.resources is not None:
            opening += grounding_text(self.resources, tuple(cell.services))
        if feedback:
            opening += "\n\nAn earlier attempt at this cell failed; avoid its problems:\n" + "\n".join(
                d.line() for d in feedback
            )

        draft: Json = extract_json(await writer.ask(opening))
        grading: Json = {}
        if judge is not None and isinstance(draft, dict):
            grading = extract_json(await judge.ask(prompts.discriminator_text(draft)))
        while True:
            task, report, doc = await self._validate_draft(draft, grading, cell, seed)
            outcome.diagnostics = report.diagnostics
            if task is None:
                codes = [d.code for d in report.errors]
                outcome.rejected_drafts.append(codes[0] if codes else "INVALID")
            else:
                outcome.kept = (task, report.diagnostics)
            review = None
            if reviewer is not None and doc is not None and len(outcome.reviews) < self.max_reviews:
                review = await self._review(reviewer, spec, doc, report, outcome)
            if task is not None and (review is None or review.verdict != "revise"):
                outcome.task = task
                return
            if task is None:
                if outcome.repairs >= self.max_repairs:
                    break
                outcome.repairs += 1
            else:
                outcome.revisions += 1
            draft, grading = await self._revise(writer, judge, draft, grading, report.diagnostics, review)
        if outcome.kept is not None:  # the revision of a valid draft failed validation: keep the valid one
            outcome.task, outcome.diagnostics = outcome.kept
            self.review_totals["kept_earlier_draft"] += 1
            return
        unparseable = any(d.code == "DRAFT_NOT_JSON" for d in outcome.diagnostics)
        outcome.reason = "unparseable" if unparseable else "invalid"
        errors = [d for d in outcome.diagnostics if d.severity == "error"]
        outcome.detail = f"gave up after {outcome.repairs} repair(s): " + "; ".join(d.line() for d in errors[:3])

    async def _validate_draft(
        self, draft: Json, grading: Json, cell: Cell, seed: int
    ) -> tuple[Task | None, TaskReport, dict[str, Any] | None]:
        """(the task when valid, the validation report, the document validated — None when nothing parsed)."""
        problems = []
        if isinstance(draft, str):
            problems.append(_not_json(draft))
        if isinstance(grading, str):
            problems.append(_not_json(grading).model_copy(update={"path": GRADING_PATHS[0]}))
        if problems or not isinstance(draft, dict) or not isinstance(grading, dict):
            return None, TaskReport(task_id=None, source="", valid=False, diagnostics=problems), None
        doc: dict[str, Any] = dict(draft)
        doc.update({k: grading[k] for k in ("completion_checks", "forbidden_actions") if k in grading})
        doc = self.normalise(doc, cell, seed)
        task, report = await self.check(doc)
        return task, report, doc

    async def _review(
        self, reviewer: Conversation, spec: str, doc: dict[str, Any], report: TaskReport, outcome: LLMOutcome
    ) -> ReviewRound:
        text = prompts.review_text(spec, doc, evidence_text(report), again=bool(outcome.reviews))
        verdict, notes = parse_review(await reviewer.ask(text))
        review = ReviewRound(len(outcome.reviews) + 1, report.valid, verdict, notes, evidence_summary(report))
        outcome.reviews.append(review)
        return review

    async def _revise(
        self,
        writer: Conversation,
        judge: Conversation | None,
        draft: Json,
        grading: Json,
        diagnostics: list[Diagnostic],
        review: ReviewRound | None,
    ) -> tuple[Json, Json]:
        """One round: each context gets back the diagnostics and the reviewer's notes about the part it owns."""
        notes = review.notes if review is not None else []
        if judge is None:
            text = prompts.revision_text(diagnostics, [n.line() for n in notes])
            return extract_json(await writer.ask(text)), grading
        mine = [d for d in diagnostics if not d.path.startswith(GRADING_PATHS)]
        theirs = [d for d in diagnostics if d.path.startswith(GRADING_PATHS)]
        my_notes = [n.line() for n in notes if not n.grading]
        their_notes = [n.line() for n in notes if n.grading]
        if mine or my_notes or isinstance(draft, str):
            draft = extract_json(await writer.ask(prompts.revision_text(mine or diagnostics, my_notes)))
            if isinstance(draft, dict):
                text = prompts.discriminator_text(draft)
                if theirs or their_notes:
                    text += "\n\n" + prompts.revision_text(theirs, their_notes, "grading")
                grading = extract_json(await judge.ask(text))
        else:
            grading = extract_json(await judge.ask(prompts.revision_text(theirs, their_notes, "grading")))
        return draft, grading

    # ------------------------------------------------------------------ the synthesis report
    def _tally(self, outcome: LLMOutcome) -> None:
        key = ("repaired" if outcome.repairs else "accepted") if outcome.accepted else str(outcome.reason)
        self.outcomes[key] = self.outcomes.get(key, 0) + 1
        totals = self.review_totals
        totals["revisions"] += outcome.revisions
        for r in outcome.reviews:
            totals["rounds"] += 1
            totals[r.verdict] += 1
            if len(self.review_log) < MAX_LOGGED_REVIEWS:
                self.review_log.append({"cell": outcome.cell.key, "seed": outcome.seed, **r.as_dict()})

    def report(self) -> dict[str, Any]:
        """Totals for the synthesis report: outcomes, requests, retries, tokens, estimated cost (USD), and the
        review rounds (verdicts, revisions, and the first rounds' notes)."""
        return {
            "generator": self.name,
            "provider": self.spec.provider,
            "endpoint": self.spec.label,
            "outcomes": dict(self.outcomes),
            **self.accounting.as_dict(),
            "review": {"max_reviews": self.max_reviews, **self.review_totals, "log": list(self.review_log)},
        }
