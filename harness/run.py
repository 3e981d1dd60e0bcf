"""Runs: every (task, trial) of a task set with one agent, concurrently, durably, resumably.

- Each task is seeded once: its baseline (:class:`~coworkenv.synth.contract.baseline.Baseline`) holds the pristine
  environment forked for each of its episodes and is what the grader scores them against.
- At most ``concurrency`` episodes at once (anyio); a progress bar on stderr.
- One writer appends each finished trajectory to ``RUNDIR/trajectories.jsonl`` (write, flush, fsync).
- A run started again on the same folder reads what is there (a torn last line from a crash is dropped)
  and does only the (task, trial) pairs that have no record yet.
- An infrastructure failure (``InfrastructureError``: API down, rate limited after the backend's own
  retries, the services failing) is retried from a fresh environment, with backoff, a bounded number of
  times; if it still fails the trial is recorded as ``infra_error`` and kept out of the scores. A failure
  that retrying cannot fix (no API key, unknown model) stops the run with its message.
"""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import ObjectReceiveStream

from coworkenv.harness.episode import Agent, EpisodeConfig, UserFactory, run_episode, task_baseline
from coworkenv.harness.faults import FaultInjector
from coworkenv.harness.progress import Progress
from coworkenv.harness.trajectory import FILENAME, Trajectory, TrajectoryWriter, read_lines
from coworkenv.servers.kit.atomic import write_atomic
from coworkenv.synth.contract.baseline import Baseline
from coworkenv.synth.contract.task import Task
from coworkenv.synth.contract.taskfile import load_tasks, task_files
from coworkenv.synth.providers import scrub

RUN_FILE = "run.json"


class RunError(RuntimeError):
    """A run that cannot start or go on; the message says what to do."""


@dataclass
class RunOptions:
    trials: int = 1
    concurrency: int = 4
    episode: EpisodeConfig = field(default_factory=EpisodeConfig)
    retries: int = 3
    backoff_s: float = 2.0
    max_backoff_s: float = 60.0
    retry_infra: bool = False
    """Also redo the pairs whose record is an ``infra_error`` (the new record replaces the old when read)."""
    progress: bool = True


@dataclass
class RunReport:
    out: Path
    total: int
    skipped: int
    finished: int
    statuses: dict[str, int]
    wall_s: float
    episodes_per_s: float

    def line(self) -> str:
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(self.statuses.items()))
        return (
            f"{self.finished} trajectories in {self.wall_s:.1f} s ({self.episodes_per_s:.1f}/s); "
            f"{self.skipped} already done; {kinds or 'nothing to do'} → {self.out / FILENAME}"
        )


def load_task_set(paths: Iterable[str | Path]) -> list[Task]:
    """Tasks from files and folders (recursively); ids must be unique."""
    files = task_files(paths)
    if not files:
        raise RunError("no task files found (looked for .json, .yaml, .yml and .jsonl)")
    tasks = [t for f in files for t in load_tasks(f)]
    seen: Counter[str] = Counter(t.id for t in tasks)
    dupes = sorted(i for i, n in seen.items() if n > 1)
    if dupes:
        raise RunError(f"task ids must be unique in a run; repeated: {', '.join(dupes)}")
    return tasks


def _check_meta(out: Path, meta: dict[str, Any]) -> None:
    path = out / RUN_FILE
    if path.exists():
        old = json.loads(path.read_text(encoding="utf-8"))
        if old.get("agent") != meta["agent"]:
            raise RunError(
                f"{out} holds a run of agent {old.get('agent')!r}, not {meta['agent']!r}; use another --out folder"
            )
        meta = {**old, "trials": max(int(old.get("trials", 0)), meta["trials"]), "resumed_at": meta["created_at"]}
    write_atomic(path, json.dumps(meta, indent=2) + "\n")


def _backoff(attempt: int, options: RunOptions) -> float:
    return random.uniform(0, min(options.max_backoff_s, options.backoff_s * 2 ** (attempt - 1)))


@dataclass
class _Pristine:
    """A task's baseline (:class:`~coworkenv.synth.contract.baseline.Baseline`: the task seeded once, the
    environment its episodes fork, and what they are graded against), shared by its episodes and closed after the
    last one."""

    task: Task
    left: int
    baseline: Baseline | None = None
    state_hash: str | None = None  # the pristine state's hash: every fork starts from it

    def get(self) -> Baseline:
        if self.baseline is None:
            self.baseline = task_baseline(self.task)
            self.state_hash = self.baseline.pristine.state_hash()
        return self.baseline

    def get_or_none(self) -> Baseline | None:
        """The baseline, or None when it cannot be built (the episode then tries and records why)."""
        try:
            return self.get()
        except Exception:
            return None

    def release(self) -> None:
        self.left -= 1
        if self.left == 0 and self.baseline is not None:
            self.baseline.close()
            self.baseline = None


