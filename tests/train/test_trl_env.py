"""The trl environment over our tasks: tools from the MCP specs, fresh state per reset, the grader as reward,
user messages after tool calls, and the same behaviour against a running MCP server over HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("trl")

from mcp import Client

from coworkenv.harness.agents.registry import make_agent
from coworkenv.harness.episode import run_episode
from coworkenv.servers.kit import Environment, images
from coworkenv.servers.kit.door import CallOutcome, DoorTool
from coworkenv.servers.registry import get_service
from coworkenv.synth.contract.baseline import Baseline
from coworkenv.synth.contract.grader import grade
from coworkenv.synth.contract.task import Task, UserSpec, UserTurn
from coworkenv.synth.contract.taskfile import load_task
from coworkenv.train.trl_backends import LocalBackend, TaskBaselines
from coworkenv.train.trl_env import (
    CoworkEnvironment,
    TaskEnvironment,
    http_factory,
    json_tools,
    score_reward,
    task_rows,
    trl_environments,
)
from coworkenv.train.trl_tools import plain_schema

EXAMPLES = Path(__file__).parents[2] / "synth" / "examples"
TASK = load_task(EXAMPLES / "tickets-triage-new-urgent.json")
MULTI = load_task(EXAMPLES / "escalate-stale-enterprise-to-account-managers.json")


def replay(task: Task) -> Any:
    async def go() -> Any:
        with anyio.fail_after(30):
            return await run_episode(task, make_agent("replay"))

    return anyio.run(go)


def play(env: TaskEnvironment, steps: Any) -> None:
    for step in steps:
        getattr(env, step.name)(**step.arguments)


async def mcp_tools(service: str) -> list[Any]:
    with anyio.fail_after(30), Environment.create([service]) as env:
        async with Client(env.server(service)) as client:
            return list((await client.list_tools()).tools)


@pytest.mark.parametrize("service", ["tickets", "crm", "payments", "calendar"])
def test_tool_methods_and_their_schemas_are_the_mcp_tools_less_the_bounds_type_hints_cannot_say(
    service: str,
) -> None:
    listed = anyio.run(mcp_tools, service)
    schemas = {t["function"]["name"]: t["function"] for t in json_tools(CoworkEnvironment.for_services([service]))}
    assert sorted(schemas) == sorted(f"{service}__{t.name}" for t in listed)
    for tool in listed:
        mine = schemas[f"{service}__{tool.name}"]
        served = dict(tool.input_schema)
        assert mine["description"] == (tool.description or "").strip()
        assert set(mine["parameters"].get("required", [])) == set(served.get("required", []))
        for name, prop in served.get("properties", {}).items():
            got = dict(mine["parameters"]["properties"][name])
            assert got.pop("description") == " ".join(str(prop.get("description") or name).split())
            assert got == plain_schema(prop, served)


def test_the_reward_of_a_replayed_solution_equals_the_graders_score_and_the_harness_episode() -> None:
    episode = replay(MULTI)
    rows, factory = trl_environments([MULTI])
    assert callable(factory)
    env = factory()
    assert env.reset(**rows[0]) == MULTI.request
    play(env, episode.steps)
    env._set_said(episode.said)
    state = env._backend.env
    assert env.get_reward() == grade(Baseline.of(MULTI), state.dump(), state.audit(), episode.said).score
    assert env.get_reward() == episode.grade.score == 1.0
    assert env.anchors[0] == pristine_hash(MULTI)
    assert score_reward([[{"role": "assistant", "content": s} for s in episode.said]], [env]) == [1.0]


def pristine_hash(task: Task) -> str:
    with Environment.create(task.seeds(), now=task.now) as env:
        return env.state_hash()


def test_each_reset_forks_fresh_seeded_state_so_a_pooled_instance_leaks_nothing() -> None:
    rows, factory = trl_environments([TASK])
    env = factory()  # type: ignore[operator]
    env.reset(**rows[0])
    play(env, replay(TASK).steps)
    assert env._backend.env.state_hash() != pristine_hash(TASK)
    env.reset(**rows[0])
    assert env._backend.env.state_hash() == pristine_hash(TASK)
    assert env._backend.env.audit() == [] and env.calls == [] and env.get_reward() == 0.0


def test_a_bad_argument_is_the_kits_invalid_arguments_answer_and_an_unknown_record_a_business_error() -> None:
    rows, factory = trl_environments([TASK])
    env = factory()  # type: ignore[operator]
    env.reset(**rows[0])
    assert env.tickets__get_ticket(ticket_id="x" * 5000).startswith("Error: Invalid arguments for get_ticket")
    assert env.tickets__get_ticket(ticket_id="tkt_nope").startswith("Error")
    assert [outcome for outcome in (r.outcome for r in env._backend.env.audit())] == ["invalid_arguments", "error"]


class WatchedBackend(LocalBackend):
    """The local backend with a door of the test's own in front of the kit's direct door: any kit door will do."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, str]] = []

    def start(self, baseline: Baseline) -> None:
        super().start(baseline)
        inner, seen = self.door, self.seen

        class Watched:
            async def call(self, service: str, tool: str, arguments: Mapping[str, Any]) -> CallOutcome:
                seen.append((service, tool))
                return await inner.call(service, tool, arguments)

            async def list_tools(self, service: str) -> list[DoorTool]:
                return await inner.list_tools(service)

        self.door = Watched()


