"""One OpenEnv session's episode: a task's workspace (a fork of its baseline), its tools, its user and its grade.

The episode is the harness's own (:class:`~coworkenv.harness.session.EpisodeSession` over the direct door, the
task's scripted user): a ``call_tool`` action is one agent turn with one tool call, and ``reply(text)`` is one turn
that says ``text`` to the user. The user answers it (a held-back fact, a scheduled turn with its workspace edits, a
go-ahead) or ends the conversation; then the grader scores the final state, the audit log and what the agent said,
and the score is the step's reward. A message the user adds after a tool call (a turn triggered by that call) comes
back with that call's result. The grader, the state dump and the audit log are never tools.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from coworkenv.harness.agents.base import InfrastructureError, LimitReached
from coworkenv.harness.baselines import BaselineCache
from coworkenv.harness.openenv import protocol
from coworkenv.harness.session import EpisodeSession
from coworkenv.harness.tools import TaskServices, resolve_services, system_prompt
from coworkenv.harness.user_sim import ScriptedUser
from coworkenv.servers.kit import Environment
from coworkenv.servers.kit.door import CallOutcome, DirectDoor, DoorTool
from coworkenv.synth.contract.baseline import Baseline
from coworkenv.synth.contract.grader import grade
from coworkenv.synth.contract.task import Task

REPLY = "reply"
MAX_REPLY_CHARS = 100_000
REPLY_TOOL: dict[str, Any] = {
    "name": REPLY,
    "description": (
        "Say something to the user (the colleague who asked): your answer when you are done, or a question when you "
        "need something only they know. If they have more to say, the result is their next message; otherwise the "
        "conversation ends and the work is graded."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "text": {
                "type": "string",
                "maxLength": MAX_REPLY_CHARS,
                "description": "Your message to the user, e.g. 'I escalated tkt_1002 to Dana Lee.'",
            }
        },
        "required": ["text"],
        "additionalProperties": False,
    },
}
REPLY_NOTE = (
    "Talk to the user only with the reply tool (reply(text=...)): your answer when you are done, or a question when "
    "you need something only they know. Their answer comes back as the tool's result; when they have nothing more "
    "to say, the episode ends."
)
USER_NOTE = "\n\n(Message from the user: {})"
RESET_ARGUMENTS = ("task_id", "seed", "episode_id")


class ResetError(ValueError):
    """Reset arguments that name no task of the server, or are malformed."""


@dataclass(frozen=True)
class Limits:
    max_steps: int = 100
    """Tool calls and replies of one episode; the step that reaches it ends the episode, graded as it stands."""


class TaskPool:
    """The served tasks by id, their baselines (seeded on first use, shared by every session) and tool listings."""

    def __init__(self, tasks: Sequence[Task], baselines: BaselineCache | None = None) -> None:
        if not tasks:
            raise ValueError("no tasks to serve")
        self.tasks = {t.id: t for t in tasks}
        self.ids = sorted(self.tasks)
        self.baselines = baselines or BaselineCache()
        names = tuple(sorted({s for t in tasks for s in t.services}))
        self.every_tool = self._listing(resolve_services(names))
        self._listings: dict[tuple[str, ...], list[dict[str, Any]]] = {}

    @classmethod
    def load(cls, paths: Sequence[str | Path]) -> TaskPool:
        from coworkenv.harness.run import load_task_set

        return cls(load_task_set(paths))

    @staticmethod
    def _listing(services: TaskServices) -> list[dict[str, Any]]:
        tools = [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in services.tools]
        return [*tools, REPLY_TOOL]

    def listing(self, services: TaskServices) -> list[dict[str, Any]]:
        """The tools of these services as ``list_tools`` gives them, ``reply`` last."""
        found = self._listings.get(services.names)
        if found is None:
            found = self._listings[services.names] = self._listing(services)
        return found

    def pick(self, task_id: Any = None, seed: Any = None) -> Task:
        """The task named, else the one ``seed`` picks (``seed`` modulo the number of tasks, in id order), else one
        at random."""
        if task_id is not None:
            if not isinstance(task_id, str) or task_id not in self.tasks:
                near = ", ".join(self.ids[:5]) + (", ..." if len(self.ids) > 5 else "")
                raise ResetError(
                    f"unknown task id {task_id!r}: this server has {len(self.ids)} tasks ({near}); GET /tasks lists them"
                )
            return self.tasks[task_id]
        if seed is not None:
            if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
                raise ResetError(f"seed must be a whole number >= 0, not {seed!r}")
            return self.tasks[self.ids[seed % len(self.ids)]]
        return self.tasks[random.choice(self.ids)]

    def close(self) -> None:
        self.baselines.close()


class _Recording:
    """The direct door, keeping the last outcome (the session reports text; the wire also wants its data)."""

    def __init__(self, door: DirectDoor) -> None:
        self.door = door
        self.last: CallOutcome | None = None

    async def call(self, service: str, tool: str, arguments: Mapping[str, Any]) -> CallOutcome:
        self.last = await self.door.call(service, tool, arguments)
        return self.last

    async def list_tools(self, service: str) -> list[DoorTool]:
        return await self.door.list_tools(service)


class Episode:
    """What one session plays: no task until ``reset``; a fresh fork of the task's baseline at each reset; freed
    when the episode ends or the session closes."""

    def __init__(self, pool: TaskPool, limits: Limits | None = None) -> None:
        self.pool = pool
        self.limits = limits or Limits()
        self.task: Task | None = None
        self.episode_id: str | None = None
        self.step_count = 0
        self.done = False
        self._env: Environment | None = None
        self._session: EpisodeSession | None = None
        self._door: _Recording | None = None
        self._services: TaskServices | None = None
        self._baseline: Baseline | None = None

    # ------------------------------------------------------------------ the protocol's verbs
    async def reset(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(arguments) - set(RESET_ARGUMENTS))
        if unknown:
            raise ResetError(f"reset takes {', '.join(RESET_ARGUMENTS)}; not {', '.join(map(repr, unknown))}")
        episode_id = arguments.get("episode_id")
        if episode_id is not None and (not isinstance(episode_id, str) or len(episode_id) > 255):
            raise ResetError("episode_id is a string of at most 255 characters")
        task = self.pool.pick(arguments.get("task_id"), arguments.get("seed"))
        baseline = self.pool.baselines.get(task.id, task)
        self.close()
        services = resolve_services(tuple(task.services))
        env = baseline.fork()
        door = _Recording(DirectDoor(env))
        self._session = EpisodeSession(
            task,
            env,
            door,
            ScriptedUser(task),
            tools=list(services.tools),
            read_only=services.read_only,
            system_prompt=system_prompt(task, services),
            max_turns=self.limits.max_steps,
            max_tool_calls=self.limits.max_steps,
            anchors=False,
        )
        self.task, self._env, self._door, self._services, self._baseline = task, env, door, services, baseline
        self.episode_id = episode_id or uuid.uuid4().hex
        self.step_count, self.done = 0, False
        observation = {
            "task_id": task.id,
            "request": task.request,
            "instructions": f"{self._session.system_prompt}\n\n{REPLY_NOTE}",
            "services": list(services.names),
            "metadata": {"episode_id": self.episode_id},
        }
        return protocol.result(observation)

    async def step(self, action: Any) -> dict[str, Any]:
        """One action (``list_tools`` or ``call_tool``); a malformed one raises :class:`protocol.ActionError`."""
        kind, name, arguments = protocol.parse_action(action)
        self.step_count += 1
        if kind == "list_tools":
            return protocol.result({"tools": self.tools()}, done=self.done)
        return await self.call_tool(name, arguments)

    def tools(self) -> list[dict[str, Any]]:
        """The task's tools (before any reset: those of every service the served tasks use) and ``reply``."""
        if self._services is None:
            return self.pool.every_tool
        return self.pool.listing(self._services)

    def state(self) -> dict[str, Any]:
        return {
            "episode_id": self.episode_id,
            "step_count": self.step_count,
            "task_id": None if self.task is None else self.task.id,
            "done": self.done,
        }

    def close(self) -> None:
        """Free the workspace (idempotent)."""
        if self._env is not None:
            self._env.close()
        self._env = self._session = self._door = self._baseline = None

    # ------------------------------------------------------------------ tools
    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if self.task is None:
            return _refused(name, "no task is running in this session: call reset(task_id=...) first")
        if self.done or self._session is None:
            return _refused(name, "the episode is over (done): call reset to start another", done=True)
        try:
            if name == REPLY:
                return await self._reply(arguments)
            return await self._call(name, arguments)
        except LimitReached as exc:
            return await self._finish(name, f"the episode reached its limit ({exc.reason}) and was graded as it stands")
        except InfrastructureError as exc:
            return _refused(name, str(exc))

    async def _call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        session, door = self._session, self._door
        assert session is not None and door is not None
        replies = _user_replies(session)
        door.last = None
        text, is_error = await session.call_tool(name, arguments)
        notes = _user_replies(session)[len(replies) :]
        outcome = door.last
        if notes:
            text += USER_NOTE.format("\n\n".join(notes))
        if is_error:
            kind = protocol.ERROR_TYPES.get(outcome.outcome if outcome else "unknown_tool", protocol.EXECUTION)
            observation = protocol.tool_result(name, text, error=(kind, text))
        else:
            observation = protocol.tool_result(name, text, data=outcome.data if outcome else None)
        observation["user_message"] = "\n\n".join(notes) or None
        return protocol.result(observation)

    async def _reply(self, arguments: dict[str, Any]) -> dict[str, Any]:
        text = arguments.get("text")
        if set(arguments) != {"text"} or not isinstance(text, str) or len(text) > MAX_REPLY_CHARS:
            message = (
                f"Invalid arguments for reply: give exactly text, a string of at most {MAX_REPLY_CHARS} characters."
            )
            return _refused(REPLY, message, kind=protocol.INVALID_ARGS)
        assert self._session is not None
        answer = await self._session.say(text)
        if answer is None:
            return await self._finish(
                REPLY, "The user has nothing more to add: the conversation is over and was graded."
            )
        observation = protocol.tool_result(REPLY, answer)
        observation["user_message"] = answer
        return protocol.result(observation)

    async def _finish(self, name: str, text: str) -> dict[str, Any]:
        """End the episode: grade it, free its workspace; the step's reward is the score.

        The state and audit log are read on the event loop (the databases live there); the grading itself runs in a
        worker thread, so the steps of other sessions are answered meanwhile instead of after it."""
        session, env, baseline = self._session, self._env, self._baseline
        assert session is not None and env is not None and baseline is not None
        state, audit, said = env.dump(), env.audit(), list(session.said)
        self.done = True
        self.close()
        result = await anyio.to_thread.run_sync(lambda: grade(baseline, state, audit, said))
        observation = protocol.tool_result(name, text)
        observation["user_message"] = None
        observation["metadata"] = {"episode_id": self.episode_id, "grade": result.model_dump(mode="json")}
        return protocol.result(observation, reward=result.score, done=True)


def _user_replies(session: EpisodeSession) -> list[str]:
    return [e.text or "" for e in session.user_events if e.kind == "reply"]


def _refused(name: str, message: str, kind: str = protocol.EXECUTION, done: bool = False) -> dict[str, Any]:
    observation = protocol.tool_result(name, message, error=(kind, message))
    observation["user_message"] = None
    return protocol.result(observation, done=done)