class Runner:
    def __init__(
        self,
        tasks: Sequence[Task],
        agent: Agent,
        out: str | Path,
        *,
        agent_spec: str | None = None,
        options: RunOptions | None = None,
        faults: FaultInjector | None = None,
        user: UserFactory | None = None,
    ) -> None:
        self.tasks = list(tasks)
        self.agent = agent
        self.agent_spec = scrub(agent_spec or agent.name)
        """The spec as recorded (run.json, trajectories): credentials in it are redacted."""
        self.out = Path(out)
        self.options = options or RunOptions()
        self.faults = faults
        self.user = user
        self._abort: str | None = None
        self.task_sources: list[str] = []
        self.backend: Any = None
        """Set to a :class:`~coworkenv.harness.backend_ray.RayBackend` to play the episodes on Ray workers."""

    def pending(self, done: set[tuple[str, int]]) -> list[tuple[Task, int]]:
        return [
            (task, trial) for task in self.tasks for trial in range(self.options.trials) if (task.id, trial) not in done
        ]

    async def _trial(self, task: Task, trial: int, pristine: _Pristine) -> Trajectory | None:
        if self.backend is not None:
            return await self.backend.trial(self, task, trial)
        errors: list[str] = []
        faults = 0
        attempt = 0
        while True:
            attempt += 1
            baseline = pristine.get_or_none()
            record = await run_episode(
                task,
                self.agent,
                agent_spec=self.agent_spec,
                trial=trial,
                config=self.options.episode,
                baseline=baseline,
                pristine_hash=pristine.state_hash if baseline is not None else None,
                user=self.user,
                faults=self.faults,
            )
            faults += record.faults_injected
            if record.status != "infra_error":
                break
            if not record.retryable:
                self._abort = record.error or "the agent's provider refused the run"
                return None
            if attempt > self.options.retries:
                break
            errors.append(record.error or "infrastructure error")
            await anyio.sleep(_backoff(attempt, self.options))
        record.attempts, record.attempt_errors, record.faults_injected = attempt, errors, faults
        return record

    async def run(self) -> RunReport:
        self.out.mkdir(parents=True, exist_ok=True)
        created = datetime.now(UTC).isoformat(timespec="seconds")
        meta = {
            "agent": self.agent_spec,
            "trials": self.options.trials,
            "tasks": len(self.tasks),
            "created_at": created,
            "episode": asdict(self.options.episode),
            "inject_errors": self.faults.rate if self.faults else 0.0,
            "inject_latency_s": self.faults.latency_s if self.faults else 0.0,
        }
        if self.task_sources:
            meta["task_sources"] = self.task_sources
        _check_meta(self.out, meta)
        existing, _ = read_lines(self.out / FILENAME)
        done = {r.key for r in existing if not (self.options.retry_infra and r.status == "infra_error")}
        work = self.pending(done)
        skipped = len(self.tasks) * self.options.trials - len(work)
        per_task = Counter(task.id for task, _ in work)
        pristine = {t.id: _Pristine(t, per_task[t.id]) for t in self.tasks if per_task[t.id]}
        progress = Progress(len(work), skipped=skipped, enabled=self.options.progress)
        statuses: Counter[str] = Counter()
        t0 = anyio.current_time()
        send, receive = anyio.create_memory_object_stream[Trajectory](max(self.options.concurrency, 1))
        items = iter(work)

        async def worker() -> None:
            for task, trial in items:
                if self._abort:
                    return
                try:
                    record = await self._trial(task, trial, pristine[task.id])
                finally:
                    pristine[task.id].release()
                if record is None:  # not retryable: stop taking work, let the others finish
                    return
                await send.send(record)

        async def workers() -> None:
            async with send, anyio.create_task_group() as inner:
                for _ in range(max(1, min(self.options.concurrency, len(work)))):
                    inner.start_soon(worker)

        try:
            with TrajectoryWriter(self.out) as writer:
                if writer.dropped:
                    print(f"warning: {writer.dropped}", file=sys.stderr)
                async with anyio.create_task_group() as tg:
                    tg.start_soon(workers)
                    await _write_all(receive, writer, progress, statuses)
        finally:
            progress.close()
            for p in pristine.values():
                if p.baseline is not None:
                    p.baseline.close()
        if self._abort:
            raise RunError(
                f"stopped: {self._abort}. {sum(statuses.values())} trajectories were written; fix the cause "
                f"and run the same command again to resume."
            )
        wall = anyio.current_time() - t0
        finished = sum(statuses.values())
        return RunReport(self.out, len(work), skipped, finished, dict(statuses), wall, finished / max(wall, 1e-9))


async def _write_all(
    receive: ObjectReceiveStream[Trajectory], writer: TrajectoryWriter, progress: Progress, statuses: Counter[str]
) -> None:
    """The one writer: each finished trajectory is on disk (fsync) before the next is taken."""
    async with receive:
        async for record in receive:
            await anyio.to_thread.run_sync(writer.write, record)
            statuses[record.status] += 1
            progress.update(record.status, record.passed)


async def run_tasks(
    tasks: Sequence[Task],
    agent: Agent,
    out: str | Path,
    *,
    agent_spec: str | None = None,
    options: RunOptions | None = None,
    faults: FaultInjector | None = None,
    user: UserFactory | None = None,
    backend: Any = None,
    task_sources: Sequence[str | Path] = (),
) -> RunReport:
    """Run every (task, trial) not yet in ``out`` and append their trajectories; see the module doc.
    ``backend`` (e.g. :class:`~coworkenv.harness.backend_ray.RayBackend`) plays the episodes elsewhere;
    ``task_sources`` (the task files and folders) are recorded in run.json for later exports."""
    runner = Runner(tasks, agent, out, agent_spec=agent_spec, options=options, faults=faults, user=user)
    runner.backend = backend
    runner.task_sources = [str(Path(s).resolve()) for s in task_sources]
    return await runner.run()
