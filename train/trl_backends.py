"""Where a trl environment's tool calls go: through the kit's door (:mod:`coworkenv.servers.kit.door`), the direct
one (in-process, the fast path) or an MCP one onto running servers over streamable HTTP. Either way the environment
also holds a privileged :class:`Environment` onto the
same state, for what is never a tool: the reset, the state dump, the audit log and the grader."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Coroutine
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

from coworkenv.harness.baselines import BASELINE_CACHE, BaselineCache
from coworkenv.servers.kit import Environment, ServiceState, SimClock
from coworkenv.servers.kit.door import CallOutcome, DirectDoor, Door, MCPDoor, open_mcp_door
from coworkenv.servers.registry import get_service
from coworkenv.synth.contract.baseline import Baseline
from coworkenv.synth.contract.task import Task

R = TypeVar("R")
TASK_CACHE = 256
"""Parsed tasks a :class:`TaskBaselines` keeps (a trl row holds its task as JSON text)."""


def run_now(coro: Coroutine[Any, Any, R]) -> R:
    """The result of a coroutine that never suspends (the kit's calls and the scripted user's replies), without an
    event loop: trl calls tools from plain threads."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    coro.close()
    raise RuntimeError("a call that was expected to finish at once suspended")


class TaskBaselines:
    """The tasks one trainer's environments play: each row's task parsed once (by the SHA-256 of its JSON text) and
    its :class:`Baseline` seeded once (its pristine environment forked per rollout, never played in; what the
    rollouts are graded against). Both bounded, least recently used first out (an evicted baseline is closed).

    One per :func:`~coworkenv.train.trl_env.trl_environments` call, shared by the environment instances trl makes
    of its classes: nothing of a task outlives the trainer that played it in a process-global cache."""

    def __init__(self, tasks: int = TASK_CACHE, baselines: int = BASELINE_CACHE) -> None:
        self.cap = tasks
        self._tasks: OrderedDict[str, Task] = OrderedDict()
        self.baselines = BaselineCache(baselines)

    def task(self, text: str) -> tuple[str, Task]:
        """(key, task) of a row's task JSON: the key names its content."""
        key = hashlib.sha256(text.encode()).hexdigest()
        task = self._tasks.get(key)
        if task is None:
            task = self._tasks[key] = Task.model_validate_json(text)
            while len(self._tasks) > self.cap:
                self._tasks.popitem(last=False)
        self._tasks.move_to_end(key)
        return key, task

    def baseline(self, key: str, task: Task) -> Baseline:
        """The task's baseline (seeded now if it is not held)."""
        return self.baselines.get(key, task)

    def __len__(self) -> int:
        return len(self.baselines)

    def close(self) -> None:
        """Close every baseline held and forget the tasks (environments forked from them are unaffected)."""
        self._tasks.clear()
        self.baselines.close()


def read_only(service: str, tool: str) -> bool:
    spec = get_service(service).tools_by_name.get(tool)
    return bool(spec is not None and spec.read_only)


class Backend(Protocol):
    env: Environment

    def start(self, baseline: Baseline) -> None:
        """Make ``env`` the seeded state of the baseline's task."""
        ...

    def call(self, service: str, tool: str, arguments: dict[str, Any]) -> CallOutcome:
        """One tool call of the agent, through this backend's door (trl calls tools from plain threads)."""
        ...

    def close(self) -> None: ...


class LocalBackend:
    """A fork of the task's pristine environment per rollout; calls through the kit's direct door."""

    def __init__(self) -> None:
        self.env = Environment({}, SimClock())
        self.door: Door = DirectDoor(self.env)

    def start(self, baseline: Baseline) -> None:
        self.env.close()
        self.env = baseline.fork()
        self.door = DirectDoor(self.env)

    def call(self, service: str, tool: str, arguments: dict[str, Any]) -> CallOutcome:
        return run_now(self.door.call(service, tool, arguments))  # the direct door never suspends

    def close(self) -> None:
        self.env.close()


class HttpBackend:
    """Running MCP servers, one per service, each serving a database file on this machine.

    Calls go over streamable HTTP. ``start`` puts each database back to its seeded state in place (privileged:
    the same reset as ``coworkenv serve``'s, on the same WAL file, which the server then reads) and checks that
    it holds the task's seed and clock: MCP has no way to load another task into a running server (by design),
    so each server set serves one task; start servers with the task's seed and ``--now``."""

    def __init__(self, servers: dict[str, tuple[str, str]]) -> None:
        self.urls = {name: url for name, (url, _) in servers.items()}
        states = {
            name: ServiceState.open(get_service(name), path=db, create=False) for name, (_, db) in servers.items()
        }
        first = next(iter(states.values()))
        clock = SimClock(first.initial_now)
        for state in states.values():
            state.clock = clock
        self.env = Environment(states, clock)
        self._portal_cm: AbstractContextManager[Any] | None = None
        self._portal: Any = None
        self._door_cm: AbstractContextManager[MCPDoor] | None = None
        self._door: MCPDoor | None = None

    def start(self, baseline: Baseline) -> None:
        task = baseline.task
        if set(task.services) != set(self.urls):
            raise RuntimeError(f"task {task.id} needs {sorted(task.services)}; the servers are {sorted(self.urls)}")
        self.env.reset()
        want = baseline.pristine
        if want.dump() != self.env.dump() or want.clock.iso() != self.env.clock.iso():
            raise RuntimeError(
                f"the served databases do not hold task {task.id}'s seed and clock ({want.clock.iso()}): serve "
                "each service with the task's seed and --now"
            )

    def door(self) -> MCPDoor:
        """The MCP door onto the servers, opened at the first call (in a portal's event loop, as trl calls tools
        from plain threads)."""
        if self._portal is None:
            from anyio.from_thread import start_blocking_portal

            self._portal_cm = start_blocking_portal()
            self._portal = self._portal_cm.__enter__()
        if self._door is None:
            self._door_cm = self._portal.wrap_async_context_manager(open_mcp_door(self.urls))
            self._door = self._door_cm.__enter__()
        return self._door

    def call(self, service: str, tool: str, arguments: dict[str, Any]) -> CallOutcome:
        door = self.door()
        result: CallOutcome = self._portal.call(door.call, service, tool, arguments)
        return result

    def close(self) -> None:
        if self._door_cm is not None:
            self._door_cm.__exit__(None, None, None)
            self._door_cm = self._door = None
        if self._portal_cm is not None:
            self._portal_cm.__exit__(None, None, None)
            self._portal_cm = self._portal = None
        self.env.close()
