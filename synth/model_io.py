"""What a model call gives back to whoever made it, agent or task generator: the tokens it used (:class:`Usage`) and
the failures that are not the model's answer (:class:`InfrastructureError`, :class:`ProviderConfigError`).

The floor both wings stand on. The harness (its agents, the episode loop, trajectories) and the LLM task generator
both read these types, and layering runs one way (``servers`` ← ``synth`` ← ``harness`` ← ``train``), so they live
at the bottom of ``synth``, in a module that imports nothing of coworkenv and no provider SDK: an agent backend
imports them without the provider plumbing of :mod:`coworkenv.synth.providers` (retries, scrubbing, prices), which
builds on them. ``coworkenv.harness.agents.base`` and ``coworkenv.harness.messages`` hand them on to agent authors.
"""

from __future__ import annotations

from pydantic import BaseModel

__all__ = ["InfrastructureError", "ProviderConfigError", "Usage"]


class InfrastructureError(RuntimeError):
    """Not the agent's fault: the provider or the machine failed. The trial is retried, not scored."""


class ProviderConfigError(InfrastructureError):
    """The provider refuses us for a reason retrying will not fix (no or bad key, unknown model).

    Still an infrastructure failure (never the agent's fault), but a run should stop and say what to do."""

    retryable = False


class Usage(BaseModel):
    """Tokens one model call (or a sum of them) used."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def add(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )
