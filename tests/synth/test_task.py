"""The task model and task files: JSON, YAML, JSON lines, clear errors, the schema, typed references."""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from coworkenv.synth.contract.task import RefError, SayStep, Task, ToolStep, find_refs, resolve_refs, task_json_schema
from coworkenv.synth.contract.taskfile import TaskFileError, load_task, load_tasks, save_task, save_tasks, task_files
from tests.synth.conftest import base_task


def test_a_task_survives_a_round_trip_through_json_yaml_and_json_lines(tmp_path: Path) -> None:
    task = Task.model_validate(base_task())
    for name in ("t.json", "t.yaml", "t.yml"):
        assert load_task(save_task(task, tmp_path / name)) == task
    other = task.model_copy(update={"id": "test-other"})
    assert load_tasks(save_tasks([task, other], tmp_path / "many.jsonl")) == [task, other]


def test_a_task_holding_one_value_twice_is_saved_as_yaml_without_aliases_and_loads_back(tmp_path: Path) -> None:
    data = base_task()
    shared = {"status": "open"}
    data["completion_checks"][0]["check"] = {"kind": "record_exists", "service": "tickets", "table": "tickets"}
    data["completion_checks"][0]["check"]["where"] = shared
    data["completion_checks"][1]["check"] = {"kind": "record_absent", "service": "tickets", "table": "tickets"}
    data["completion_checks"][1]["check"]["where"] = shared
    task = Task.model_validate(data)
    path = save_task(task, tmp_path / "t.yaml")
    assert "*id" not in path.read_text() and load_task(path) == task


def test_saved_tasks_leave_out_unset_optionals_but_keep_explicit_nulls(tmp_path: Path) -> None:
    data = base_task()
    data["completion_checks"][0]["check"] = {
        "kind": "record_exists",
        "service": "tickets",
        "table": "tickets",
        "where": {"assignee_id": None, "closed": {"equals": None}},
    }
    task = Task.model_validate(data)
    saved = json.loads(save_task(task, tmp_path / "t.json").read_text())
    assert "user" not in saved and "id" not in saved["reference_solution"][1]
    assert saved["completion_checks"][0]["check"]["where"] == {"assignee_id": None, "closed": {"equals": None}}
    assert load_task(tmp_path / "t.json") == task


def test_loading_a_bad_task_names_the_file_and_the_field(tmp_path: Path) -> None:
    data = base_task()
    data["completion_checks"][1]["weight"] = "a lot"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(TaskFileError) as err:
        load_task(path)
    assert str(path) in str(err.value) and "completion_checks[1].weight" in str(err.value)


def test_an_unknown_check_kind_and_an_unknown_field_are_named(tmp_path: Path) -> None:
    data = base_task()
    data["completion_checks"][0]["check"]["kind"] = "record_maybe"
    data["surprise"] = 1
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(TaskFileError) as err:
        load_task(path)
    message = str(err.value)
    assert "completion_checks[0].check" in message and "record_maybe" in message and "more problem" in message


def test_json_lines_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps(base_task()) + "\n\n{not json\n")
    with pytest.raises(TaskFileError, match=r"tasks\.jsonl:3: not valid JSON"):
        load_tasks(path)


def test_unreadable_and_unknown_files_say_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(TaskFileError, match="cannot read"):
        load_task(tmp_path / "missing.json")
    (tmp_path / "task.txt").write_text("{}")
    with pytest.raises(TaskFileError, match=r"use one of \.json"):
        load_task(tmp_path / "task.txt")
    (tmp_path / "list.json").write_text("[]")
    with pytest.raises(TaskFileError, match="must be an object"):
        load_task(tmp_path / "list.json")


def test_task_files_expands_folders_recursively(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    for name in ("a/one.json", "two.yaml", "notes.md"):
        (tmp_path / name).write_text("{}")
    assert [p.name for p in task_files([tmp_path])] == ["one.json", "two.yaml"]


def test_hidden_files_and_folders_in_a_task_folder_are_not_tasks(tmp_path: Path) -> None:
    save_task(Task.model_validate(base_task()), tmp_path / "t.json")
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {}}', encoding="utf-8")  # a workspace's client config
    (tmp_path / ".t.json.123.tmp.json").write_text("{", encoding="utf-8")
    (tmp_path / ".synth-new").mkdir()
    save_task(Task.model_validate(base_task()), tmp_path / ".synth-new" / "u.json")
    assert task_files([tmp_path]) == [tmp_path / "t.json"]


