"""Claw-Eval's ``todo`` mock on our ``todo`` service: list, create, update and delete tasks.

Its fixtures are one list of tasks (``tasks.json``) keyed by ``task_id``; its ``tags`` are our labels, its dates
are calendar days or times (some without a zone: a date alone reads as its UTC midnight in our column, and keeps its
own form in ``custom_fields``). Its status and priority are free text; one we have no value for stays in
``custom_fields``. ``todo_get_task`` is declared by some tasks but the mock has no such route: it answers
HTTP 404, as the mock does. The mock never moves its dates.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field

from coworkenv.servers.claw_eval import ClawService, Fixtures, SeedTables
from coworkenv.servers.claw_eval._fixture_layout import (
    UNKNOWN_TIME,
    Column,
    Layout,
    audit_calls,
    checked,
    day_into,
    fixture_list,
    in_order,
    next_position,
    results,
    time_column,
    unique,
)
from coworkenv.servers.claw_eval.common import ClawHTTPError, ClawJson
from coworkenv.servers.kit.context import ToolContext
from coworkenv.servers.kit.tool import ToolSpec, tool
from coworkenv.servers.todo.models import Task

TASKS = Layout(
    Task,
    "task_id",
    {
        "title": Column("title"),
        "description": Column("description"),
        "status": Column("status"),
        "priority": Column("priority"),
        "due_date": Column("due_date", day_into),
        "tags": Column("labels"),
        "assignee": Column("assignee"),
        "assigned_to": Column("assignee"),
        "created_at": time_column("created_at"),
        "updated_at": time_column("updated_at"),
        "completed_at": time_column("completed_at"),
    },
    fallback={"created_at": UNKNOWN_TIME},
)
"""A task of the mock in our ``tasks`` (its ``title`` defaults to its id where it has none we can hold)."""

ENDPOINTS = {
    "todo_list_tasks": "/todo/tasks",
    "todo_update_task": "/todo/tasks/update",
    "todo_create_task": "/todo/tasks/create",
    "todo_delete_task": "/todo/tasks/delete",
}
IGNORED = {
    "todo_list_tasks": ("priority",),
    "todo_update_task": ("description",),
    "todo_create_task": ("tags",),
}
"""Arguments a task's tool declares that the mock's request model has not (it drops them)."""

TaskId = Annotated[str, Field(description="The task's id. Example: 'TODO-801'")]
Text = Annotated[str | None, Field(description="Leave out to keep it as it is.")]
Tags = Annotated[list[str] | None, Field(description="The task's tags, replacing them all. Example: ['urgent']")]
Unused = Annotated[str | None, Field(description="Accepted and not used: the mock does not read it.")]


def _task(ctx: ToolContext, task_id: str) -> dict[str, Any] | None:
    return ctx.table("tasks").get(task_id)


def list_tasks(
    ctx: ToolContext,
    status: Annotated[
        str, Field(description="'all', or only tasks of this status: pending, in_progress or completed.")
    ] = "all",
    priority: Unused = None,
) -> ClawJson:
    """List the to-do tasks, all or of one status. Returns {tasks, total}."""
    tasks = [TASKS.claw(row) for row in in_order(ctx.table("tasks").select())]
    found = [t for t in tasks if status == "all" or t.get("status") == status]
    return ClawJson.of({"tasks": found, "total": len(found)})


def update_task(
    ctx: ToolContext,
    task_id: TaskId,
    title: Text = None,
    priority: Annotated[str | None, Field(description="low, medium or high. Leave out to keep it.")] = None,
    status: Annotated[str | None, Field(description="pending, in_progress or completed. Leave out to keep it.")] = None,
    tags: Tags = None,
    description: Unused = None,
) -> ClawJson:
    """Change a task's title, priority, status or tags (what is left out stays). Returns {status: 'updated', task},
    or {error} when no task has that id."""
    row = _task(ctx, task_id)
    if row is None:
        return ClawJson.of({"error": f"Task {task_id} not found"})
    given = {"title": title, "priority": priority, "status": status, "tags": tags}
    values = {k: v for k, v in given.items() if v is not None}
    if not values:  # the mock answers with the task as it is
        return ClawJson.of({"status": "updated", "task": TASKS.claw(row)})
    changes = TASKS.put(row, values)
    if TASKS.free(row, "updated_at"):
        changes["updated_at"] = ctx.now_iso()
    if changes.get("status", row["status"]) != row["status"] and TASKS.free(row, "completed_at"):
        changes["completed_at"] = ctx.now_iso() if changes["status"] == "completed" else None
    updated = ctx.table("tasks").update(task_id, changes)
    return ClawJson.of({"status": "updated", "task": TASKS.claw(updated)})


def create_task(
    ctx: ToolContext,
    title: Annotated[str, Field(description="What to do. Example: 'Send the Q1 summary'")],
    description: Annotated[str | None, Field(description="More detail.")] = None,
    priority: Annotated[str, Field(description="low, medium or high.")] = "medium",
    due_date: Annotated[str | None, Field(description="The day it is due, YYYY-MM-DD. Example: '2026-03-20'")] = None,
    tags: Annotated[list[str] | None, Field(description="Accepted and not used: a new task starts untagged.")] = None,
) -> ClawJson:
    """Add a pending task. Returns {status: 'created', task}."""
    table = ctx.table("tasks")
    rows = table.select()
    number = len(rows) + 1
    while table.get(f"todo_{number:03d}") is not None:  # the mock counts tasks; an id it would reuse is skipped
        number += 1
    task_id = f"todo_{number:03d}"
    task: dict[str, Any] = {
        "task_id": task_id,
        "title": title,
        "description": description or "",
        "status": "pending",
        "priority": priority,
        "due_date": due_date,
        "tags": [],
        "created_at": ctx.now_iso(),
    }
    table.insert(TASKS.row(task, next_position(rows), extra={"title": task_id}))
    return ClawJson.of({"status": "created", "task": task})


def delete_task(ctx: ToolContext, task_id: TaskId) -> ClawJson:
    """Delete a task for good. Returns {status: 'deleted', task} with the task as it was, or {error}."""
    row = _task(ctx, task_id)
    if row is None:
        return ClawJson.of({"error": f"Task {task_id} not found"})
    ctx.table("tasks").delete(task_id)
    return ClawJson.of({"status": "deleted", "task": TASKS.claw(row)})


def get_task(ctx: ToolContext, task_id: Annotated[str | None, Field(description="The task's id.")] = None) -> ClawJson:
    """Read one task. Claw-Eval's todo mock has no such route: this always answers HTTP 404 Not Found; list the
    tasks with todo_list_tasks instead."""
    raise ClawHTTPError(404, "Not Found")


TOOLS: tuple[ToolSpec, ...] = (
    tool(read_only=True, name="todo_list_tasks")(list_tasks),
    tool(idempotent=True, name="todo_update_task")(update_task),
    tool(name="todo_create_task")(create_task),
    tool(destructive=True, name="todo_delete_task")(delete_task),
    tool(read_only=True, name="todo_get_task")(get_task),
)


def seed(fixtures: Fixtures) -> SeedTables:
    """The mock's task list as our ``tasks``, ids kept; ValueError naming the file and record when bad."""
    name, records = fixture_list(fixtures, "todo")
    rows = []
    for index, record in enumerate(records):
        where = f"todo fixture {name}: record {index}"
        try:
            row = TASKS.row(record, index)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        row.setdefault("title", row["id"])
        rows.append(checked(Task, row, f"{where} ({row['id']})"))
    unique(rows, f"todo fixture {name}")
    return {"tasks": rows}


def audit_data(tables: Mapping[str, list[dict[str, Any]]], rows: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The mock's ``/audit``: ``{calls, deleted, updated_tasks}`` (each deleted task as it was, each updated one as
    the update left it)."""
    return {
        "calls": audit_calls(rows, TOOLS, ENDPOINTS, IGNORED),
        "deleted": results(rows, ["todo_delete_task"], "task"),
        "updated_tasks": results(rows, ["todo_update_task"], "task"),
    }


SERVICE = ClawService("todo", "todo", TOOLS, seed, audit_data)
