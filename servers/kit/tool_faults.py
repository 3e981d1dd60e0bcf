"""Injected tool faults: the dispatcher's switch that answers some of the agent's tool calls as a flaky API would.

Claw-Eval's mock services inject errors (its ``ERROR_RATE``): with probability ``rate`` a tool call is answered
429 "rate limited" (35 %), 500 "internal server error" (35 %), or is slow (30 %: 2-4 s there, then answered as
usual). Its graders score robustness from how the agent recovers. The switch does the same on our dispatcher,
whichever door a call came by:

- only the agent's calls of tools the service has (never the user's edits, a privileged call as a member, an
  unknown tool, nor the Python API's dump, audit or reset, which are no tool calls);
- a 429 or 500 runs nothing: the answer is an error whose text starts ``HTTP 429:`` / ``HTTP 500:`` and carries
  Claw-Eval's JSON body, and its audit row says it was injected (``result`` = ``{"injected_fault": KIND}``);
- a slow call waits (on the async path: ``Dispatcher.call``) and then runs as usual;
- the draws come from a seeded RNG per service, so a run at one seed injects the same faults on the same calls.

These are tool faults, not model-call faults (``coworkenv.harness.faults`` injects those).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

FaultKind = Literal["rate_limit", "server_error", "slow"]
KINDS: tuple[FaultKind, ...] = ("rate_limit", "server_error", "slow")
WEIGHTS = (0.35, 0.35, 0.30)
"""How often each kind is drawn, once a call is faulted (Claw-Eval's weights)."""
DEFAULT_SLOW_S = (2.0, 4.0)
"""How long a slow call waits, in seconds (drawn uniformly; Claw-Eval's range)."""
INJECTED = "injected_fault"
"""The key of an injected fault's audit row ``result``: ``{"injected_fault": "rate_limit"}``."""

_BODIES: dict[FaultKind, tuple[int, dict[str, Any]]] = {
    "rate_limit": (
        429,
        {
            "error": "rate_limit_exceeded",
            "message": "Too many requests. Please retry after a short delay.",
            "retry_after_seconds": 2,
        },
    ),
    "server_error": (
        500,
        {"error": "internal_server_error", "message": "An unexpected error occurred. Please try again."},
    ),
}


@dataclass(frozen=True)
class ToolFaults:
    """The switch's settings: the rate, the seed of its draws, and the range of a slow call's wait."""

    rate: float = 0.0
    seed: int | None = None
    """None: unseeded (not reproducible)."""
    slow_s: tuple[float, float] = DEFAULT_SLOW_S

    def __post_init__(self) -> None:
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"the tool fault rate must be between 0 and 1, got {self.rate}")
        low, high = self.slow_s
        if not 0.0 <= low <= high:
            raise ValueError(f"a slow call's wait must be MIN,MAX seconds with 0 <= MIN <= MAX, got {low},{high}")

    @property
    def active(self) -> bool:
        return self.rate > 0

    def derived(self, *keys: object) -> ToolFaults:
        """These settings with a seed of their own for ``keys`` (a task, a trial, a service): reproducible from the
        seed, and independent of the order other episodes or services draw in."""
        if self.seed is None:
            return self
        text = json.dumps([self.seed, *map(str, keys)])
        return ToolFaults(self.rate, int(hashlib.sha256(text.encode()).hexdigest()[:15], 16), self.slow_s)

    def serve_args(self) -> list[str]:
        """The ``coworkenv serve`` options that switch these faults on in a served service."""
        args = ["--faults", repr(self.rate), "--fault-slow", f"{self.slow_s[0]!r},{self.slow_s[1]!r}"]
        return args + (["--fault-seed", str(self.seed)] if self.seed is not None else [])


@dataclass(frozen=True)
class Fault:
    """One drawn fault: its kind and, for a slow call, how long it waits."""

    kind: FaultKind
    delay_s: float = 0.0

    @property
    def answers(self) -> bool:
        """Whether the fault is the answer (429, 500): the tool does not run."""
        return self.kind != "slow"

    @property
    def text(self) -> str:
        """The error the caller reads: ``HTTP <status>: <Claw-Eval's JSON body>``."""
        status, body = _BODIES[self.kind]
        return f"HTTP {status}: {json.dumps(body)}"


@dataclass
class FaultSwitch:
    """The switch on one service's dispatcher: draws a fault (or none) for each of the agent's tool calls."""

    faults: ToolFaults
    counts: Counter[str] = field(default_factory=Counter)
    """Faults drawn so far, by kind."""
    _rng: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.faults.seed)

    def draw(self) -> Fault | None:
        if self.faults.rate <= 0 or self._rng.random() >= self.faults.rate:
            return None
        kind = self._rng.choices(KINDS, weights=WEIGHTS, k=1)[0]
        delay = self._rng.uniform(*self.faults.slow_s) if kind == "slow" else 0.0
        self.counts[kind] += 1
        return Fault(kind, delay)


class Switchable(Protocol):
    faults: FaultSwitch | None


def switch_on(states: Mapping[str, Switchable], faults: ToolFaults | None) -> None:
    """Give each service's dispatcher (``Environment.states``) its own switch, seeded per service; None or a rate
    of 0 switches them off."""
    for name, state in states.items():
        state.faults = FaultSwitch(faults.derived(name)) if faults is not None and faults.active else None


def injected_faults(rows: Iterable[Any]) -> int:
    """How many audit rows (``AuditRow`` objects or their dicts) are injected faults' answers (429, 500)."""
    count = 0
    for row in rows:
        result = row.get("result") if isinstance(row, Mapping) else getattr(row, "result", None)
        if isinstance(result, Mapping) and INJECTED in result:
            count += 1
    return count


def parse_slow(value: str) -> tuple[float, float]:
    """``MIN,MAX`` seconds (or one number for both) as a slow call's wait; ValueError saying how to write it."""
    parts = [p.strip() for p in value.split(",")]
    try:
        low, high = (float(parts[0]), float(parts[-1])) if 1 <= len(parts) <= 2 else (-1.0, -1.0)
    except ValueError:
        low = high = -1.0
    if not 0.0 <= low <= high:
        raise ValueError(f"{value!r} is not MIN,MAX seconds with 0 <= MIN <= MAX; e.g. 2,4 (or 0 for no wait)")
    return (low, high)
