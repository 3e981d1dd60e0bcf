"""Tasks' baselines kept for reuse: each task seeded once (:class:`~coworkenv.synth.contract.baseline.Baseline`), its
pristine environment forked for every episode, rollout or session that plays it, the least recently used closed past
a cap. Shared by the OpenEnv server (:mod:`coworkenv.harness.openenv`) and the trl environments
(:mod:`coworkenv.train.trl_backends`, one cache per trainer: :class:`~coworkenv.train.trl_backends.TaskBaselines`).

A fork is a copy of its own, and grading reads the baseline's initial state and expected changes, not its pristine
environment: closing an evicted baseline never disturbs the episodes forked from it."""

from __future__ import annotations

from collections import OrderedDict

from coworkenv.synth.contract.baseline import Baseline
from coworkenv.synth.contract.task import Task

BASELINE_CACHE = 256


class BaselineCache:
    """Baselines by a key naming the task (its id, or a hash of its content), built on first use."""

    def __init__(self, cap: int = BASELINE_CACHE) -> None:
        self.cap = cap
        self._held: OrderedDict[str, Baseline] = OrderedDict()

    def get(self, key: str, task: Task) -> Baseline:
        """The task's baseline (seeded now if it is not held); the oldest are closed past the cap."""
        found = self._held.get(key)
        if found is None:
            found = self._held[key] = Baseline.of(task)
            while len(self._held) > self.cap:
                self._held.popitem(last=False)[1].close()
        self._held.move_to_end(key)
        return found

    def __len__(self) -> int:
        return len(self._held)

    def close(self) -> None:
        while self._held:
            self._held.popitem()[1].close()
