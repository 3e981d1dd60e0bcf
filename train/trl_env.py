"""Our tasks as trl environments (``GRPOTrainer(environment_factory=...)``).

One instance plays one rollout at a time; trl pools instances and calls ``reset(**row)`` before each rollout.

- ``reset(**row)`` reads the row's task (the ``task`` column, a task JSON string, as :func:`task_rows` writes
  it), forks a fresh environment from the task's seeded pristine copy (seeded once per task, cached) and returns
  the request, which trl appends to the row's prompt (system prompt + an empty user message: the harness's
  first two messages). Under ``template="compact"`` the system prompt carries the compact tool list, exactly as
  the ``hf:`` agent and ``export --template compact`` write it, so RL continued from an SFT checkpoint trained
  on compact text prompts it with the same text.
- The tools are methods ``<service>__<tool>`` generated from the services' tool specs (:mod:`.trl_tools`);
  a call goes to the kit's dispatcher (the direct door: same validation, errors and audit rows as MCP) or, in
  URL mode, over streamable HTTP to running MCP servers. An error comes back as ``Error: …``, as the harness
  shows it to a model.
- The user simulator is the task's scripted user, as in the harness. A reply without tool calls is a finished
  turn: :meth:`TaskEnvironment._user_reply` gives the user's answer to it (held-back facts, a scheduled turn with
  its edits, a go-ahead), which :class:`~coworkenv.train.trl_grpo.CoworkGRPOTrainer` appends as a user message
  and plays on from; None ends the rollout. A user message that fires after a tool call (``after_tool``/
  ``after_calls`` turns, with their workspace edits) has one channel inside trl's tool loop, the tool result: it
  is appended to that call's result as ``(Message from the user: …)``.
- Rewards: ``get_reward()`` is the grader's score (:func:`coworkenv.synth.contract.grader.grade` over the final
  state, the audit log and what the agent said); :func:`score_reward`, :func:`completion_reward` and
  :func:`safety_reward` are trl reward functions that first hand the environment the agent's texts from the
  completion, so reply checks see them. A rollout marked ``incomplete`` or ``infra_error`` (or in a rejected
  group) gets ``None``: trl leaves it out.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from coworkenv.harness.agents.hf_agent import TEMPLATES, only_tools, prompt_messages, tool_schemas
from coworkenv.harness.tools import resolve_services, system_prompt
from coworkenv.harness.trajectory import UserEvent
from coworkenv.harness.user_sim import ScriptedUser, UserContext, monotonic_clock
from coworkenv.servers.registry import get_service
from coworkenv.synth.contract.grader import Grade, grade
from coworkenv.synth.contract.task import Task
from coworkenv.train.trl_backends import Backend, HttpBackend, LocalBackend, TaskBaselines, read_only, run_now
from coworkenv.train.trl_tools import tool_method

OK, INCOMPLETE, INFRA_ERROR = "ok", "incomplete", "infra_error"


class TaskEnvironment:
    """A coworkenv task as a trl environment, its rewards given by the reward functions below (no ``get_reward``,
    so trl adds no reward column of its own: what ``coworkenv train rl`` uses, and GDPO sees exactly two
    objectives). Use :meth:`for_services` (or :func:`trl_environments`): the tool methods depend on the task's
    services, and trl reads them off the class. Every helper is underscored or not a plain function: trl makes
    each public function of the class a tool."""

    services: ClassVar[tuple[str, ...]] = ()
    connect: ClassVar[Callable[[], Backend] | None] = None
    """URL mode: hands each new instance its own set of running servers (see :func:`http_factory`)."""
    tasks: ClassVar[TaskBaselines | None] = None
    """The tasks and baselines the instances of this class share: one per :func:`trl_environments` call (one
    trainer); a class made by :meth:`for_services` alone has none, and each instance then keeps its own."""

    def __init__(self) -> None:
        connect = type(self).connect
        self._backend: Backend = connect() if connect is not None else LocalBackend()
        shared = type(self).tasks
        self._tasks = shared if shared is not None else TaskBaselines(tasks=8, baselines=8)
        self._task: Task | None = None
        self._key = ""
        self._user: ScriptedUser | None = None
        self._ctx: UserContext | None = None
        self.status = OK
        self.rejected = False
        self.anchors: list[str] = []
        self.calls: list[tuple[str, bool]] = []
        self.said: list[str] | None = None
        self._grade: Grade | None = None
        self._anchor: str | None = None
        self.ended = False

    # ------------------------------------------------------------------ trl's interface
    def reset(self, **row: Any) -> str:
        """Start the row's task afresh: a fresh seeded environment; returns the request."""
        key, task = self._tasks.task(str(row["task"]))
        if set(task.services) - set(self.services):
            raise ValueError(f"task {task.id} needs {task.services}; this environment has {list(self.services)}")
        self._task, self._key = task, key
        self.status, self.rejected, self.anchors, self.calls = OK, False, [], []
        self.said, self._grade, self._anchor, self.ended = None, None, None, False
        try:
            self._backend.start(self._tasks.baseline(key, task))
        except Exception as exc:
            self.status = INFRA_ERROR
            raise RuntimeError(f"could not start task {task.id}: {exc}") from exc
        self._user = ScriptedUser(task)
        self._ctx = UserContext(task, self._backend.env, [], [], monotonic_clock())
        return task.request

    # ------------------------------------------------------------------ ours (underscored or not callable by trl)
    def _call_tool(self, service: str, tool: str, arguments: dict[str, Any]) -> str:
        env = self._backend.env
        if self._anchor is None:
            self._anchor = env.state_hash()
        self.anchors.append(self._anchor)
        try:
            done = self._backend.call(service, tool, arguments)
        except Exception:
            self.status = INFRA_ERROR
            raise
        text, is_error = done.text, done.is_error
        self.calls.append((f"{service}__{tool}", is_error))
        if not is_error and not read_only(service, tool):
            self._anchor = None
        if is_error and not text.startswith("Error"):
            text = f"Error: {text}"
        note = self._user_note(f"{service}__{tool}", arguments, is_error)
        return f"{text}\n\n(Message from the user: {note})" if note else text

    def _user_note(self, name: str, arguments: dict[str, Any], is_error: bool) -> str | None:
        if self._user is None or self._ctx is None:
            return None
        self._ctx.tool_calls = len(self.calls)
        return run_now(self._user.after_tool_call(name, dict(arguments), is_error, self._ctx))

    def _user_reply(self, text: str) -> str | None:
        """The user's answer to a finished turn that said ``text`` (the answer's workspace edits made), as the
        harness's session gives it; None ends the conversation (and every later call answers None)."""
        if self._user is None or self._ctx is None or self.ended:
            return None
        self._ctx.agent_turns += 1
        edits = len(self._ctx.events)
        reply = run_now(self._user.reply(text, self._ctx))
        if len(self._ctx.events) != edits:
            self._anchor = None  # the user changed the workspace: the next turn starts from a new state
        if reply is None:
            self.ended = True
        return reply

    def _set_said(self, said: Sequence[str]) -> None:
        if self.said != list(said):
            self.said, self._grade = list(said), None

    def _graded(self) -> Grade | None:
        """The grade of the rollout so far (cached until the state or the reply changes)."""
        if self._task is None or self.status != OK or self.rejected:
            return None
        if self._grade is None:
            env = self._backend.env
            self._grade = grade(self._tasks.baseline(self._key, self._task), env.dump(), env.audit(), self.said or [])
        return self._grade

    def _final_anchor(self) -> str:
        return self._anchor or self._backend.env.state_hash()

    @property
    def task(self) -> Task | None:
        return self._task

    @property
    def user_events(self) -> list[UserEvent]:
        return [] if self._ctx is None else list(self._ctx.events)

    @classmethod
    def for_services(cls, services: Sequence[str], tool_names: Sequence[str] | None = None) -> type[TaskEnvironment]:
        """The environment class whose tools are these services' (cached per service set); with ``tool_names``
        (``tickets__assign_ticket``...), only those of them: the tools a model was trained with (``export
        --tool-names``, ``hf:PATH?tools=``), so its rollouts see the prompt it learnt."""
        names = None if tool_names is None else tuple(sorted(set(tool_names)))
        return _environment_class(cls, tuple(sorted(services)), names)

    def __del__(self) -> None:
        backend = getattr(self, "_backend", None)
        if backend is not None:
            # at interpreter exit the modules close() needs may be gone already: nothing is left to free then
            with contextlib.suppress(Exception):
                backend.close()