def test_the_environment_calls_the_tools_through_its_backend_s_kit_door_and_its_outcome() -> None:
    backends: list[WatchedBackend] = []

    def connect() -> WatchedBackend:
        backends.append(WatchedBackend())
        return backends[-1]

    steps = replay(TASK).steps
    rows, factory = trl_environments([TASK], connect=connect)
    env = factory()  # type: ignore[operator]
    env.reset(**rows[0])
    play(env, steps)
    assert env.tickets__get_ticket(ticket_id="tkt_nope").startswith("Error: ")
    assert backends[0].seen == [*(tuple(s.name.split("__")) for s in steps), ("tickets", "get_ticket")]
    assert env.calls[-1] == ("tickets__get_ticket", True) and env.get_reward() == 1.0


def test_rows_route_tasks_with_different_services_to_their_own_environment_class() -> None:
    rows, factories = trl_environments([TASK, MULTI], owns_reward=False)
    assert isinstance(factories, dict) and sorted(factories) == ["crm+email+tickets", "tickets"]
    assert [r["environment"] for r in rows] == ["tickets", "crm+email+tickets"]
    assert not hasattr(factories["tickets"], "get_reward")
    assert rows[0]["prompt"][1] == {"role": "user", "content": ""}
    assert "tickets__get_ticket" in dir(factories["tickets"]) and "crm__get_account" not in dir(factories["tickets"])


def test_named_tools_narrow_the_environment_and_its_prompt_to_the_list_a_model_was_trained_with() -> None:
    from coworkenv.harness.agents.hf_agent import COMPACT_HEADER

    names = ["tickets__assign_ticket", "tickets__search_tickets"]
    rows, factory = trl_environments([TASK], owns_reward=False, template="compact", tool_names=names)
    assert isinstance(factory, type)
    assert sorted(t["function"]["name"] for t in json_tools(factory)) == names
    system = rows[0]["prompt"][0]["content"]
    listed = system.split(COMPACT_HEADER, 1)[1]
    assert "tickets__assign_ticket" in listed and "tickets__get_ticket" not in listed
    _, full = trl_environments([TASK], owns_reward=False)
    assert "tickets__get_ticket" in dir(full) and "tickets__get_ticket" not in dir(factory)
    env = factory()
    env.reset(**rows[0])
    assert "tkt_" in env.tickets__search_tickets(status=["new"])  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="none of the tools"):
        trl_environments([TASK], tool_names=["crm__get_account"])


def test_a_user_message_due_after_a_tool_call_arrives_with_that_calls_result() -> None:
    first = replay(TASK).steps[0]
    service, _, tool = first.name.partition("__")
    turn = UserTurn(message="FYI: Kim is on call today.", when={"after_tool": f"{service}.{tool}"})  # type: ignore[arg-type]
    task = TASK.model_copy(update={"user": UserSpec(turns=[turn])})
    env = CoworkEnvironment.for_services(task.services)()
    env.reset(**task_rows([task])[0])
    result = getattr(env, first.name)(**first.arguments)
    assert result.endswith("(Message from the user: FYI: Kim is on call today.)")


