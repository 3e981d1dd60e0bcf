"""Claw-Eval's todo tools on our todo service: the fixtures seed with their ids, the tools answer as its mock does,
writes change our tasks, and ``/audit`` is rebuilt from our audit log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from coworkenv.servers.claw_eval import todo
from coworkenv.servers.claw_eval.todo import ENDPOINTS, SERVICE
from tests.servers.claw_eval.ops_parity import (
    NOW,
    Mock,
    audit,
    call,
    claw_env,
    fixture_of,
    kit_checks,
    needs_claw_eval,
    real_fixtures,
    replay,
)

TASKS: list[dict[str, Any]] = [
    {
        "task_id": "TODO-801",
        "title": "Write the Q1 summary",
        "status": "in_progress",
        "priority": "high",
        "due_date": "2026-03-28",
        "progress": 60,
        "created_at": "2026-03-10",
    },
    {
        "task_id": "todo_002",
        "title": "Renew the SSL certificate",
        "description": "Expires on the 5th",
        "status": "pending",
        "priority": "critical",
        "due_date": None,
        "tags": ["ops"],
        "assignee": "Dana",
        "project": "Infra",
        "created_at": "2026-02-20T09:30:00+08:00",
    },
    {
        "task_id": "todo_003",
        "title": "Team lunch",
        "status": "completed",
        "priority": "low",
        "due_date": "2026-02-27",
        "tags": [],
        "created_at": "2026-02-01T10:00:00Z",
    },
]
FIXTURES = {"tasks.json": TASKS}


def test_seeding_keeps_ids_and_reads_tags_days_and_times_into_our_columns() -> None:
    rows = {row["id"]: row for row in todo.seed(FIXTURES)["tasks"]}
    assert list(rows) == ["TODO-801", "todo_002", "todo_003"]
    first, second, third = rows.values()
    assert (first["due_date"], first["created_at"], first["custom_fields"]["created_at"]) == (
        "2026-03-28",
        "2026-03-10T00:00:00Z",
        "2026-03-10",
    )
    assert first["custom_fields"]["progress"] == 60 and first["labels"] == []
    assert (second["labels"], second["assignee"], second["priority"]) == (["ops"], "Dana", "medium")
    assert second["custom_fields"]["priority"] == "critical" and second["created_at"] == "2026-02-20T01:30:00Z"
    assert "created_at" not in third["custom_fields"] and third["status"] == "completed"


def test_list_returns_the_tasks_as_the_fixture_has_them_and_filters_by_status() -> None:
    with claw_env(SERVICE, FIXTURES) as env:
        assert call(env, SERVICE, "todo_list_tasks") == {"tasks": TASKS, "total": 3}
        assert call(env, SERVICE, "todo_list_tasks", {"status": "pending"})["tasks"] == [TASKS[1]]
        assert call(env, SERVICE, "todo_list_tasks", {"status": "done", "priority": "high"})["total"] == 0


def test_update_changes_our_task_and_keeps_what_it_was_not_given() -> None:
    with claw_env(SERVICE, FIXTURES) as env:
        answer = call(env, SERVICE, "todo_update_task", {"task_id": "TODO-801", "status": "completed", "tags": ["q1"]})
        assert answer == {"status": "updated", "task": {**TASKS[0], "status": "completed", "tags": ["q1"]}}
        stored = env.state("todo").tables["tasks"].get("TODO-801")
        assert stored is not None
        assert (stored["status"], stored["labels"], stored["completed_at"], stored["updated_at"]) == (
            "completed",
            ["q1"],
            NOW,
            NOW,
        )
        odd = call(env, SERVICE, "todo_update_task", {"task_id": "todo_003", "status": "archived"})
        assert odd["task"]["status"] == "archived"
        assert call(env, SERVICE, "todo_update_task", {"task_id": "nope"}) == {"error": "Task nope not found"}


def test_create_numbers_after_the_tasks_there_are_and_delete_removes_ours() -> None:
    with claw_env(SERVICE, FIXTURES) as env:
        created = call(env, SERVICE, "todo_create_task", {"title": "Book the venue", "due_date": "2026-03-09"})
        task = {
            "task_id": "todo_004",
            "title": "Book the venue",
            "description": "",
            "status": "pending",
            "priority": "medium",
            "due_date": "2026-03-09",
            "tags": [],
            "created_at": NOW,
        }
        assert created == {"status": "created", "task": task}
        deleted = call(env, SERVICE, "todo_delete_task", {"task_id": "todo_002"})
        assert deleted == {"status": "deleted", "task": TASKS[1]}
        assert env.state("todo").tables["tasks"].get("todo_002") is None
        # three tasks now, so the mock would say todo_004 again: that id is taken, the next is used
        assert call(env, SERVICE, "todo_create_task", {"title": ""})["task"]["task_id"] == "todo_005"
        assert [t["task_id"] for t in call(env, SERVICE, "todo_list_tasks")["tasks"]][-2:] == ["todo_004", "todo_005"]
        data = audit(env, SERVICE)
        assert data["deleted"] == [TASKS[1]] and data["updated_tasks"] == []
        assert data["calls"][0]["request_body"] == {
            "title": "Book the venue",
            "description": None,
            "priority": "medium",
            "due_date": "2026-03-09",
        }


def test_get_task_answers_404_as_the_mock_has_no_such_route() -> None:
    with claw_env(SERVICE, FIXTURES) as env:
        result = env.state("todo").call_now("todo_get_task", {"task_id": "TODO-801"})
        assert result.is_error and result.text.startswith("HTTP 404")


def test_a_task_without_an_id_is_refused_naming_file_and_record() -> None:
    with pytest.raises(ValueError, match=r"tasks\.json: record 0: its 'task_id'"):
        todo.seed({"tasks.json": [{"title": "x"}]})


def test_the_profile_passes_the_kits_checks_for_descriptions_bounds_doors_and_fuzz() -> None:
    kit_checks(SERVICE, FIXTURES)


CALLS = [
    ("todo_list_tasks", {}),
    ("todo_list_tasks", {"status": "completed"}),
    ("todo_update_task", {"task_id": "todo_002", "priority": "high", "title": "Renew SSL", "description": "x"}),
    ("todo_update_task", {"task_id": "TODO-801", "tags": ["a", "b"], "status": "done"}),
    ("todo_update_task", {"task_id": "missing"}),
    ("todo_update_task", {"task_id": "TODO-801"}),
    ("todo_update_task", {"status": "done"}),
    ("todo_create_task", {"title": "New", "description": "d", "priority": "low", "tags": ["x"]}),
    ("todo_delete_task", {"task_id": "todo_003"}),
    ("todo_delete_task", {"task_id": "todo_003"}),
    ("todo_get_task", {"task_id": "todo_002"}),
    ("todo_list_tasks", {"status": "all"}),
]


@needs_claw_eval
def test_every_tool_answers_as_claw_evals_mock_on_the_same_fixtures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixture = tmp_path / "tasks.json"
    fixture.write_text(json.dumps(TASKS))
    with claw_env(SERVICE, FIXTURES) as env:
        replay(Mock("todo", fixture, monkeypatch), env, SERVICE, ENDPOINTS, CALLS)


@needs_claw_eval
def test_every_real_tasks_todo_fixture_seeds_and_reads_as_the_mock_gives_it(monkeypatch: pytest.MonkeyPatch) -> None:
    found = real_fixtures("todo")
    assert len(found) >= 15
    for _task, path in found:
        fixtures = fixture_of(path)
        first = next(iter(fixtures[path.name]), {"task_id": "none"})["task_id"]
        calls = [
            ("todo_list_tasks", {}),
            ("todo_update_task", {"task_id": first, "status": "completed"}),
            ("todo_create_task", {"title": "Follow up"}),
            ("todo_delete_task", {"task_id": first}),
            ("todo_list_tasks", {"status": "pending"}),
        ]
        with claw_env(SERVICE, fixtures) as env:
            replay(Mock("todo", path, monkeypatch), env, SERVICE, ENDPOINTS, calls)