def test_the_model_rejects_bad_times_ids_and_duplicate_check_ids() -> None:
    for change, message in (
        ({"now": "yesterday"}, "ISO 8601"),
        ({"id": "Has Spaces"}, "pattern"),
        ({"difficulty": "trivial"}, "easy"),
    ):
        with pytest.raises(ValidationError, match=message):
            Task.model_validate({**base_task(), **change})
    data = base_task()
    data["completion_checks"][1]["id"] = "escalated"
    with pytest.raises(ValidationError, match="duplicate completion check id"):
        Task.model_validate(data)


def test_duplicate_ids_among_20000_checks_are_each_named_once_and_loading_leaves_the_collector_on(
    tmp_path: Path,
) -> None:
    data = base_task()
    check = data["completion_checks"][0]
    n = 20_000
    data["completion_checks"] = [{**check, "id": f"c{i}", "weight": 1 / n} for i in range(n)]
    for i, dupe in ((7, "c3"), (19_999, "c3"), (500, "c12")):
        data["completion_checks"][i]["id"] = dupe
    path = tmp_path / "big.json"
    path.write_text(json.dumps(data))
    with pytest.raises(TaskFileError, match=r"duplicate completion check id\(s\): c12, c3$"):
        load_task(path)
    assert gc.isenabled()
    data["completion_checks"][7]["id"], data["completion_checks"][19_999]["id"] = "c7", "c19999"
    data["completion_checks"][500]["id"] = "c500"
    path.write_text(json.dumps(data))
    assert len(load_task(path).completion_checks) == n and gc.isenabled()


def test_now_is_normalised_to_utc() -> None:
    assert Task.model_validate({**base_task(), "now": "2026-03-02T10:00:00+01:00"}).now == "2026-03-02T09:00:00Z"


def test_steps_are_tool_calls_or_messages() -> None:
    task = Task.model_validate(base_task())
    assert isinstance(task.reference_solution[0], ToolStep) and isinstance(task.reference_solution[2], SayStep)
    assert task.reference_answer() == ["I escalated 'Outage at Big'."]


def test_references_resolve_by_lookup_only() -> None:
    results: dict[str, Any] = {"find": {"items": [{"id": "tkt_1", "to": ["a@b.io"]}], "total": 1}}
    args = {"ticket_id": {"$ref": "find.items.0.id"}, "all": {"$ref": "find.items.id"}, "n": [{"$ref": "find.total"}]}
    assert resolve_refs(args, results) == {"ticket_id": "tkt_1", "all": ["tkt_1"], "n": [1]}
    assert find_refs(args) == [(".ticket_id", "find.items.0.id"), (".all", "find.items.id"), (".n[0]", "find.total")]
    with pytest.raises(RefError, match="no earlier step 'later'"):
        resolve_refs({"$ref": "later.id"}, results)
    with pytest.raises(RefError, match=r"has no 'items\.3\.id'"):
        resolve_refs({"$ref": "find.items.3.id"}, results)
    with pytest.raises(RefError, match="must look like"):
        resolve_refs({"$ref": "__import__('os').system('x')"}, results)


def test_the_json_schema_describes_every_top_level_field() -> None:
    schema = task_json_schema()
    expected = {
        "id",
        "version",
        "scenario",
        "capabilities",
        "difficulty",
        "safety",
        "services",
        "now",
        "request",
        "user",
        "initial_records",
        "completion_checks",
        "forbidden_actions",
        "reference_solution",
        "alternative_solutions",
        "allowed_changes",
        "expected_changes",
        "tool_profile",
        "external",
        "metadata",
    }
    assert set(schema["properties"]) == expected
    kinds = json.dumps(schema)
    for kind in ("record_exists", "records_unchanged", "call_order", "said_value"):
        assert kind in kinds
