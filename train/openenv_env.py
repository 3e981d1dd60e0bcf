"""TRL through OpenEnv: ``GRPOTrainer(environment_factory=...)`` over a running ``coworkenv openenv serve``.

The environment class holds one session of the server per instance (trl pools instances: one per concurrent
rollout); its public methods are the server's tools, ``<service>__<tool>`` and ``reply``, typed from the schemas the
server lists; ``reset(**row)`` starts the row's ``task_id`` and returns the request. The episode ends when the model
calls ``reply`` and the user has nothing more to say, or, when the model ends without calling it, with its last text
said to the user by :func:`openenv_reward` (the harness's rule: a turn without tool calls is the agent's message to
the user). The reward is the grader's score, which only the server computes::

    from coworkenv.train.openenv_env import openenv_environment, openenv_reward, openenv_rows

    url = "http://127.0.0.1:8000"                   # coworkenv openenv serve --tasks tasks --port 8000
    trainer = GRPOTrainer(
        model="Qwen/Qwen3-0.6B",
        reward_funcs=openenv_reward,
        train_dataset=Dataset.from_list(openenv_rows(url)),   # per task: its instructions as the system prompt
        environment_factory=openenv_environment(url),         # the server's tools as methods
        args=GRPOConfig(max_tool_calling_iterations=40, ...),
    )

Nothing here imports trl or torch: the class is plain Python over a WebSocket (``pip install 'coworkenv[openenv]'``).
"""

from __future__ import annotations

import contextlib
import json
import urllib.request
from collections.abc import Sequence
from typing import Any, ClassVar

from coworkenv.harness.openenv.client import OpenEnvSession, result_text
from coworkenv.train.trl_tools import schema_method

REPLY = "reply"


class OpenEnvEnvironment:
    """One session of a coworkenv OpenEnv server as a trl environment (make the class with
    :func:`openenv_environment`: trl reads the tools off the class). Every helper is underscored or not a plain
    function: trl makes each public function of the class a tool."""

    base_url: ClassVar[str] = ""
    headers: ClassVar[dict[str, str] | None] = None

    def __init__(self) -> None:
        self._session = OpenEnvSession(self.base_url, self.headers)
        self.task_id: str | None = None
        self.done = False
        self.reward: float | None = None
        """The grader's score once the episode is done; None before."""
        self.grade: dict[str, Any] | None = None

    def reset(self, **row: Any) -> str:
        """Start the row's task (``task_id``) afresh in this instance's session; returns the user's request."""
        result = self._session.reset(task_id=str(row["task_id"]))
        self.task_id, self.done, self.reward, self.grade = str(row["task_id"]), False, None, None
        return str(result["observation"]["request"])

    def _call_tool(self, name: str, arguments: dict[str, Any]) -> str:
        result = self._session.call_tool(name, arguments)
        if result.get("done") and not self.done:
            self.done, self.reward = True, result.get("reward")
            self.grade = (result.get("metadata") or {}).get("grade")
        return result_text(result)

    def _finish(self, text: str) -> None:
        """Say ``text`` to the user if the episode is still going (a rollout that ended without calling reply)."""
        if self.task_id is not None and not self.done:
            self._call_tool(REPLY, {"text": text})

    def __del__(self) -> None:
        session = getattr(self, "_session", None)
        if session is not None:
            with contextlib.suppress(Exception):
                session.close()


def openenv_environment(
    base_url: str, tool_names: Sequence[str] | None = None, headers: dict[str, str] | None = None
) -> type[OpenEnvEnvironment]:
    """The environment class for the server at ``base_url``: a method per tool it lists (every tool of the services
    its tasks use, and ``reply``; ``tool_names``: only these, ``reply`` always). ``headers``: e.g. the server's
    token, ``{"Authorization": "Bearer ..."}``."""
    session = OpenEnvSession(base_url, headers)
    try:
        listed = session.list_tools()
    finally:
        session.close()
    wanted = None if tool_names is None else {*tool_names, REPLY}
    namespace: dict[str, Any] = {"base_url": base_url, "headers": headers, "__module__": __name__}
    for tool in listed:
        name = str(tool["name"])
        if wanted is None or name in wanted:
            namespace[name] = schema_method(
                name, str(tool.get("description", "")), dict(tool["input_schema"]), _caller(name)
            )
    return type("OpenEnvCoworkEnvironment", (OpenEnvEnvironment,), namespace)


def _caller(name: str) -> Any:
    def call(self: OpenEnvEnvironment, arguments: dict[str, Any]) -> str:
        return self._call_tool(name, arguments)

    return call


def openenv_rows(
    base_url: str, task_ids: Sequence[str] | None = None, headers: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """Dataset rows, one per task (all the server's, or ``task_ids``): ``prompt`` (the task's instructions as the
    system message, then an empty user turn that ``reset`` fills with the request) and ``task_id``. The instructions
    come from the server's stateless ``POST /reset``."""
    root = base_url.rstrip("/")
    ids = list(task_ids) if task_ids is not None else [t["id"] for t in _http(f"{root}/tasks", None, headers)["tasks"]]
    rows = []
    for task_id in ids:
        first = _http(f"{root}/reset", {"task_id": task_id}, headers)["observation"]
        prompt = [{"role": "system", "content": first["instructions"]}, {"role": "user", "content": ""}]
        rows.append({"prompt": prompt, "task_id": task_id})
    return rows


def _http(url: str, body: dict[str, Any] | None, headers: dict[str, str] | None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json", **(headers or {})})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def said_last(completion: Any) -> str:
    """The last assistant text of a trl completion (a list of messages, or a string)."""
    if isinstance(completion, str):
        return completion
    texts = [str(m.get("content") or "") for m in completion if m.get("role") == "assistant"]
    return next((t for t in reversed(texts) if t.strip()), "")


def openenv_reward(
    completions: list[Any], environments: list[OpenEnvEnvironment] | None = None, **_: Any
) -> list[float | None]:
    """trl reward function: the grader's score of each rollout's episode (its last text said to the user first if it
    never called ``reply``); None for an episode the user still had something to say in (trl leaves it out)."""
    if environments is None:
        raise ValueError("openenv_reward reads the rollout's environment: train with environment_factory")
    out = []
    for completion, env in zip(completions, environments, strict=True):
        env._finish(said_last(completion))
        out.append(env.reward)
    return out
