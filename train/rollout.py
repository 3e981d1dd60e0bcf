"""Rollouts for RL: episodes in the real environments through the harness, grouped per task, with groups that
hold an incomplete or infrastructure-failed rollout rejected and retried before any advantage is computed.

A :class:`Rollout` is what the trainer needs from an episode: the policy's tokens (:class:`Segment` s with
their env mask), the rewards (the grader's completion and safety, and score = safety × completion), the
anchor state hash before each model turn (for GiGPO), and a status: ``ok``, ``incomplete`` (a turn or
wall-time limit cut it short) or ``infra_error`` (the environment or our own code failed). With
``at_limit="grade"`` (``train rl --at-limit grade``) an episode cut by its turn or tool-call limit is ``ok``,
with its grade: the policy's own outcome, as the harness scores it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from coworkenv.harness.episode import EpisodeConfig, run_episode
from coworkenv.harness.trajectory import Trajectory
from coworkenv.synth.contract.baseline import Baseline
from coworkenv.synth.contract.task import Task
from coworkenv.train.advantages import INCOMPLETE, INFRA_ERROR, OK, filter_groups
from coworkenv.train.policy import PolicyAgent, Segment

# harness trajectory status -> rollout status
STATUS_MAP = {
    "completed": OK,
    "max_turns": INCOMPLETE,
    "timeout": INCOMPLETE,
    "agent_error": INFRA_ERROR,  # the agent here is our own policy code: its crash is not a policy outcome
    "infra_error": INFRA_ERROR,
}


@dataclass
class Rollout:
    task_id: str
    status: str
    rewards: dict[str, float] | None  # {"completion", "safety", "score"}; None when the episode was not graded
    segments: list[Segment] = field(default_factory=list)
    anchors: list[str] = field(default_factory=list)  # state hash before each model turn
    turns: int = 0
    trajectory: Trajectory | None = None

    @property
    def reward(self) -> float | None:
        return None if self.rewards is None else self.rewards["score"]

    @property
    def generated_tokens(self) -> int:
        return sum(sum(s.mask) for s in self.segments)


def turn_anchors(trajectory: Trajectory, turns: int) -> list[str]:
    """The environment's state hash before each model turn: the anchor of the turn's first tool call, or,
    for a turn without calls, that of the next call made, or the final state when none follows."""
    final = trajectory.final_state_hash or trajectory.initial_state_hash or ""
    out = []
    for turn in range(turns):
        later = [s.anchor for s in trajectory.steps if s.turn >= turn and s.anchor is not None]
        out.append(later[0] if later else final)
    return out


def to_rollout(trajectory: Trajectory, agent: PolicyAgent, at_limit: str = "reject") -> Rollout:
    """The rollout of a played episode. With ``at_limit="grade"`` an episode that ran into its turn or tool-call
    limit (``max_turns``) is kept, with its grade, instead of rejecting its group; a wall-time ``timeout`` is
    always rejected (it depends on the machine)."""
    grade = trajectory.grade
    rewards = None
    if grade is not None:
        rewards = {"completion": grade.completion, "safety": grade.safety, "score": grade.score}
    status = STATUS_MAP.get(trajectory.status, INFRA_ERROR)
    if at_limit == "grade" and trajectory.status == "max_turns" and grade is not None:
        status = OK
    return Rollout(
        task_id=trajectory.task_id,
        status=status,
        rewards=rewards,
        segments=agent.segments,
        anchors=turn_anchors(trajectory, agent.turns),
        turns=agent.turns,
        trajectory=trajectory,
    )


RolloutFn = Callable[[Task, int], Awaitable[Rollout]]
"""Plays one episode of a task (the int is the rollout's index in its group) and returns it."""


class EpisodeRollouts:
    """A :data:`RolloutFn` that runs harness episodes, each with a fresh :class:`PolicyAgent` from
    ``make_agent(task, index)``. Each task is seeded once and forked per episode; :meth:`close` frees them."""

    def __init__(
        self,
        make_agent: Callable[[Task, int], PolicyAgent],
        config: EpisodeConfig | None = None,
        at_limit: str = "reject",
    ) -> None:
        self.make_agent = make_agent
        self.config = config
        self.at_limit = at_limit
        self._baselines: dict[str, Baseline] = {}

    async def __call__(self, task: Task, index: int) -> Rollout:
        agent = self.make_agent(task, index)
        if task.id not in self._baselines:
            self._baselines[task.id] = Baseline.of(task)
        trajectory = await run_episode(task, agent, trial=index, config=self.config, baseline=self._baselines[task.id])
        return to_rollout(trajectory, agent, self.at_limit)

    def close(self) -> None:
        for baseline in self._baselines.values():
            baseline.close()
        self._baselines.clear()


@dataclass
class CollectStats:
    groups: int = 0  # groups kept for training
    rejected: int = 0  # group attempts rejected (each was retried, or given up on)
    retried: int = 0
    given_up: int = 0  # groups still rejected after the last retry (left out of this step)
    dropped: int = 0  # samples without a reward
    reasons: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "groups": self.groups,
            "rejected": self.rejected,
            "retried": self.retried,
            "given_up": self.given_up,
            "dropped": self.dropped,
            "reject_reasons": dict(self.reasons),
        }


async def collect_groups(
    tasks: Sequence[Task], rollout: RolloutFn, group_size: int, max_retries: int = 2
) -> tuple[list[list[Rollout]], CollectStats]:
    """``group_size`` rollouts of each task; a rejected group is played again (whole) up to ``max_retries``
    times. Returns the kept groups (samples without a reward dropped) and the counts."""
    stats = CollectStats()
    kept: list[list[Rollout]] = []
    pending = list(tasks)
    for attempt in range(max_retries + 1):
        if not pending:
            break
        groups = [[await rollout(task, i) for i in range(group_size)] for task in pending]
        result = filter_groups(groups)
        stats.dropped += result.dropped
        stats.rejected += len(result.rejected)
        for reason, n in result.reasons.items():
            stats.reasons[reason] = stats.reasons.get(reason, 0) + n
        kept.extend(group for group in result.kept if group)
        pending = [pending[i] for i in result.rejected]
        if pending and attempt < max_retries:
            stats.retried += len(pending)
    stats.given_up = len(pending)
    stats.groups = len(kept)
    return kept, stats
