"""``coworkenv run --backend ray [--address ADDR]``: episodes spread over Ray workers.

Only the episode moves. The driver keeps everything that makes a run a run: the results file and its one
writer, resume (finished (task, trial) pairs are skipped), the concurrency bound, progress and the abort on a
non-retryable provider error. Each (task, trial) becomes one Ray task that plays the episode with exactly the
local backend's retry loop (``Runner._trial``: infrastructure failures retried with backoff, agent failures
recorded as such) and returns the trajectory. The agent is rebuilt in the worker from its spec (credentials
come from the worker's environment, never through Ray's object store); each worker seeds its own pristine
environment per task. Local Ray by default (``ray.init()`` starts one on this machine); ``--address`` joins a
cluster (``ray start --head`` on one machine, ``ray start --address HEAD:6379`` on the others).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from coworkenv.harness.trajectory import Trajectory
from coworkenv.synth.contract.task import Task

if TYPE_CHECKING:
    from coworkenv.harness.run import Runner

INSTALL_HINT = "the Ray backend needs Ray: pip install 'coworkenv[ray]'"


def _play(task_json: str, trial: int, agent_spec: str, state: dict[str, Any]) -> tuple[str | None, str | None]:
    """In a Ray worker: one (task, trial) through the local backend's retry loop; (trajectory JSON, abort)."""
    import anyio

    from coworkenv.harness.agents.registry import make_agent
    from coworkenv.harness.run import Runner, _Pristine

    task = Task.model_validate_json(task_json)
    runner = Runner([task], make_agent(agent_spec), "unused", agent_spec=agent_spec, **state)
    pristine = _Pristine(task, 1)
    try:
        record = anyio.run(runner._trial, task, trial, pristine)
    finally:
        pristine.release()
    return (None, runner._abort) if record is None else (record.model_dump_json(), None)


@dataclass
class RayBackend:
    """Plays a runner's episodes on Ray. ``agent_spec`` is the spec as given (the worker rebuilds the agent)."""

    agent_spec: str
    address: str | None = None
    num_cpus: int | None = None
    """Local Ray only: CPUs to start it with (default: all)."""
    _remote: Any = field(default=None, init=False, repr=False)

    def start(self) -> None:
        try:
            import ray
        except ImportError as exc:
            raise RuntimeError(f"{INSTALL_HINT} ({exc})") from exc
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
            if self.address:
                kwargs["address"] = self.address
            elif self.num_cpus:
                kwargs["num_cpus"] = self.num_cpus
            env = {k: v for k, v in os.environ.items() if k in ("PYTHONPATH", "HF_HUB_OFFLINE")}
            ray.init(runtime_env={"env_vars": env} if env else None, **kwargs)
        self._remote = ray.remote(num_cpus=1, max_retries=0)(_play)

    async def trial(self, runner: Runner, task: Task, trial: int) -> Trajectory | None:
        if self._remote is None:
            self.start()
        state = {"options": runner.options, "faults": runner.faults, "user": runner.user}
        record_json, abort = await self._remote.remote(task.model_dump_json(), trial, self.agent_spec, state)
        if record_json is None:
            runner._abort = abort or "the agent's provider refused the run"
            return None
        record = Trajectory.model_validate_json(record_json)
        record.agent = runner.agent_spec
        return record
