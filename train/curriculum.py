"""The RL run's curriculum: train on the tasks whose rollouts' rewards differ.

A GRPO group whose rollouts all earn the same reward has no advantage to follow: the step spends its rollouts and
learns nothing from that task. Before training, ``train rl --curriculum N`` has the policy play each task ``N``
times at the run's temperature (the harness's ``hf:`` agent, prompted as the trainer prompts: the same template
and tool list), and trains on the tasks where the probes' rewards differ. Tasks the policy passes every time, or
fails every time with the same score, are set aside and counted; a task whose probes all failed for the
infrastructure's sake is played again (up to N times more) and, if it never plays, counted apart (never as the
policy's failure). The probes are seeded (``--seed``).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

import anyio

from coworkenv.synth.contract.task import Task
from coworkenv.train.options import OptionsError, RLOptions, resolve_template


@dataclasses.dataclass(frozen=True)
class Probed:
    """One task's probes: the reward of each probe the harness scored (infrastructure failures left out)."""

    task_id: str
    rewards: tuple[float, ...]
    infra_errors: int = 0

    @property
    def informative(self) -> bool:
        """The rewards differ: a group of this task has an advantage to learn from."""
        return len(self.rewards) >= 2 and max(self.rewards) - min(self.rewards) > 1e-9

    @property
    def kind(self) -> str:
        if len(self.rewards) < 2:
            return "unplayable"
        if self.informative:
            return "differ"
        return "all pass" if min(self.rewards) >= 1.0 - 1e-9 else "all the same"


@dataclasses.dataclass
class Curriculum:
    probes: int
    probed: list[Probed]
    kept: list[Task]

    def counts(self) -> dict[str, int]:
        out = {"differ": 0, "all pass": 0, "all the same": 0, "unplayable": 0}
        for p in self.probed:
            out[p.kind] += 1
        return out

    def line(self) -> str:
        c = self.counts()
        mean = [sum(p.rewards) / len(p.rewards) for p in self.probed if p.rewards]
        reward = f"; mean probe reward {sum(mean) / len(mean):.3f}" if mean else ""
        return (
            f"curriculum: {c['differ']} of {len(self.probed)} tasks have rewards that differ over {self.probes} "
            f"probes (set aside: {c['all pass']} passed every probe, {c['all the same']} scored the same every "
            f"time, {c['unplayable']} unplayable for the infrastructure){reward}"
        )

    def record(self) -> dict[str, Any]:
        return {
            "probes": self.probes,
            "counts": self.counts(),
            "kept": [t.id for t in self.kept],
            "rewards": {p.task_id: list(p.rewards) for p in self.probed},
        }


def probe_tasks(options: RLOptions, tasks: Sequence[Task], agent: Any | None = None) -> Curriculum:
    """Play each task ``options.curriculum`` times with the policy (or ``agent``: tests hand one in) and keep
    those whose rewards differ."""
    from coworkenv.harness.agents.hf_agent import HFAgent
    from coworkenv.harness.episode import EpisodeConfig, run_episode

    probes = options.curriculum
    if agent is None:
        import torch

        torch.manual_seed(options.seed)
        agent = HFAgent(
            options.adapter or options.model,
            template=resolve_template(options),
            tools=options.tool_names,
            max_new_tokens=options.max_new_tokens,
            temperature=options.temperature,
        )
        agent.check_ready()
    config = EpisodeConfig(max_turns=options.max_turns, max_tool_calls=options.max_tool_calls)
    probed: list[Probed] = []
    for task in tasks:
        rewards: list[float] = []
        infra = 0
        while len(rewards) < probes and infra < probes:  # an infrastructure fault is played again, not scored
            run = anyio.run(functools.partial(run_episode, task, agent, trial=len(rewards) + infra, config=config))
            if run.scored:
                rewards.append(run.score)
            else:
                infra += 1
        probed.append(Probed(task.id, tuple(rewards), infra))
    kept = [t for t, p in zip(tasks, probed, strict=True) if p.informative]
    return Curriculum(probes, probed, kept)


def apply_curriculum(options: RLOptions, tasks: list[Task], agent: Any | None = None) -> tuple[list[Task], Curriculum]:
    """The tasks to train on under ``--curriculum`` (those whose probes' rewards differ) and what the probes found;
    none left is one clear error."""
    curriculum = probe_tasks(options, tasks, agent)
    if not curriculum.kept:
        c = curriculum.counts()
        raise OptionsError(
            f"--curriculum {options.curriculum}: no task's rewards differ over its probes ({c['all pass']} passed "
            f"every probe, {c['all the same']} scored the same every time, {c['unplayable']} unplayable): give more "
            "or other tasks, more probes, a higher --temperature, or --curriculum 0 to train on all of them"
        )
    return curriculum.kept, curriculum
