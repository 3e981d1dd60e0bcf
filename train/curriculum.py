"""The RL run's curriculum: train on the tasks whose rollouts' rewards differ.

A GRPO group whose rollouts all earn the same reward has no advantage to follow: the step spends its rollouts and
learns nothing from that task. Before training, ``train rl --curriculum N`` has the policy play each task ``N``
times at the run's temperature (the harness's ``hf:`` agent, prompted as the trainer prompts: the same template
and tool list), and trains on the tasks where the probes' rewards differ. Tasks the policy passes every time, or
fails every time with the same score, are set aside and counted; a task whose probes all failed for the
infrastructure's sake is played again (up to N times more) and, if it never plays, counted apart (never as the
policy's failure). Each task's probes are seeded by ``--seed`` and the task's id, so a task probes alike whatever
tasks come before it.

Probing is the slow part (hundreds of tasks × N episodes), so each task's rewards are kept in a cache, written after
every task: a second run of the same policy (another algorithm, another seed of the trainer, more steps) or a run
stopped half-way and started again plays only the tasks not yet probed. A cache file is one policy's: its key holds
the weights' digest (every ``*.safetensors``/``*.bin`` of the model and adapter folders), the template, tools,
temperature, token and turn limits, probe count, seed and the coworkenv, torch and transformers releases; a task's
entry holds the digest of the task itself, so an
edited task is probed again. The cache is ``--probe-cache DIR``, else ``$COWORKENV_PROBE_CACHE``, else
``$XDG_CACHE_HOME/coworkenv/probes`` (``~/.cache/...``); ``off`` turns it off. A policy whose weights cannot be read
(a hub id not downloaded) is probed without one; a cache that cannot be read or written only costs the time.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio

from coworkenv.servers.kit.atomic import write_atomic
from coworkenv.synth.contract.task import Task
from coworkenv.train.options import OptionsError, RLOptions, resolve_template

WEIGHT_FILES = ("*.safetensors", "*.bin")


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
    cached: int = 0  # tasks whose probes came from the cache
    cache: str | None = None  # the cache file, None when off

    def counts(self) -> dict[str, int]:
        out = {"differ": 0, "all pass": 0, "all the same": 0, "unplayable": 0}
        for p in self.probed:
            out[p.kind] += 1
        return out

    def line(self) -> str:
        c = self.counts()
        mean = [sum(p.rewards) / len(p.rewards) for p in self.probed if p.rewards]
        reward = f"; mean probe reward {sum(mean) / len(mean):.3f}" if mean else ""
        if self.cache:
            reward += f"; {self.cached} of {len(self.probed)} tasks' probes from {self.cache}"
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
            "cached": self.cached,
            "cache": self.cache,
        }


def _weights_folder(name: str) -> Path | None:
    """The local folder of a model or adapter: the path itself, or a hub id's downloaded snapshot; None when the
    weights are not on this machine (nothing is downloaded here)."""
    path = Path(name).expanduser()
    if path.is_dir():
        return path
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(name, local_files_only=True))
    except Exception:  # not a hub id, or not downloaded: the policy is probed without a cache
        return None


def _digest_weights(folder: Path) -> str | None:
    files = sorted(f for pattern in WEIGHT_FILES for f in folder.glob(pattern) if f.is_file())
    if not files:
        return None
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0")
        with path.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    return digest.hexdigest()


def _versions() -> dict[str, str | None]:
    """The packages that play and grade a probe: a new release may prompt, sample or grade otherwise."""
    from importlib.metadata import PackageNotFoundError, version

    out: dict[str, str | None] = {}
    for dist in ("coworkenv", "torch", "transformers"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = None
    return out


def policy_key(options: RLOptions) -> dict[str, Any] | None:
    """What a task's probes depend on besides the task: the policy's weights, how it is prompted and sampled, and the
    releases that play and grade it; None when the weights cannot be read (no cache then)."""
    weights = {}
    for role, name in (("model", options.model), ("adapter", options.adapter)):
        if not name:
            continue
        folder = _weights_folder(name)
        digest = _digest_weights(folder) if folder else None
        if digest is None:
            return None
        weights[role] = digest
    return {
        "weights": weights,
        "template": resolve_template(options),
        "tools": options.tool_names,
        "temperature": options.temperature,
        "max_new_tokens": options.max_new_tokens,
        "max_turns": options.max_turns,
        "max_tool_calls": options.max_tool_calls,
        "probes": options.curriculum,
        "seed": options.seed,
        "versions": _versions(),
    }


def cache_folder(options: RLOptions) -> Path | None:
    """``--probe-cache``, else ``$COWORKENV_PROBE_CACHE``, else ``$XDG_CACHE_HOME/coworkenv/probes``; None: off."""
    chosen = options.probe_cache or os.environ.get("COWORKENV_PROBE_CACHE")
    if chosen:
        return None if chosen == "off" else Path(chosen).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "coworkenv" / "probes"


def task_digest(task: Task) -> str:
    return hashlib.sha256(task.model_dump_json().encode()).hexdigest()


class ProbeCache:
    """One policy's probes, by task id, in ``<folder>/<policy digest>.json``; unreadable or another shape is an empty
    cache, and a write that fails is said once and the run goes on without one."""

    def __init__(self, folder: Path, key: dict[str, Any]) -> None:
        name = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:24]
        self.path, self.key = folder / f"{name}.json", key
        self.entries: dict[str, dict[str, Any]] = {}
        self.writable = True
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if isinstance(data, dict) and data.get("policy") == key and isinstance(data.get("tasks"), dict):
            self.entries = {k: v for k, v in data["tasks"].items() if isinstance(v, dict)}

    def get(self, task: Task, probes: int) -> tuple[float, ...] | None:
        entry = self.entries.get(task.id)
        if entry is None or entry.get("task") != task_digest(task):
            return None
        rewards = entry.get("rewards")
        if not isinstance(rewards, list) or len(rewards) != probes:
            return None
        if not all(isinstance(r, int | float) and not isinstance(r, bool) for r in rewards):
            return None
        return tuple(float(r) for r in rewards)

    def put(self, task: Task, rewards: tuple[float, ...]) -> None:
        self.entries[task.id] = {"task": task_digest(task), "rewards": list(rewards)}
        if not self.writable:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.path, json.dumps({"policy": self.key, "tasks": self.entries}), sync_folder=False)
        except OSError as exc:
            self.writable = False
            print(f"curriculum: the probe cache {self.path} cannot be written ({exc}); probing without it",
                  file=sys.stderr, flush=True)  # fmt: skip


def open_cache(options: RLOptions) -> ProbeCache | None:
    folder = cache_folder(options)
    key = policy_key(options) if folder else None
    return ProbeCache(folder, key) if folder and key else None


def task_seed(seed: int, task: Task) -> int:
    """The probes' seed for one task: the run's seed and the task's id, whatever tasks come before it."""
    return int.from_bytes(hashlib.sha256(f"{seed}\0{task.id}".encode()).digest()[:4], "big")


