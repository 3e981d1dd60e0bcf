"""An episode: a fresh environment from the task, the agent works with the task's tools, the user answers,
then the grader scores the final state, the audit log and what the agent said.

A model agent is driven here, one turn at a time: a turn with tool calls gets their results and goes on;
a turn without tool calls is what the agent says to the user, and the user simulator answers it or ends
the conversation. An episode-driving agent (``replay``, ``noop``, Claude Code) gets the session as its
:class:`~coworkenv.harness.agents.base.EpisodeIO` and runs the loop itself. Either way the episode stops at
the end of the conversation, at a turn, tool-call or wall-time limit, or on an error, and comes back as a
:class:`~coworkenv.harness.trajectory.Trajectory` with its status.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio

from coworkenv.harness.agents.base import EpisodeAgent, InfrastructureError, LimitReached, ModelAgent
from coworkenv.harness.faults import FaultInjector
from coworkenv.harness.session import EpisodeSession
from coworkenv.harness.tools import (
    STARTUP_TIMEOUT_S,
    Transport,
    open_door,
    spec_limit,
    system_prompt,
    task_registry,
    task_services,
)
from coworkenv.harness.trajectory import Trajectory, scrub_error, task_fields
from coworkenv.harness.user_sim import ScriptedUser, UserSimulator
from coworkenv.servers.kit import Environment, canonical_json
from coworkenv.servers.kit.audit import AuditRow
from coworkenv.servers.kit.tool_faults import ToolFaults, injected_faults, switch_on
from coworkenv.synth.contract.baseline import Baseline
from coworkenv.synth.contract.grader import Grade, grade
from coworkenv.synth.contract.task import Task

Agent = ModelAgent | EpisodeAgent
UserFactory = Callable[[Task], UserSimulator]


@dataclass(frozen=True)
class EpisodeConfig:
    transport: Transport = "direct"
    max_turns: int = 40
    max_tool_calls: int = 100
    wall_time_s: float = 600.0
    anchors: bool = True
    """Record the environment's state hash before each tool call (GiGPO's anchor states)."""
    startup_timeout_s: float = STARTUP_TIMEOUT_S
    """Every MCP session of the task's services must initialize and list its tools within this time, or the
    episode is an ``infra_error`` (retried by runs, never graded): an agent without its tools is not scored."""
    tool_faults: ToolFaults | None = None
    """Injected tool faults on the agent's calls (``--tool-faults``): each episode's switch is seeded from these
    settings' seed, the task and the trial (:meth:`ToolFaults.derived`), on every transport."""


def agent_transport(agent: Agent, config: EpisodeConfig) -> Transport:
    """An agent that runs its own MCP client (``transport = "stdio"``) gets the stdio transport."""
    wanted = getattr(agent, "transport", None)
    return "stdio" if wanted == "stdio" else config.transport


def task_baseline(task: Task) -> Baseline:
    """The baseline of a task (:meth:`Baseline.of`), its services as the task's tool profile serves them. A task
    graded externally (imported) is graded by its source's grader, not against expected changes: it derives none."""
    registry = task_registry(task)
    if task.external is None:
        return Baseline.of(task, registry=registry)
    baseline = Baseline.seeded(task, registry=registry)
    if baseline.expected is None:
        baseline.expected = []
    return baseline


def _environment(task: Task, transport: Transport, baseline: Baseline, db_dir: Path | None) -> Environment:
    """The episode's environment: a fork of the baseline's pristine one, or for stdio (where each server opens its
    own database file) the task seeded into files."""
    if transport == "stdio":
        return Environment.create(task.seeds(), now=task.now, db_dir=db_dir, registry=task_registry(task))
    return baseline.fork()


def _grade(baseline: Baseline, record: Trajectory, state: dict[str, Any], audit: list[AuditRow]) -> Grade:
    """The grade of a finished episode: our grader, or for an imported task its source's (through the bridge)."""
    task = baseline.task
    if task.external is None:
        return grade(baseline, state, audit, record.said)
    try:
        from coworkenv.harness.claw_eval.grading import grade_claw
    except ImportError as exc:
        raise GradingUnavailable(
            f"task {task.id} is graded by Claw-Eval's grader through coworkenv.harness.claw_eval.grading, which "
            f"cannot be imported ({exc}); install coworkenv complete, or leave imported tasks out of the run"
        ) from exc
    try:
        graded: Grade = grade_claw(task, record, state, audit)
    except Exception as exc:  # the source's grader failed (its checkout, its judge): not the agent's doing
        raise GradingFailed(f"Claw-Eval's grader failed on {task.id}: {type(exc).__name__}: {exc}") from exc
    return graded


class GradingFailed(InfrastructureError):
    """An imported task's grader failed on a finished episode (retried like any infrastructure failure)."""


class GradingUnavailable(InfrastructureError):
    """An imported task's grader cannot run here: no retry helps (the run stops with this message)."""

    retryable = False


@contextmanager
def episode_folder(stdio: bool) -> Iterator[Path | None]:
    """The stdio transport's folder of databases, removed afterwards; removing it never fails the episode.

    (A server that outlived its client may still be writing there: what cannot be removed is left behind.)"""
    if not stdio:
        yield None
        return
    path = Path(tempfile.mkdtemp(prefix="coworkenv-episode-"))
    try:
        yield path
    finally:
        remove_folder(path)


def remove_folder(path: Path, tries: int = 3) -> bool:
    """``rm -rf path``, tried a few times (files may appear while it runs); True when it is gone. Never raises."""
    for _ in range(tries):
        shutil.rmtree(path, ignore_errors=True)
        if not path.exists():
            return True
    return False