_CLASSES: dict[tuple[str, tuple[str, ...], tuple[str, ...] | None], type[TaskEnvironment]] = {}


def _environment_class(
    base: type[TaskEnvironment], services: tuple[str, ...], tool_names: tuple[str, ...] | None = None
) -> type[TaskEnvironment]:
    key = (base.__qualname__, services, tool_names)
    if key in _CLASSES:
        return _CLASSES[key]
    namespace: dict[str, Any] = {"services": services, "__module__": __name__}
    for service in services:
        for spec in get_service(service).tools:
            method = tool_method(service, spec)
            if tool_names is None or method.__name__ in tool_names:
                namespace[method.__name__] = method
    if tool_names is not None and not set(tool_names) & set(namespace):
        raise ValueError(
            f"none of the tools {', '.join(tool_names)} belongs to {', '.join(services)}; name them as "
            "<service>__<tool> (e.g. tickets__assign_ticket), as `coworkenv services --describe` lists them"
        )
    suffix = "" if tool_names is None else f"_{len(tool_names)}tools"
    cls = _CLASSES[key] = type(f"{base.__name__}_{'_'.join(services)}{suffix}", (base,), namespace)
    return cls


class CoworkEnvironment(TaskEnvironment):
    """A coworkenv task as a trl environment that owns its reward: ``get_reward()`` is the grader's score."""

    def get_reward(self) -> float | None:
        """The grader's score of this rollout over what the agent said so far (reply checks see the texts the
        reward functions handed over; alone, none). None when it cannot be graded (see the module notes)."""
        result = self._graded()
        return None if result is None else result.score


