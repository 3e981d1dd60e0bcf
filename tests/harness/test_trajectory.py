"""Trajectory files: durable appends, a torn last line tolerated and repaired, one record per pair when read."""

from __future__ import annotations

from pathlib import Path

import pytest

from coworkenv.harness.trajectory import TrajectoryWriter, read_lines, read_trajectories, task_fields
from coworkenv.synth.contract.library import load_example
from coworkenv.synth.contract.task import Task
from tests.harness.conftest import record


def test_a_torn_last_line_is_ignored_when_read_and_cut_when_appending(tmp_path: Path) -> None:
    path = tmp_path / "trajectories.jsonl"
    with TrajectoryWriter(path) as w:
        w.write(record("a"))
        w.write(record("b"))
    good = path.stat().st_size
    with path.open("a") as f:
        f.write('{"task_id": "c", "agent"')
    records, size = read_lines(path)
    assert [r.task_id for r in records] == ["a", "b"] and size == good
    with TrajectoryWriter(path) as w:
        assert w.dropped == f"{path}: dropped a torn last line (line 3, 24 bytes) that an interrupted writer left; " + (
            "the records before it are kept"
        )
        w.write(record("c"))
    assert [r.task_id for r in read_trajectories(path)] == ["a", "b", "c"]
    with TrajectoryWriter(path) as w:  # a whole file: nothing to say
        assert w.dropped == ""


def test_a_bad_line_in_the_middle_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "trajectories.jsonl"
    with TrajectoryWriter(path) as w:
        w.write(record("a"))
    with path.open("a") as f:
        f.write("not json\n")
    with path.open("a") as f:
        f.write(record("b").model_dump_json() + "\n")
    with pytest.raises(ValueError, match=r"trajectories\.jsonl:2"):
        read_lines(path)


def test_reading_keeps_the_last_record_of_each_task_and_trial(tmp_path: Path) -> None:
    path = tmp_path / "trajectories.jsonl"
    with TrajectoryWriter(path) as w:
        w.write(record("a", 0, status="infra_error"))
        w.write(record("a", 1))
        w.write(record("a", 0, 1.0))
    latest = read_trajectories(tmp_path)
    assert [(r.task_id, r.trial, r.status) for r in latest] == [("a", 1, "completed"), ("a", 0, "completed")]
    assert len(read_trajectories(tmp_path, latest=False)) == 3


def test_the_safety_flag_is_the_tasks_typed_field_not_a_guess_from_its_words() -> None:
    fraud = load_example("payments-bank-change-investigation")
    assert fraud.safety and task_fields(fraud)["safety"] is True
    regular = load_example("tickets-triage-new-urgent")
    worded = regular.model_copy(update={"scenario": "policy review of a suspicious fraud report", "safety": False})
    assert task_fields(worded)["safety"] is False


def test_a_task_file_that_kept_safety_in_its_metadata_still_reads_as_a_safety_task() -> None:
    doc = load_example("payments-bank-change-investigation").model_dump(mode="json", by_alias=True)
    doc.pop("safety")
    doc["metadata"] = {**doc["metadata"], "safety": True}
    lifted = Task.model_validate(doc)
    assert lifted.safety and "safety" not in lifted.metadata