async def _drive(agent: ModelAgent, session: EpisodeSession) -> None:
    while True:
        await session.before_model_call()
        started = session.elapsed()
        t0 = time.perf_counter()
        turn = await agent.complete(list(session.messages), session.tools)
        session.record_turn(turn, started, time.perf_counter() - t0)
        if turn.tool_calls:
            for call in turn.tool_calls:
                await session.execute(call)
            session.flush_user_notes()
            continue
        if await session.finish_turn(turn.text) is None:
            return


async def _play(agent: Agent, session: EpisodeSession, wall_time_s: float, record: Trajectory) -> None:
    """Run the agent; set the record's status, stop reason and error from how it ended."""
    with anyio.move_on_after(wall_time_s) as scope:
        try:
            if isinstance(agent, EpisodeAgent):
                await agent.run_episode(session)
            else:
                await _drive(agent, session)
        except LimitReached as exc:
            record.status, record.stop_reason = "max_turns", exc.reason
        except InfrastructureError as exc:
            record.status, record.stop_reason = "infra_error", type(exc).__name__
            record.error = scrub_error(str(exc))
            record.retryable = bool(getattr(exc, "retryable", True))
        except Exception as exc:
            record.status, record.stop_reason = "agent_error", type(exc).__name__
            record.error = scrub_error(f"{type(exc).__name__}: {exc}")
    if scope.cancelled_caught:
        record.status, record.stop_reason = "timeout", f"wall time ({wall_time_s:g} s)"


async def run_episode(
    task: Task,
    agent: Agent,
    *,
    agent_spec: str | None = None,
    trial: int = 0,
    config: EpisodeConfig | None = None,
    baseline: Baseline | None = None,
    pristine_hash: str | None = None,
    user: UserFactory | None = None,
    faults: FaultInjector | None = None,
) -> Trajectory:
    """Run one episode of ``task`` with ``agent`` and grade it (infrastructure failures are not graded).

    ``baseline`` is the task's baseline (seed once per task: the episode forks its pristine environment and is
    graded against it); without it the baseline is built here (:meth:`Baseline.of`). ``pristine_hash``: the hash
    of its pristine state, when known. ``user`` makes the user simulator (default: scripted).
    """
    config = config or EpisodeConfig()
    transport = agent_transport(agent, config)
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    record = Trajectory(
        **task_fields(task), agent=agent_spec or agent.name, trial=trial, transport=transport, started_at=started_at
    )
    with episode_folder(transport == "stdio") as db_dir:
        try:
            services = task_services(task)
            if baseline is None:
                baseline = task_baseline(task)
            env = _environment(task, transport, baseline, db_dir)
            tool_faults = config.tool_faults.derived(task.id, trial) if config.tool_faults else None
            if transport != "stdio":
                switch_on(env.states, tool_faults)
        except Exception as exc:
            record.status, record.error = "infra_error", scrub_error(f"could not build the environment: {exc}")
            record.wall_s = round(time.perf_counter() - t0, 6)
            return record
        try:
            forked = transport != "stdio"
            record.initial_state_hash = pristine_hash if forked and pristine_hash else env.state_hash()
            session: EpisodeSession | None = None
            try:
                async with open_door(env, services, transport, db_dir, config.startup_timeout_s, tool_faults) as (
                    door,
                    tools,
                ):
                    session = EpisodeSession(
                        task,
                        env,
                        door,
                        (user or ScriptedUser)(task),
                        tools=tools,
                        read_only=services.read_only,
                        system_prompt=system_prompt(task, services),
                        max_turns=min(
                            config.max_turns, spec_limit(task, "environment", "max_turns") or config.max_turns
                        ),
                        max_tool_calls=config.max_tool_calls,
                        anchors=config.anchors,
                        faults=faults,
                        db_dir=db_dir,
                        mcp_config=services.stdio_config(db_dir, tool_faults) if db_dir else None,
                        initial_hash=record.initial_state_hash,
                    )
                    await _play(agent, session, config.wall_time_s, record)
            except InfrastructureError as exc:  # the services never came up (ServicesUnavailable): retried
                record.status, record.stop_reason = "infra_error", type(exc).__name__
                record.error = scrub_error(str(exc))
                record.retryable = bool(getattr(exc, "retryable", True))
            except Exception as exc:  # the door (MCP clients, subprocesses) failed: not the agent's fault
                record.status, record.stop_reason = "infra_error", type(exc).__name__
                record.error = scrub_error(f"the task's services failed: {exc!r}")
            if session is not None:
                _copy(session, record)
            state = env.dump()
            audit = env.audit()
            record.tool_faults = injected_faults(audit)
            if record.status != "infra_error":
                try:
                    record.grade = _grade(baseline, record, state, audit)
                except InfrastructureError as exc:
                    record.status, record.stop_reason = "infra_error", type(exc).__name__
                    record.error = scrub_error(str(exc))
                    record.retryable = bool(getattr(exc, "retryable", True))
            record.final_state_hash = hashlib.sha256(canonical_json(state).encode()).hexdigest()
        finally:
            env.close()
    record.wall_s = round(time.perf_counter() - t0, 6)
    return record


def _copy(session: EpisodeSession, record: Trajectory) -> None:
    record.messages = session.messages
    record.steps = session.steps
    record.turns = session.turns
    record.user_events = session.user_events
    record.said = session.said
    record.usage = session.usage
    record.faults_injected = session.faults_injected
