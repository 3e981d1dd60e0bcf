"""Advantage estimators for group-based RL, and the filtering done before them. Pure Python, no torch.

A *group* is the G rollouts of one task. Every estimator returns advantages in the same nesting as its input.

- GRPO: ``(r − group mean) / (group std + eps)``.
- Dr.GRPO: ``r − group mean`` (no std division); its loss sums token losses and divides by a constant
  length (:func:`constant_length_loss`), not by each completion's own length.
- GDPO: each reward component normalised within its group, the weighted sum normalised across the batch.
- GiGPO: an episode advantage ``R − group mean`` plus ``ω ×`` a step advantage, where steps that start from
  the same anchor state (the environment's state hash before the step) anywhere in the group form a step
  group comparing discounted returns; a step alone in its group gets 0.

Stds are population stds (divide by n). A group of identical rewards gets advantage 0 everywhere.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

EPS = 1e-6
OK, INCOMPLETE, INFRA_ERROR = "ok", "incomplete", "infra_error"
STATUSES = (OK, INCOMPLETE, INFRA_ERROR)

T = TypeVar("T")


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def std(values: Sequence[float]) -> float:
    if not values:
        return 0.0
    m = mean(values)
    return math.sqrt(sum((v - m) ** 2 for v in values) / len(values))


def normalise(values: Sequence[float], scale: bool = True, eps: float = EPS) -> list[float]:
    """``v − mean``, divided by ``std + eps`` when ``scale``."""
    m = mean(values)
    d = std(values) + eps if scale else 1.0
    return [(v - m) / d for v in values]


# --- GRPO and Dr.GRPO -------------------------------------------------------------------------------------


def grpo_advantages(groups: Sequence[Sequence[float]], eps: float = EPS) -> list[list[float]]:
    """GRPO: each reward minus its group's mean, over its group's std (+ eps)."""
    return [normalise(g, scale=True, eps=eps) for g in groups]


def dr_grpo_advantages(groups: Sequence[Sequence[float]]) -> list[list[float]]:
    """Dr.GRPO: each reward minus its group's mean; no std scaling (it biases towards easy/hard groups)."""
    return [normalise(g, scale=False) for g in groups]


def constant_length_loss(token_losses: Sequence[Sequence[float]], max_length: int) -> float:
    """Dr.GRPO's length-unbiased aggregation: the sum of every token's loss over ``len(batch) × max_length``,
    a constant, instead of averaging each completion over its own length (which favours long wrong answers)."""
    if max_length <= 0:
        raise ValueError("max_length must be positive")
    if not token_losses:
        return 0.0
    return sum(sum(seq) for seq in token_losses) / (len(token_losses) * max_length)


# --- GDPO ---------------------------------------------------------------------------------------------------


def gdpo_advantages(
    groups: Sequence[Sequence[Mapping[str, float]]],
    weights: Mapping[str, float] | None = None,
    eps: float = EPS,
) -> list[list[float]]:
    """GDPO: normalise each reward component within its group (GRPO-style), take the weighted sum per sample,
    then normalise those sums across the whole batch. Components missing from ``weights`` weigh 1."""
    components = sorted({k for g in groups for sample in g for k in sample})
    w = {k: 1.0 for k in components} | dict(weights or {})
    summed: list[list[float]] = []
    for group in groups:
        per_component = {k: normalise([s[k] for s in group], eps=eps) for k in components}
        summed.append([sum(w[k] * per_component[k][i] for k in components) for i in range(len(group))])
    flat = normalise([v for g in summed for v in g], eps=eps)
    out, start = [], 0
    for g in summed:
        out.append(flat[start : start + len(g)])
        start += len(g)
    return out


# --- GiGPO --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One agent step: the environment's state hash before it (the anchor) and the reward it earned."""

    anchor: str
    reward: float = 0.0


def discounted_returns(rewards: Sequence[float], gamma: float) -> list[float]:
    """``G_t = r_t + γ·r_{t+1} + γ²·r_{t+2} + …`` for every step t."""
    out = [0.0] * len(rewards)
    running = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        running = rewards[t] + gamma * running
        out[t] = running
    return out


