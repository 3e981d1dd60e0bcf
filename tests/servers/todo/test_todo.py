"""The todo service, through the in-memory MCP client: every tool, its error cases, and its sensitive kinds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from coworkenv.servers.testing import check_service
from coworkenv.servers.todo import SERVICE
from tests.conftest import NOW, error_text, ok, service_client
from tests.servers.checks import assert_described, assert_doors_agree, sensitive_keys

pytestmark = pytest.mark.anyio
SEED: dict[str, Any] = json.loads((Path(__file__).parents[3] / "servers/examples/todo.json").read_text())


def ids(page: dict[str, Any]) -> list[str]:
    return [t["id"] for t in page["items"]]


async def test_tasks_list_by_due_day_with_undated_ones_last_and_overdue_marked() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        page = ok(await c.call_tool("list_tasks", {"page_size": 100}))
        assert page["total"] == 12 and page["items"][-1]["id"] == "TODO-4"
        assert page["items"][0]["id"] == "TODO-6" and page["items"][0]["overdue"] is False  # completed: never overdue
        overdue = ok(await c.call_tool("list_tasks", {"overdue": True}))
        assert ids(overdue) == ["TODO-10", "TODO-1", "TODO-5"] and all(t["overdue"] for t in overdue["items"])
        assert ok(await c.call_tool("list_tasks", {"overdue": False}))["total"] == 9


async def test_tasks_filter_by_status_priority_project_label_assignee_text_and_due_window() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        assert ids(ok(await c.call_tool("list_tasks", {"status": ["completed"]}))) == ["TODO-6", "TODO-11"]
        assert ids(ok(await c.call_tool("list_tasks", {"priority": ["urgent"]}))) == ["TODO-2"]
        assert ok(await c.call_tool("list_tasks", {"project_id": "PROJ-2"}))["total"] == 3
        assert ids(ok(await c.call_tool("list_tasks", {"label": "renewal"}))) == ["TODO-1", "TODO-9"]
        assert ids(ok(await c.call_tool("list_tasks", {"assignee": "omar haddad"}))) == ["TODO-6", "TODO-8"]
        assert ids(ok(await c.call_tool("list_tasks", {"query": "NORTHWIND"}))) == ["TODO-1", "TODO-9"]
        week = ok(await c.call_tool("list_tasks", {"due_after": "2026-03-02", "due_before": "2026-03-06"}))
        assert ids(week) == ["TODO-9", "TODO-2", "TODO-7"]
        assert "calendar day" in error_text(await c.call_tool("list_tasks", {"due_before": "next week"}))


async def test_tasks_page_through_with_the_next_page_token() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        seen, token = [], None
        while True:
            page = ok(await c.call_tool("list_tasks", {"page_size": 5} | ({"page_token": token} if token else {})))
            seen += ids(page)
            token = page["next_page_token"]
            if token is None:
                break
        assert len(seen) == 12 == len(set(seen))


async def test_get_task_reads_one_and_an_unknown_id_says_how_to_find_one() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        task = ok(await c.call_tool("get_task", {"task_id": "TODO-12"}))
        assert task["custom_fields"] == {"blocked_by": "Budget approval from Lena Ortiz"}
        assert "list_tasks" in error_text(await c.call_tool("get_task", {"task_id": "TODO-99"}))


async def test_create_task_stamps_the_clock_sorts_labels_and_is_the_users_by_default() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        args = {"title": " Call Paula ", "due_date": "2026-03-03", "labels": ["b", "a", "b"], "project_id": "PROJ-1"}
        task = ok(await c.call_tool("create_task", args))
        assert (task["title"], task["status"], task["priority"], task["assignee"]) == (
            "Call Paula",
            "pending",
            "medium",
            "me",
        )
        assert task["labels"] == ["a", "b"] and task["created_at"] == NOW and task["id"].startswith("TODO-")
        assert env.state("todo").tables["tasks"].get(task["id"]) == {k: v for k, v in task.items() if k != "overdue"}
        assert "list_projects" in error_text(await c.call_tool("create_task", {"title": "x", "project_id": "PROJ-9"}))
        assert "title" in error_text(await c.call_tool("create_task", {"title": "  "}))


async def test_update_task_changes_only_what_is_given() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        task = ok(
            await c.call_tool(
                "update_task",
                {"task_id": "TODO-3", "priority": "high", "add_labels": ["urgent"], "remove_labels": ["hardware"]},
            )
        )
        assert (task["priority"], task["labels"], task["title"], task["updated_at"]) == (
            "high",
            ["acme", "urgent"],
            "Schedule BW Edge Gateway install at Acme Robotics",
            NOW,
        )
        cleared = ok(await c.call_tool("update_task", {"task_id": "TODO-3", "clear_due_date": True}))
        assert cleared["due_date"] is None
        assert "not both" in error_text(
            await c.call_tool("update_task", {"task_id": "TODO-3", "due_date": "2026-03-09", "clear_due_date": True})
        )
        before = env.state_hash()
        ok(await c.call_tool("update_task", {"task_id": "TODO-3", "priority": "high"}))
        assert env.state_hash() == before


async def test_completing_stamps_the_time_and_reopening_clears_it() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        done = ok(await c.call_tool("complete_task", {"task_id": "TODO-9"}))
        assert (done["status"], done["completed_at"], done["overdue"]) == ("completed", NOW, False)
        assert "already completed" in error_text(await c.call_tool("complete_task", {"task_id": "TODO-9"}))
        back = ok(await c.call_tool("reopen_task", {"task_id": "TODO-9"}))
        assert (back["status"], back["completed_at"]) == ("pending", None)
        assert "not completed" in error_text(await c.call_tool("reopen_task", {"task_id": "TODO-9"}))
        via_update = ok(await c.call_tool("update_task", {"task_id": "TODO-10", "status": "completed"}))
        assert via_update["completed_at"] == NOW


async def test_delete_task_removes_it_for_good() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        assert ok(await c.call_tool("delete_task", {"task_id": "TODO-4"})) == {"id": "TODO-4", "deleted": True}
        assert "TODO-4" in error_text(await c.call_tool("delete_task", {"task_id": "TODO-4"}))
        assert len(env.dump()["todo"]["tasks"]) == 11


async def test_projects_list_by_name_with_open_tasks_and_archived_ones_on_request() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        page = ok(await c.call_tool("list_projects", {}))
        assert [(p["name"], p["open_tasks"]) for p in page["items"]] == [
            ("Customer Success", 5),
            ("Internal", 3),
            ("Onboarding", 2),
        ]
        assert ok(await c.call_tool("list_projects", {"include_archived": True}))["total"] == 4


async def test_create_project_refuses_a_name_taken_in_any_case() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        made = ok(await c.call_tool("create_project", {"name": "Office move"}))
        assert (made["id"][:5], made["open_tasks"], made["archived"]) == ("PROJ-", 0, False)
        assert "PROJ-1" in error_text(await c.call_tool("create_project", {"name": " customer SUCCESS "}))


async def test_completing_and_deleting_are_sensitive_and_ordinary_edits_are_not() -> None:
    assert await sensitive_keys(SERVICE, SEED, [("complete_task", {"task_id": "TODO-9"})]) == {"complete:TODO-9"}
    assert await sensitive_keys(SERVICE, SEED, [("delete_task", {"task_id": "TODO-9"})]) == {"delete:tasks:TODO-9"}
    edits: list[tuple[str, dict[str, Any]]] = [
        ("update_task", {"task_id": "TODO-1", "priority": "urgent", "add_labels": ["overdue"]}),
        ("create_task", {"title": "Follow up with Jamie"}),
        ("create_project", {"name": "Office move"}),
    ]
    assert await sensitive_keys(SERVICE, SEED, edits) == set()


async def test_both_doors_give_the_same_answers_audit_rows_and_state() -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("list_tasks", {"overdue": True}),
        ("create_task", {"title": "Call Paula", "priority": "high"}),
        ("complete_task", {"task_id": "TODO-6"}),
        ("update_task", {"task_id": "TODO-1", "priority": "p1"}),
        ("no_such_tool", {}),
        ("complete_task", {"task_id": "TODO-9"}),
    ]
    outcomes = await assert_doors_agree(SERVICE, SEED, calls)
    assert outcomes == ["ok", "ok", "error", "invalid_arguments", "unknown_tool", "ok"]


def test_the_service_is_described_for_task_authors() -> None:
    assert_described(SERVICE)


def test_the_service_toolkit_finds_nothing_wrong_with_it() -> None:
    check_service(SERVICE, SEED, stdio=False)  # stdio is tests/servers/kit/test_transports.py's, from `coworkenv serve`
