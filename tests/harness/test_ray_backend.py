"""`run --backend ray`: the same trajectories as the local backend, the same results file, and resume."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from coworkenv.harness.backend_ray import RayBackend
from coworkenv.harness.run import RunOptions, load_task_set, run_tasks
from coworkenv.harness.trajectory import read_trajectories

ray = pytest.importorskip("ray")

EXAMPLES = Path(__file__).parents[2] / "synth" / "examples"


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        yield
    finally:
        ray.shutdown()


def run(out: Path, backend: Any = None, trials: int = 2) -> Any:
    from coworkenv.harness.agents.registry import make_agent

    tasks = load_task_set([EXAMPLES])

    async def go() -> Any:
        with anyio.fail_after(120):
            options = RunOptions(trials=trials, concurrency=4, progress=False)
            return await run_tasks(
                tasks, make_agent("replay"), out, agent_spec="replay", options=options, backend=backend
            )

    return anyio.run(go)


def essence(folder: Path) -> dict[tuple[str, int], Any]:
    return {
        (r.task_id, r.trial): (
            r.status,
            r.score,
            r.agent,
            r.final_state_hash,
            [(s.name, s.arguments, s.anchor) for s in r.steps],
            [(m.role, m.content) for m in r.messages],
        )
        for r in read_trajectories(folder / "trajectories.jsonl")
    }


@pytest.mark.slow
def test_ray_workers_write_the_same_trajectories_as_the_local_backend_and_resume_skips_them(
    local_ray: None, tmp_path: Path
) -> None:
    local = run(tmp_path / "local")
    remote = run(tmp_path / "ray", RayBackend("replay"))
    assert remote.finished == local.finished == 2 * len(load_task_set([EXAMPLES]))
    assert remote.statuses == local.statuses == {"completed": remote.finished}
    assert essence(tmp_path / "ray") == essence(tmp_path / "local")
    again = run(tmp_path / "ray", RayBackend("replay"), trials=3)  # resume: only the third trial is played
    assert again.skipped == remote.finished and again.finished == len(load_task_set([EXAMPLES]))
