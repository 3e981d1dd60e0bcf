"""Replay episodes/s: the local backend vs Ray workers on this machine (`coworkenv run --backend ray`).

    python bench/bench_ray.py [--trials 20] [--cpus N]

Both runs play the example tasks with the replay agent, the same concurrency, into fresh folders; Ray's
start-up is timed apart. Ray pays a task round trip and a trajectory (de)serialisation per episode, and each
worker seeds its own pristine environment per task; it wins when episodes are slow (model calls, stdio servers)
and machines are many, not for millisecond replay episodes on one machine. On a cluster, throughput ≈
workers × the per-worker rate printed here (episodes are independent; the driver's one writer does ~10k lines/s).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import anyio

from coworkenv.harness.agents.registry import make_agent
from coworkenv.harness.backend_ray import RayBackend
from coworkenv.harness.run import RunOptions, load_task_set, run_tasks

EXAMPLES = Path(__file__).parents[1] / "synth" / "examples"


def play(out: Path, trials: int, concurrency: int, backend: RayBackend | None) -> float:
    tasks = load_task_set([EXAMPLES])
    options = RunOptions(trials=trials, concurrency=concurrency, progress=False)
    t0 = time.perf_counter()
    report = anyio.run(
        lambda: run_tasks(tasks, make_agent("replay"), out, agent_spec="replay", options=options, backend=backend)
    )
    wall = time.perf_counter() - t0
    assert report.finished == len(tasks) * trials, report.line()
    return report.finished / wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--cpus", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    concurrency = 2 * args.cpus
    import ray

    with tempfile.TemporaryDirectory() as tmp:
        local = play(Path(tmp) / "local", args.trials, concurrency, None)
        t0 = time.perf_counter()
        ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False, configure_logging=False)
        startup = time.perf_counter() - t0
        backend = RayBackend("replay")
        play(Path(tmp) / "warm", 1, concurrency, backend)  # workers import coworkenv once
        remote = play(Path(tmp) / "ray", args.trials, concurrency, backend)
        ray.shutdown()
    print(f"episodes: {len(load_task_set([EXAMPLES])) * args.trials}, concurrency {concurrency}, Ray CPUs {args.cpus}")
    print(f"local backend:   {local:8.1f} episodes/s")
    print(
        f"ray backend:     {remote:8.1f} episodes/s  ({remote / local:.2f}x local; {remote / args.cpus:.1f}/s per worker)"
    )
    print(f"ray start-up:    {startup:8.1f} s (once per run)")


if __name__ == "__main__":
    main()
