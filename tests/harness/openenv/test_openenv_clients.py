"""OpenEnv's own clients against a real ``coworkenv openenv serve`` on 127.0.0.1, each in a venv of its own (their
pins clash with ours): ``openenv`` 0.10.0 (``GenericEnvClient``, and ``MCPToolClient`` in its production mode:
sessions over HTTP ``/mcp`` with the socket attached) and the ``openenv`` 0.4.1 that ``verifiers[openenv]==0.4.0``
installs. Each plays the reference solution (reward 1.0) and a no-op (below the pass mark) of several tasks, one of
them with a question to the user. The venvs are built once under ``.tools/`` (both at once) and reused."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from coworkenv.synth.contract.taskfile import load_task, save_tasks
from coworkenv.synth.generate.families import get_family
from tests.harness.openenv.plays import EXAMPLES, client_venv, play, reference_actions, served

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

CLIENTS = {"openenv-0.10.0": "openenv==0.10.0", "verifiers-0.4.0": "verifiers[openenv]==0.4.0"}
EXAMPLE_IDS = [
    "tickets-triage-new-urgent",
    "payments-refund-unwanted-addon",
    "escalate-stale-enterprise-to-account-managers",
]
PASS_MARK = 0.75


@pytest.fixture(scope="module")
def venvs() -> dict[str, Path | str]:
    """Each client's python, or why it could not be had (built concurrently: each takes minutes the first time)."""

    def build(name: str) -> Path | str:
        try:
            return client_venv(name, CLIENTS[name])
        except pytest.skip.Exception as exc:
            return str(exc)

    with ThreadPoolExecutor(len(CLIENTS)) as pool:
        return dict(zip(CLIENTS, pool.map(build, CLIENTS), strict=True))


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    chosen = [load_task(EXAMPLES / f"{i}.json") for i in EXAMPLE_IDS]
    return [*chosen, get_family("crm-clarify-contact").make(("crm",), "easy", 7)]  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def server(tasks: list[Any], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("openenv-tasks")
    save_tasks(tasks, folder / "tasks.jsonl")
    with served(folder) as url:
        yield url


def episodes(tasks: list[Any]) -> list[dict[str, Any]]:
    out = []
    for task in tasks:
        actions = reference_actions(task)
        out += [
            {"task_id": task.id, "actions": actions, "client": "generic"},
            {"task_id": task.id, "actions": [], "client": "generic"},
            {"task_id": task.id, "actions": actions, "client": "mcp"},
        ]
    return out


def check(results: list[dict[str, Any]], tasks: list[Any]) -> None:
    assert len(results) == 3 * len(tasks)
    for result in results:
        noop = result["client"] == "generic" and result.get("errors")
        assert result["done"] is True, result
        if noop:
            assert result["reward"] < PASS_MARK and result["score"] == result["reward"], result
            assert result["errors"][0]["error_type"] == "tool_not_found"
        else:
            assert result["reward"] == 1.0, result
        assert "reply" in result["tools"] and not {"reset", "step", "state", "close"} & set(result["tools"])
    by_id = {t.id: t for t in tasks}
    assert all(r["request"] == by_id[r["task_id"]].request for r in results)


@pytest.mark.parametrize("name", list(CLIENTS))
def test_openenvs_own_clients_play_the_reference_to_reward_one_and_the_noop_below_the_pass_mark(
    name: str, venvs: dict[str, Path | str], server: str, tasks: list[Any], tmp_path: Path
) -> None:
    python = venvs[name]
    if isinstance(python, str):
        pytest.skip(python)
    version = subprocess.run(
        [str(python), "-c", "from importlib.metadata import version; print(version('openenv'))"],
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    assert version == ("0.10.0" if name == "openenv-0.10.0" else "0.4.1")
    check(play(python, server, episodes(tasks), tmp_path), tasks)
