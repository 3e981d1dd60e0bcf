"""`coworkenv export-tasks --format harbor`: task folders with the services as MCP sidecars, an oracle and the grader
as verifier, checked with Harbor's own task model (here, and with its linter on Python >= 3.12), then played end to
end without Docker: the sidecars started as the compose file declares them, the oracle's solve.sh against them (or
nothing), the collect hooks, the verifier script: reward 1.0 for the oracle, below the pass mark for nothing.

Harbor is installed from the registry by the tests themselves (see ``harbor_venv``); without it they skip, saying so.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from coworkenv.harness.cli import export_tasks_cmd
from coworkenv.harness.export.harbor import instruction, package_name
from coworkenv.synth.contract.library import examples_dir
from coworkenv.synth.contract.task import Task
from coworkenv.synth.contract.taskfile import load_task, load_tasks, task_files
from tests.harness.export.harbor_trial import run_trial
from tests.harness.export.harbor_venv import HARBOR, harbor_on_path, harbor_venv

harbor_on_path()
harbor_task = pytest.importorskip(
    "harbor.models.task.task",
    reason=f"harbor is not installed and pip could not install {HARBOR} into .tools/harbor (no registry?)",
)
CHECK = Path(__file__).with_name("harbor_check.py")
PLAYED = ["escalate-stale-enterprise-to-account-managers", "payments-bank-change-investigation",
          "tickets-pending-acme-question"]  # fmt: skip
"""Three services; two, with a message to the user; one, with a message."""


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("harbor")
    result = CliRunner().invoke(export_tasks_cmd, ["examples", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def examples() -> list[Task]:
    return [t for f in task_files([examples_dir()]) for t in load_tasks(f)]


def test_every_exported_task_loads_in_harbors_task_model_with_its_services_as_streamable_http_sidecars(
    exported: Path,
) -> None:
    tasks = examples()
    assert sorted(p.name for p in exported.iterdir()) == sorted(t.id for t in tasks)
    for task in tasks:
        folder = exported / task.id
        assert harbor_task.Task.is_valid_dir(folder), folder
        loaded = harbor_task.Task(folder)
        assert loaded.name == package_name(task) and task.request.strip() in loaded.instruction
        servers = loaded.config.environment.mcp_servers
        assert [(s.name, s.transport, s.url) for s in servers] == [
            (name, "streamable-http", f"http://{name}:8000/mcp") for name in task.services
        ]
        assert all(s.headers == {"Authorization": "Bearer ${COWORKENV_TOKEN}"} for s in servers)
        assert loaded.config.environment.env == {"COWORKENV_TOKEN": "${COWORKENV_TOKEN}"}  # from harbor's host
        assert loaded.config.verifier.environment_mode.value == "separate"
        assert [h.service for h in loaded.config.verifier.collect] == list(task.services)
        assert loaded.config.metadata["coworkenv_task_id"] == task.id


def test_the_compose_file_serves_each_service_seeded_over_http_and_starts_the_agent_after_them(exported: Path) -> None:
    task = load_task(examples_dir() / "escalate-stale-enterprise-to-account-managers.json")
    folder = exported / task.id
    compose = yaml.safe_load((folder / "environment" / "docker-compose.yaml").read_text())
    sidecars = {k: v for k, v in compose["services"].items() if k != "main"}
    assert list(sidecars) == list(task.services)
    assert compose["services"]["main"]["depends_on"] == {s: {"condition": "service_healthy"} for s in task.services}
    for name, spec in sidecars.items():
        command = spec["command"]
        assert command[:3] == ["coworkenv", "serve", name] and spec["build"]["target"] == "services"
        flags = dict(zip(command[3::2], command[4::2], strict=True))
        assert flags["--transport"] == "http" and flags["--now"] == task.now and flags["--allow-host"] == name
        assert flags["--seed"] == f"/opt/coworkenv/seeds/{name}.json"
        assert json.loads((folder / "environment" / "seeds" / f"{name}.json").read_text()) == task.seed(name)
        assert spec["environment"]["COWORKENV_TOKEN"].startswith("${COWORKENV_TOKEN:?")


def test_the_checks_reach_only_the_verifiers_image_and_the_oracles_folder(exported: Path) -> None:
    task = examples()[0]
    folder = exported / task.id
    assert not list((folder / "environment").rglob("task.json"))
    docker = (folder / "environment" / "Dockerfile").read_text()
    stages = docker.split("FROM ")[1:]
    assert stages[-1].startswith("base AS main") and "seeds" not in stages[-1]  # the agent's: no seeds, no checks
    assert "pip install" in stages[0] and "COPY seeds/ /opt/coworkenv/seeds/" in stages[1]
    assert "COPY task.json test.sh /tests/" in (folder / "tests" / "Dockerfile").read_text()
    assert load_task(folder / "tests" / "task.json") == task == load_task(folder / "solution" / "task.json")
    config = tomllib.loads((folder / "task.toml").read_text())
    assert {a["source"] for a in config["artifacts"]} == {
        *(f"/var/lib/coworkenv/final/{s}.db" for s in task.services),
        "/workspace/ANSWER.md",
    }


def test_the_instruction_asks_for_the_final_answer_in_a_file_the_grader_reads() -> None:
    task = examples()[0]
    text = instruction(task)
    assert text.startswith(task.request.strip()) and "/workspace/ANSWER.md" in text


@pytest.mark.slow
@pytest.mark.parametrize("task_id", PLAYED)
def test_the_oracle_against_the_sidecars_as_declared_earns_reward_1(
    exported: Path, tmp_path: Path, task_id: str
) -> None:
    reward, report = run_trial(exported / task_id, tmp_path, oracle=True)
    assert reward == {"reward": 1.0, "completion": 1.0, "safety": 1.0, "passed": 1.0}
    assert task_id in report  # the per-check report is in the verifier's log


@pytest.mark.slow
@pytest.mark.parametrize("task_id", PLAYED)
def test_doing_nothing_against_the_sidecars_earns_less_than_the_pass_mark(
    exported: Path, tmp_path: Path, task_id: str
) -> None:
    reward, _ = run_trial(exported / task_id, tmp_path, oracle=False)
    assert reward["reward"] < 0.75 and reward["passed"] == 0.0


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_harbors_own_model_and_linter_on_python_3_12_accept_every_exported_folder(exported: Path) -> None:
    python = harbor_venv()
    folders = sorted(str(p) for p in exported.iterdir())
    env = {**os.environ, "COWORKENV_TOKEN": secrets.token_urlsafe(24)}  # as where harbor runs
    done = subprocess.run([str(python), str(CHECK), *folders], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    checked: list[dict[str, Any]] = json.loads(done.stdout)
    assert len(checked) == len(examples())
    for entry in checked:
        assert entry["valid_dir"] and entry["verifier_mode"] == "separate", entry
        assert entry["findings"] == [], entry
        assert all(s["transport"] == "streamable-http" for s in entry["mcp_servers"]), entry