def step_advantages(
    group: Sequence[Sequence[Step]], gamma: float = 0.95, scale: bool = False, eps: float = EPS
) -> list[list[float]]:
    """GiGPO's step-level advantages: steps of one task's rollouts sharing an anchor state form a step group;
    each step's discounted return minus its step group's mean (over std + eps when ``scale``). A step whose
    anchor occurs nowhere else gets 0."""
    returns = [discounted_returns([s.reward for s in traj], gamma) for traj in group]
    members: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for i, traj in enumerate(group):
        for t, step in enumerate(traj):
            members[step.anchor].append((i, t))
    out = [[0.0] * len(traj) for traj in group]
    for positions in members.values():
        if len(positions) < 2:
            continue
        advantages = normalise([returns[i][t] for i, t in positions], scale=scale, eps=eps)
        for (i, t), a in zip(positions, advantages, strict=True):
            out[i][t] = a
    return out


def gigpo_advantages(
    group: Sequence[Sequence[Step]],
    episode_returns: Sequence[float] | None = None,
    omega: float = 1.0,
    gamma: float = 0.95,
    scale: bool = False,
    eps: float = EPS,
) -> list[list[float]]:
    """GiGPO for one task's group: per step, ``(R_i − mean R) + ω × step advantage``. ``R_i`` defaults to the
    sum of trajectory i's step rewards (the grader's reward on the last step, for our episodes)."""
    if episode_returns is None:
        episode_returns = [sum(s.reward for s in traj) for traj in group]
    if len(episode_returns) != len(group):
        raise ValueError("one episode return per trajectory")
    episode = normalise(list(episode_returns), scale=scale, eps=eps)
    steps = step_advantages(group, gamma=gamma, scale=scale, eps=eps)
    return [[episode[i] + omega * a for a in steps[i]] for i in range(len(group))]


# --- dropping samples and rejecting groups ----------------------------------------------------------------


@dataclass
class FilterResult(Generic[T]):
    kept: list[list[T]]  # groups fit for advantages, samples without a reward removed
    kept_index: list[int]  # the input position of each kept group
    rejected: list[int]  # input positions of groups to retry (an incomplete or infra-failed rollout)
    dropped: int = 0  # samples removed for having no reward
    reasons: dict[str, int] = field(default_factory=dict)  # rejected groups by the status that rejected them


def _attr(name: str) -> Callable[[Any], Any]:
    def get(sample: Any) -> Any:
        return sample.get(name) if isinstance(sample, Mapping) else getattr(sample, name)

    return get


_REWARD, _STATUS = _attr("reward"), _attr("status")


def filter_groups(
    groups: Sequence[Sequence[T]],
    reward_of: Callable[[T], Any] = _REWARD,
    status_of: Callable[[T], str] = _STATUS,
) -> FilterResult[T]:
    """Before advantages: reject (for retry) every group holding a rollout whose status is not ``ok`` — an
    incomplete episode or an infrastructure failure says nothing about the policy and would skew the group's
    baseline — and drop, from the groups kept, each sample whose reward is ``None``."""
    result: FilterResult[T] = FilterResult(kept=[], kept_index=[], rejected=[])
    for index, group in enumerate(groups):
        bad = [status_of(s) for s in group if status_of(s) != OK]
        for status in bad:
            if status not in STATUSES:
                raise ValueError(f"unknown rollout status {status!r}; expected one of {', '.join(STATUSES)}")
        if bad:
            result.rejected.append(index)
            reason = INFRA_ERROR if INFRA_ERROR in bad else bad[0]
            result.reasons[reason] = result.reasons.get(reason, 0) + 1
            continue
        with_reward = [s for s in group if reward_of(s) is not None]
        result.dropped += len(group) - len(with_reward)
        result.kept.append(with_reward)
        result.kept_index.append(index)
    return result
