"""The one interface of task generators, and how the synthesizer gets one by name.

A generator turns one cell of the coverage plan (:class:`~coworkenv.synth.generate.plan.Cell`: capability,
scenario, services, difficulty) and a seed into a task, or says why it could not::

    class TaskGenerator(Protocol):
        name: str
        async def generate(self, cell: Cell, seed: int, feedback: list[Diagnostic] | None = None) -> Outcome
        def report(self) -> dict[str, Any]

- ``generate`` is a coroutine so that a generator that waits on the network (the LLM generator) can run
  many cells at once; the synthesizer bounds how many are in flight (``--workers``). It must not raise
  for a bad draft (the outcome says what went wrong); it raises only for what no retry can fix (no API
  key, a missing dependency), which stops the run. It builds **and validates** the task (static checks,
  then by execution, :func:`coworkenv.synth.contract.validation.validate.validate_task`), repairing it a bounded number of
  times from the diagnostics, so an accepted outcome is a valid task.
- ``seed`` decides everything random about the task: the same cell and seed give the same task.
- ``feedback`` carries the diagnostics of an earlier failed attempt at the same cell (or a
  ``DUPLICATE`` diagnostic when the earlier task was a near-duplicate), for the generator to avoid.
- the :class:`Outcome` has ``task`` (None when given up), ``accepted``, ``repairs`` (failed drafts before
  the accepted one), ``diagnostics`` (of the last draft), ``reason`` and ``detail`` (why it gave up). An
  outcome may also carry ``rejected_drafts``: the error code of each draft that failed validation.
- ``report`` returns running totals for the synthesis report; the keys ``input_tokens``,
  ``output_tokens``, ``cache_read_tokens``, ``cache_write_tokens``, ``requests`` and ``cost_usd`` are read
  when present (a procedural generator spends none).

Two generators implement it: :class:`coworkenv.synth.generate.procedural.ProceduralGenerator` (families written as
code; no network) and ``coworkenv.synth.generate.llm_generator.LLMGenerator`` (Anthropic or any
OpenAI-compatible endpoint; needs the ``llm`` extra).
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol, runtime_checkable

from coworkenv.synth.contract.diagnostics import Diagnostic
from coworkenv.synth.contract.task import Task
from coworkenv.synth.generate.plan import Cell
from coworkenv.synth.generate.resources import ResourceSet

GENERATORS = ("procedural", "llm")


class Outcome(Protocol):
    """What a generator made of one (cell, seed)."""

    @property
    def task(self) -> Task | None: ...

    @property
    def accepted(self) -> bool: ...

    @property
    def repairs(self) -> int: ...

    @property
    def diagnostics(self) -> list[Diagnostic]: ...

    @property
    def reason(self) -> str | None: ...

    @property
    def detail(self) -> str: ...


@runtime_checkable
class TaskGenerator(Protocol):
    """Makes validated tasks for cells of a coverage plan. See the module docstring."""

    @property
    def name(self) -> str: ...

    async def generate(self, cell: Cell, seed: int, feedback: list[Diagnostic] | None = None) -> Outcome: ...

    def report(self) -> dict[str, Any]: ...


class GeneratorUnavailable(RuntimeError):
    """The generator asked for cannot be used here (not installed, missing extra); the message says what to do."""


def make_generator(
    name: str,
    *,
    model: str | None = None,
    workers: int = 1,
    base_url: str | None = None,
    resources: ResourceSet | None = None,
) -> TaskGenerator:
    """The generator called ``name`` (``procedural`` or ``llm``), ready to use. For ``llm``, ``model`` is
    ``claude-…`` / ``anthropic:claude-…`` or ``openai:MODEL`` and ``base_url`` an OpenAI-compatible endpoint
    (a local vLLM: ``http://127.0.0.1:8000/v1``). ``resources``: a user's loaded files to ground tasks on."""
    if name == "procedural":
        from coworkenv.synth.generate.procedural import ProceduralGenerator

        return ProceduralGenerator(resources=resources)
    if name == "llm":
        try:
            llm_generator = importlib.import_module("coworkenv.synth.generate.llm_generator")
        except ImportError as exc:
            raise GeneratorUnavailable(
                f"the LLM generator is not installed yet ({exc}); install the extra with "
                "`pip install 'coworkenv[llm]'`, or use --generator procedural"
            ) from exc
        options: dict[str, Any] = {"concurrency": max(1, workers)}
        if model:
            options["model"] = model
        if base_url:
            options["base_url"] = base_url
        if resources is not None:
            options["resources"] = resources
        generator: TaskGenerator = llm_generator.LLMGenerator(**options)
        return generator
    raise GeneratorUnavailable(f"unknown generator {name!r}; choose one of {', '.join(GENERATORS)}")