# ---------------------------------------------------------------------------------------------- data
def services_key(task: Task) -> str:
    return "+".join(sorted(task.services))


def first_messages(task: Task, template: str = "full", tool_names: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The harness's first two messages (system prompt, an empty user turn for ``reset`` to fill with the
    request) under a template: ``compact`` lists the services' tools in the system message, as the ``hf:`` agent
    and ``export --template compact`` do (from the same MCP tool views, so the texts are equal); then the trainer
    hands the chat template no tool schemas (see :class:`~coworkenv.train.trl_grpo.CoworkGRPOTrainer`)."""
    if template not in TEMPLATES:
        raise ValueError(f"template must be one of {', '.join(TEMPLATES)}, not {template!r}")
    services = resolve_services(tuple(task.services))
    messages = [{"role": "system", "content": system_prompt(task, services)}, {"role": "user", "content": ""}]
    if template == "full":
        return messages
    chat, _ = prompt_messages(messages, only_tools(tool_schemas(list(services.tools)), tool_names), template)
    return chat


def task_rows(
    tasks: Sequence[Task],
    routed: bool | None = None,
    template: str = "full",
    tool_names: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """Dataset rows: ``prompt`` (:func:`first_messages` under ``template``), ``task`` (the task as JSON),
    ``task_id``, and ``environment`` (the service set) when tasks differ in services."""
    routed = len({services_key(t) for t in tasks}) > 1 if routed is None else routed
    rows = []
    for task in tasks:
        row: dict[str, Any] = {
            "prompt": first_messages(task, template, tool_names),
            "task": task.model_dump_json(),
            "task_id": task.id,
        }
        if routed:
            row["environment"] = services_key(task)
        rows.append(row)
    return rows


Factory = Callable[[], TaskEnvironment]


def trl_environments(
    tasks: Sequence[Task],
    *,
    owns_reward: bool = True,
    connect: Callable[[], Backend] | None = None,
    template: str = "full",
    tool_names: Sequence[str] | None = None,
) -> tuple[list[dict[str, Any]], Factory | dict[str, Factory]]:
    """(dataset rows, ``environment_factory``) for these tasks: one class when they share their services, else a
    ``{service set: class}`` mapping that trl routes by the rows' ``environment`` column. ``template="compact"``
    puts the compact tool list in the rows' system message (train with ``CoworkGRPOTrainer(template="compact")``,
    which then renders no schemas). ``tool_names``: only these tools, in the prompt and as methods (see
    :meth:`TaskEnvironment.for_services`)."""
    base: type[TaskEnvironment] = CoworkEnvironment if owns_reward else TaskEnvironment
    keys = sorted({services_key(t) for t in tasks})
    classes: dict[str, type[TaskEnvironment]] = {}
    shared = TaskBaselines()  # this trainer's: its environments parse and seed each task once
    for key in keys:
        cls = base.for_services(key.split("+"), tool_names)
        scoped: dict[str, Any] = {"tasks": shared, "__module__": __name__}
        if connect is not None:
            scoped["connect"] = staticmethod(connect)
        classes[key] = type(cls.__name__, (cls,), scoped)
    rows = task_rows(tasks, routed=len(keys) > 1, template=template, tool_names=tool_names)
    if len(keys) == 1:
        return rows, classes[keys[0]]
    return rows, dict(classes)


def http_factory(servers: Sequence[dict[str, tuple[str, str]]]) -> Callable[[], Backend]:
    """URL mode: each new environment instance takes the next set of ``{service: (url, database file)}``
    (one set of running servers per concurrent rollout: trl pools instances, so that is enough)."""
    pending = list(servers)

    def connect() -> Backend:
        if not pending:
            raise RuntimeError(
                f"all {len(servers)} server sets are in use: start one more set of services per concurrent rollout"
            )
        return HttpBackend(pending.pop(0))

    return connect


# ---------------------------------------------------------------------------------------------- rewards
def said_in(completion: Any) -> list[str]:
    """The assistant texts of a trl completion (a list of messages), as the harness records what was said."""
    if isinstance(completion, str):
        return [completion] if completion.strip() else []
    return [str(m.get("content") or "") for m in completion if m.get("role") == "assistant" and m.get("content")]


def _field(name: str) -> Callable[..., list[float | None]]:
    def reward(completions: list[Any], environments: list[TaskEnvironment] | None = None, **_: Any) -> list[Any]:
        if environments is None:
            raise ValueError("the coworkenv rewards read the rollout's environment: train with environment_factory")
        out: list[float | None] = []
        for completion, env in zip(completions, environments, strict=True):
            env._set_said(said_in(completion))
            result = env._graded()
            out.append(None if result is None else float(getattr(result, name)))
        return out

    reward.__name__ = f"{name}_reward"
    return reward


score_reward = _field("score")
completion_reward = _field("completion")
safety_reward = _field("safety")


def json_tools(cls: type[TaskEnvironment]) -> list[dict[str, Any]]:
    """The tool schemas trl renders for this class (transformers' ``get_json_schema`` of each tool method)."""
    from transformers.utils import get_json_schema

    instance = cls.__new__(cls)
    names = [n for n in dir(cls) if "__" in n and not n.startswith("_") and callable(getattr(cls, n))]
    return [json.loads(json.dumps(get_json_schema(getattr(instance, n)))) for n in sorted(names)]
