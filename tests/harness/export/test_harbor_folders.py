"""`coworkenv export-tasks --format harbor`: every task gets a folder of its own, named within 255 bytes, and
tasks that would share one are refused before anything is written (no harbor package needed)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from coworkenv.harness.cli import export_tasks_cmd
from coworkenv.harness.export.harbor import folder_name
from coworkenv.synth.contract.library import examples_dir
from coworkenv.synth.contract.task import Task
from coworkenv.synth.contract.taskfile import load_task, save_task


def _example() -> Task:
    return load_task(examples_dir() / "tickets-triage-new-urgent.json")


def _save(folder: Path, *ids: str) -> Path:
    folder.mkdir()
    task = _example()
    for i, task_id in enumerate(ids):
        save_task(task.model_copy(update={"id": task_id}), folder / f"{i}.json")
    return folder


def test_tasks_that_would_share_a_folder_are_refused_in_one_line_before_anything_is_written(tmp_path: Path) -> None:
    tasks = _save(tmp_path / "tasks", "a..", "a-", "a")
    out = tmp_path / "out"
    result = CliRunner().invoke(export_tasks_cmd, [str(tasks), "--out", str(out)])
    assert result.exit_code == 1
    message = result.output.strip()
    assert "\n" not in message and "'a..'" in message and "'a-'" in message and "another id" in message
    assert not out.exists()


def test_a_long_id_is_cut_to_255_bytes_and_the_count_printed_is_the_count_written(tmp_path: Path) -> None:
    long_id = "t" + "x" * 400
    tasks = _save(tmp_path / "tasks", long_id, "short-one")
    out = tmp_path / "out"
    result = CliRunner().invoke(export_tasks_cmd, [str(tasks), "--out", str(out)])
    assert result.exit_code == 0, result.output
    folders = sorted(p.name for p in out.iterdir())
    assert len(folders) == 2 and result.output.startswith("2 Harbor task folder(s)")
    assert max(len(name.encode()) for name in folders) == 255
    assert (out / folder_name(_example().model_copy(update={"id": long_id})) / "task.toml").is_file()


def test_ids_that_agree_in_their_first_255_bytes_are_refused(tmp_path: Path) -> None:
    tasks = _save(tmp_path / "tasks", "y" * 300 + "1", "y" * 300 + "2")
    result = CliRunner().invoke(export_tasks_cmd, [str(tasks), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1 and "would both be written" in result.output
