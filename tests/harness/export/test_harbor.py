"""`coworkenv export-tasks --format harbor`: Harbor task directories, checked with the harbor package's own task
model (`harbor.models.task.task.Task`, `TaskConfig`), and a verifier script that grades with `coworkenv grade`.

Harbor 0.25 declares Python ≥ 3.12; on 3.11 its task model needs only ``typing.override`` (a no-op decorator at run
time), which is borrowed from typing_extensions here. Skipped, saying so, when harbor is not installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import pytest
import typing_extensions
from click.testing import CliRunner

from coworkenv.harness.cli import export_tasks_cmd
from coworkenv.harness.export.harbor import instruction, package_name
from coworkenv.synth.contract.library import examples_dir
from coworkenv.synth.contract.taskfile import load_task, load_tasks, task_files

if sys.version_info < (3, 12) and not hasattr(typing, "override"):
    typing.override = typing_extensions.override  # type: ignore[attr-defined]
CLI = "from coworkenv.train.cli import main; main()"
HARBOR = "harbor==0.25.0"
HARBOR_TARGET = Path(__file__).parents[3] / ".tools" / "harbor"  # git-ignored, like the pinned Claude Code


def _harbor_on_path() -> None:
    """harbor declares Python >= 3.12, so pip will not install it as a dependency here; its task model (all these
    tests need) runs on 3.11, so install the pinned release without its dependencies into .tools/harbor."""
    try:
        import harbor  # noqa: F401
    except ImportError:
        if not (HARBOR_TARGET / "harbor").is_dir():
            cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--target", str(HARBOR_TARGET), "--no-deps"]
            cmd += ["--ignore-requires-python", HARBOR, "toml", "pathspec"]
            subprocess.run(cmd, capture_output=True, timeout=300, check=False)
        sys.path.insert(0, str(HARBOR_TARGET))


_harbor_on_path()
harbor_task = pytest.importorskip(
    "harbor.models.task.task",
    reason=f"harbor is not installed and pip could not install {HARBOR} into .tools/harbor (no registry?)",
)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("harbor")
    result = CliRunner().invoke(export_tasks_cmd, ["examples", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def examples() -> list[Any]:
    return [t for f in task_files([examples_dir()]) for t in load_tasks(f)]


def test_every_exported_task_is_a_valid_harbor_task_directory(exported: Path) -> None:
    tasks = examples()
    assert sorted(p.name for p in exported.iterdir()) == sorted(t.id for t in tasks)
    for task in tasks:
        folder = exported / task.id
        assert harbor_task.Task.is_valid_dir(folder), folder
        loaded = harbor_task.Task(folder)
        assert loaded.name == package_name(task) and task.request.strip() in loaded.instruction
        servers = loaded.config.environment.mcp_servers
        assert [s.name for s in servers] == list(task.services)
        assert all(s.transport == "stdio" and s.args[:3] == ["-m", "coworkenv.servers", "serve"] for s in servers)
        assert loaded.config.metadata["coworkenv_task_id"] == task.id


def test_the_image_installs_coworkenv_and_seeds_the_workspace_without_keeping_the_checks(exported: Path) -> None:
    task = examples()[0]
    docker = (exported / task.id / "environment" / "Dockerfile").read_text()
    assert "pip install" in docker and "coworkenv workspace /opt/task.json --dir /workspace" in docker
    final_stage = docker.rsplit("FROM ", 1)[1]
    assert final_stage.startswith("base") and "task.json" not in final_stage
    assert load_task(exported / task.id / "tests" / "task.json") == task


def test_the_verifier_grades_the_workspace_and_writes_the_score_as_reward(exported: Path, tmp_path: Path) -> None:
    task = examples()[0]
    folder = exported / task.id
    workspace, logs = tmp_path / "workspace", tmp_path / "logs"
    bin_dir = tmp_path / "bin"  # `coworkenv` and `python` as the image has them
    bin_dir.mkdir()
    (bin_dir / "coworkenv").write_text(f'#!/bin/sh\nexec {sys.executable} -c "{CLI}" "$@"\n')
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    for shim in bin_dir.iterdir():
        shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    made = subprocess.run(
        ["coworkenv", "workspace", str(folder / "tests" / "task.json"), "--dir", str(workspace)],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    script = (folder / "tests" / "test.sh").read_text().replace("/workspace", str(workspace))
    script = script.replace("/tests", str(folder / "tests")).replace("/logs", str(logs))
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    reward = json.loads((logs / "verifier" / "reward.json").read_text())
    assert reward == {"reward": 0.0, "completion": 0.0, "safety": 1.0, "passed": 0.0}  # nothing was done yet
    assert task.id in done.stdout  # the per-check report is in the verifier's log


def test_the_instruction_asks_for_the_final_answer_in_a_file_the_grader_reads() -> None:
    task = examples()[0]
    text = instruction(task)
    assert text.startswith(task.request.strip()) and "/workspace/ANSWER.md" in text