def probe_tasks(options: RLOptions, tasks: Sequence[Task], agent: Any | None = None) -> Curriculum:
    """Play each task ``options.curriculum`` times with the policy (or ``agent``: tests hand one in) and keep
    those whose rewards differ."""
    from coworkenv.harness.agents.hf_agent import HFAgent
    from coworkenv.harness.episode import EpisodeConfig, run_episode

    probes = options.curriculum
    cache = open_cache(options)
    try:
        import torch
    except ImportError:  # an agent handed in that needs no torch
        torch = None  # type: ignore[assignment]
    if agent is None:
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
    cached = 0
    for task in tasks:
        known = cache.get(task, probes) if cache else None
        if known is not None:
            probed.append(Probed(task.id, known))
            cached += 1
            continue
        if torch is not None:
            torch.manual_seed(task_seed(options.seed, task))
        rewards: list[float] = []
        infra = 0
        while len(rewards) < probes and infra < probes:  # an infrastructure fault is played again, not scored
            run = anyio.run(functools.partial(run_episode, task, agent, trial=len(rewards) + infra, config=config))
            if run.scored:
                rewards.append(run.score)
            else:
                infra += 1
        probed.append(Probed(task.id, tuple(rewards), infra))
        if cache and len(rewards) == probes:  # a task the infrastructure cut short is probed again next time
            cache.put(task, tuple(rewards))
    kept = [t for t, p in zip(tasks, probed, strict=True) if p.informative]
    return Curriculum(probes, probed, kept, cached, str(cache.path) if cache else None)


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
