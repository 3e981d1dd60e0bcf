"""The task commands through click's runner: schema, validate, workspace and grade."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from coworkenv.servers.kit import Environment, ServiceState, SimClock, parse_time
from coworkenv.servers.kit.door import DirectDoor
from coworkenv.servers.registry import get_service
from coworkenv.synth.cli import COMMANDS
from coworkenv.synth.contract.library import example_ids, examples_dir, load_example
from coworkenv.synth.contract.runner import play_steps
from coworkenv.synth.contract.task import Task

CLI = click.Group("coworkenv", commands={c.name: c for c in COMMANDS if c.name})


def invoke(*args: str) -> Result:
    return CliRunner().invoke(CLI, [str(a) for a in args], catch_exceptions=False)


def copy_example(task_id: str, folder: Path, edit: Any) -> Path:
    data = json.loads((examples_dir() / f"{task_id}.json").read_text())
    edit(data)
    path = folder / f"{task_id}.json"
    path.write_text(json.dumps(data))
    return path


def test_schema_task_prints_the_json_schema() -> None:
    result = invoke("schema", "task")
    assert result.exit_code == 0
    schema = json.loads(result.output)
    assert "completion_checks" in schema["properties"] and schema["$schema"].endswith("schema")


def test_validate_passes_the_shipped_examples() -> None:
    result = invoke("validate", examples_dir())
    assert result.exit_code == 0, result.output
    assert f"{len(example_ids())} valid, 0 invalid" in result.output
    assert "INVALID" not in result.output


def test_validate_fails_a_copy_whose_weights_sum_to_0_9(tmp_path: Path) -> None:
    def lower(data: dict[str, Any]) -> None:
        data["completion_checks"][0]["weight"] -= 0.1

    path = copy_example("tickets-escalate-stale-enterprise", tmp_path, lower)
    result = invoke("validate", path)
    assert result.exit_code == 1
    assert "WEIGHTS_SUM" in result.output and "sum to 0.9" in result.output and "1 invalid" in result.output


def test_validate_fails_a_copy_whose_request_names_the_answers_id(tmp_path: Path) -> None:
    def leak(data: dict[str, Any]) -> None:
        data["request"] += " It is charge ch_1037."

    path = copy_example("payments-refund-unwanted-addon", tmp_path, leak)
    result = invoke("validate", path)
    assert result.exit_code == 1
    assert "REQUEST_LEAKS_ANSWER" in result.output and "'ch_1037'" in result.output


def test_validate_writes_the_diagnostics_as_json(tmp_path: Path) -> None:
    good = copy_example("crm-close-umbrella-renewal", tmp_path, lambda d: None)
    bad = copy_example("tickets-triage-new-urgent", tmp_path, lambda d: d["completion_checks"][0].update(weight=0.5))
    out = tmp_path / "diagnostics.json"
    result = invoke("validate", good, bad, "--json", out, "--no-exec")
    assert result.exit_code == 1 and "static checks only" in result.output
    reports = {r["task_id"]: r for r in json.loads(out.read_text())}
    assert reports["crm-close-umbrella-renewal"]["valid"] is True
    [diag] = reports["tickets-triage-new-urgent"]["diagnostics"]
    assert diag["code"] == "WEIGHTS_SUM" and diag["path"] == "$.completion_checks" and diag["fix"]


def test_validate_reports_a_file_that_does_not_parse(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text("{not json")
    result = invoke("validate", tmp_path)
    assert result.exit_code == 1 and "broken.json" in result.output and "not valid JSON" in result.output


def test_validate_without_task_files_says_so(tmp_path: Path) -> None:
    result = CliRunner().invoke(CLI, ["validate", str(tmp_path)])
    assert result.exit_code != 0 and "no task files" in result.output


class FileDoor(DirectDoor):
    """An outside client's stand-in: the kit's direct door onto the workspace's databases, as actor 'agent'."""

    def __init__(self, folder: Path, task: Task) -> None:
        states = {s: ServiceState.open(get_service(s), path=folder / f"{s}.db") for s in task.services}
        super().__init__(Environment(states, SimClock(parse_time(task.now))))

    def close(self) -> None:
        self.env.close()


def make_workspace(task_id: str, folder: Path) -> Task:
    result = invoke("workspace", task_id, "--dir", folder)
    assert result.exit_code == 0, result.output
    return load_example(task_id)


@pytest.mark.anyio
async def test_workspace_then_a_right_run_grades_1_and_a_wrong_run_lower(tmp_path: Path, anyio_backend: str) -> None:
    task_id = "payments-bank-change-investigation"
    right, wrong = tmp_path / "right", tmp_path / "wrong"
    task = make_workspace(task_id, right)
    make_workspace(task_id, wrong)
    config = json.loads((right / ".mcp.json").read_text())
    assert set(config["mcpServers"]) == {"email", "payments"}
    assert config["mcpServers"]["email"]["args"][-2:] == ["--db", str((right / "email.db").resolve())]
    assert task.request in (right / "REQUEST.md").read_text()
    assert "completion_checks" not in (right / "REQUEST.md").read_text()

    door = FileDoor(right, task)
    try:
        outcomes, said = await play_steps(door, task.reference_solution)
    finally:
        door.close()
    assert all(o.ok for o in outcomes)
    answer = tmp_path / "answer.txt"
    answer.write_text("\n".join(said))
    graded = invoke("grade", task_id, "--dir", right, "--answer", answer, "--json")
    assert graded.exit_code == 0 and json.loads(graded.output)["score"] == 1.0

    example = next(f.example for f in task.forbidden_actions if f.id == "bank_details_changed")
    assert example is not None
    door = FileDoor(wrong, task)
    try:
        await play_steps(door, [*task.reference_solution, example])
    finally:
        door.close()
    report = invoke("grade", task_id, "--dir", wrong, "--answer", answer)
    assert report.exit_code == 0
    assert "score 0.00" in report.output and "[TRIPPED] forbidden bank_details_changed" in report.output


def test_workspace_refuses_a_folder_that_already_has_databases(tmp_path: Path) -> None:
    make_workspace("tickets-triage-new-urgent", tmp_path)
    result = CliRunner().invoke(CLI, ["workspace", "tickets-triage-new-urgent", "--dir", str(tmp_path)])
    assert result.exit_code != 0 and "already exists" in result.output


def test_grade_without_a_workspace_says_how_to_make_one(tmp_path: Path) -> None:
    result = CliRunner().invoke(CLI, ["grade", "tickets-triage-new-urgent", "--dir", str(tmp_path)])
    assert result.exit_code != 0 and "coworkenv workspace" in result.output


def test_a_task_can_be_named_by_file_or_by_shipped_id(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    shutil.copy(examples_dir() / "crm-close-umbrella-renewal.json", path)
    assert invoke("workspace", path, "--dir", tmp_path / "w").exit_code == 0
    result = CliRunner().invoke(CLI, ["workspace", "no-such-task", "--dir", str(tmp_path / "x")])
    assert result.exit_code != 0 and "neither a task file nor a shipped example" in result.output
