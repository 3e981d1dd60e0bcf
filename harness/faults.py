"""Error injection for a run (``--inject-errors RATE``, ``--inject-latency SECONDS``).

Before each model call (each ``complete`` of a model agent; each tool call or message of an
episode-driving agent) the injector may add latency and, with probability ``rate``, raise a transient
rate-limit or server error as an :class:`InfrastructureError`. The run retries such trials from a fresh
environment; what it still cannot finish is recorded as ``infra_error``. ``coworkenv summary`` then reports
the robustness figure: how many trials still ended scored, after how many attempts.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import anyio

from coworkenv.harness.agents.base import InfrastructureError

INJECTED = (
    "429 rate_limit_error: too many requests (injected)",
    "529 overloaded_error: the API is overloaded (injected)",
    "500 api_error: internal server error (injected)",
    "503 service unavailable (injected)",
)


class InjectedError(InfrastructureError):
    """A transient provider failure made up by the fault injector."""


@dataclass
class FaultInjector:
    rate: float = 0.0
    latency_s: float = 0.0
    seed: int | None = None
    injected: int = 0
    _rng: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"the error rate must be between 0 and 1, got {self.rate}")
        if self.latency_s < 0:
            raise ValueError(f"the added latency must be 0 or more seconds, got {self.latency_s}")
        self._rng = random.Random(self.seed)

    @property
    def active(self) -> bool:
        return self.rate > 0 or self.latency_s > 0

    async def before_model_call(self) -> None:
        if self.latency_s > 0:
            await anyio.sleep(self._rng.uniform(0, self.latency_s))
        if self.rate > 0 and self._rng.random() < self.rate:
            self.injected += 1
            raise InjectedError(self._rng.choice(INJECTED))