def test_a_finished_reply_gets_the_users_answer_as_in_the_harness_and_the_goodbye_ends_the_conversation() -> None:
    from coworkenv.synth.generate.families import get_family

    task = get_family("crm-clarify-contact").make(("crm",), "easy", 7)  # type: ignore[arg-type]
    assert task.user is not None and task.user.held_back
    env = CoworkEnvironment.for_services(task.services)()
    env.reset(**task_rows([task])[0])
    asked = next(m.content for m in replay(task).messages if m.role == "assistant" and m.content)
    assert env._user_reply(asked) == task.user.held_back[0]
    assert env._user_reply("Done: the phone number is updated.") is None and env.ended
    assert env._user_reply("Anything else?") is None
    env.reset(**task_rows([task])[0])
    assert not env.ended


@pytest.fixture
def served_tickets(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """``coworkenv serve tickets --transport http`` on 127.0.0.1 with TASK's seed and clock."""
    db, seed = tmp_path / "tickets.db", tmp_path / "seed.json"
    seed.write_text(json.dumps(TASK.seed("tickets")), encoding="utf-8")
    cmd = [sys.executable, "-m", "coworkenv.servers", "serve", "tickets", "--db", str(db), "--seed", str(seed)]
    cmd += ["--now", TASK.now, "--transport", "http", "--port", "0"]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=dict(os.environ))
    watchdog = threading.Timer(60, proc.kill)
    watchdog.start()
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        watchdog.cancel()
        assert "http://127.0.0.1:" in line, line
        yield line.strip().rsplit(" ", 1)[-1], str(db)
    finally:
        watchdog.cancel()
        proc.terminate()
        proc.communicate(timeout=10)


@pytest.mark.slow
def test_against_a_running_mcp_server_the_tools_answer_and_the_reward_match_the_direct_door(
    served_tickets: tuple[str, str],
) -> None:
    steps = replay(TASK).steps
    rows, factory = trl_environments([TASK], connect=http_factory([{"tickets": served_tickets}]))
    remote, local = factory(), trl_environments([TASK])[1]()  # type: ignore[operator]
    for _ in range(2):  # the second reset puts the served database back
        for env in (remote, local):
            env.reset(**rows[0])
        answers = [(getattr(remote, s.name)(**s.arguments), getattr(local, s.name)(**s.arguments)) for s in steps]
        assert all(a == b for a, b in answers)
        assert remote.get_reward() == local.get_reward() == 1.0
    assert [r.tool for r in remote._backend.env.audit()] == [s.name.split("__")[1] for s in steps]
    remote._backend.close()
    assert factory.tasks is not None and len(factory.tasks) == 1  # type: ignore[union-attr]
    _ = get_service("tickets")


def test_each_trainers_environments_share_one_bounded_cache_of_tasks_and_baselines_of_their_own() -> None:
    rows, factory = trl_environments([TASK, MULTI])
    assert isinstance(factory, dict)
    caches = {id(cls.tasks) for cls in factory.values()}
    assert len(caches) == 1 and None not in {cls.tasks for cls in factory.values()}
    shared = factory["tickets"].tasks
    assert shared is not None
    first, second = factory["tickets"](), factory["tickets"]()
    first.reset(**rows[0])
    second.reset(**rows[0])
    assert len(shared) == 1  # two environments, one task: seeded once
    _, other = trl_environments([TASK])
    assert other.tasks is not shared  # type: ignore[union-attr]  # another trainer: a cache of its own


def test_the_task_cache_keeps_the_most_recently_used_and_closes_the_baselines_it_lets_go() -> None:
    cache = TaskBaselines(tasks=2, baselines=1)
    texts = [TASK.model_dump_json(), MULTI.model_dump_json()]
    (key, task), (other_key, other) = (cache.task(t) for t in texts)
    assert cache.task(texts[0]) == (key, task) and task.id == TASK.id
    kept = cache.baseline(key, task)
    assert cache.baseline(key, task) is kept and len(cache) == 1
    cache.baseline(other_key, other)
    assert len(cache) == 1 and all(s.conn is images.CLOSED for s in kept.pristine.states.values())
    cache.close()
    assert len(cache) == 0
