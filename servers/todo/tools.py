"""Tools of the todo service. Names follow Todoist-style task APIs: list, read, create, update, complete, reopen
and delete tasks; list and create projects."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field, StringConstraints

from coworkenv.servers.kit import PageSize, PageToken, ServiceError, ToolContext, Where, tool
from coworkenv.servers.todo.models import (
    Day,
    Priority,
    ProjectPage,
    ProjectView,
    Status,
    TaskPage,
    TaskView,
)

TaskId = Annotated[str, Field(description="The task's id. Example: 'TODO-3'")]
Title = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=500),
    Field(description="What to do. Example: 'Send the Q1 report'"),
]
Labels = Annotated[list[str], Field(description="Labels, e.g. ['renewal', 'northwind']")]
_FIND = "Use list_tasks to find the task's id."


def _today(ctx: ToolContext) -> str:
    return ctx.now.date().isoformat()


def _view(ctx: ToolContext, row: dict[str, Any]) -> TaskView:
    due = row.get("due_date")
    late = row["status"] != "completed" and due is not None and due < _today(ctx)
    return TaskView.model_validate({**row, "overdue": late})


def _task(ctx: ToolContext, task_id: str) -> dict[str, Any]:
    return ctx.fetch("tasks", task_id, "task", _FIND)


def _check_project(ctx: ToolContext, project_id: str | None) -> None:
    if project_id is not None:
        ctx.fetch("projects", project_id, "project", "Use list_projects to find the project's id.")


def _status_stamps(ctx: ToolContext, row: dict[str, Any], status: str) -> dict[str, Any]:
    """The status change and its completion stamp (set on completing, cleared on leaving completed)."""
    if status == row["status"]:
        return {}
    return {"status": status, "completed_at": ctx.now_iso() if status == "completed" else None}


def _save(ctx: ToolContext, task_id: str, changes: dict[str, Any]) -> TaskView:
    row = ctx.table("tasks").update(task_id, {**changes, "updated_at": ctx.now_iso()})
    return _view(ctx, row)


@tool(read_only=True)
def list_tasks(
    ctx: ToolContext,
    query: Annotated[str | None, Field(description="Text in the title or description. Example: 'report'")] = None,
    status: Annotated[
        list[Status] | None, Field(description="Only these statuses; omit for all. Example: ['pending', 'in_progress']")
    ] = None,
    priority: Annotated[list[Priority] | None, Field(description="Only these priorities. Example: ['high']")] = None,
    project_id: Annotated[str | None, Field(description="Only tasks of this project. Example: 'PROJ-1'")] = None,
    label: Annotated[str | None, Field(description="Only tasks carrying this label. Example: 'renewal'")] = None,
    assignee: Annotated[str | None, Field(description="Only tasks of this person (exact). Example: 'me'")] = None,
    due_before: Annotated[Day | None, Field(description="Due on or before this day. Example: '2026-03-06'")] = None,
    due_after: Annotated[Day | None, Field(description="Due on or after this day. Example: '2026-03-02'")] = None,
    overdue: Annotated[
        bool | None, Field(description="true: only tasks not completed and due before today. Example: true")
    ] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> TaskPage:
    """List tasks by due day (tasks with no due day last), each saying whether it is overdue. All filters combine."""
    where = (
        Where()
        .text(["title", "description"], query)
        .any_of("status", status)
        .any_of("priority", priority)
        .eq("project_id", project_id)
        .has_tag("tasks.labels", label)
        .eq_folded("assignee", assignee)
        .lte("due_date", due_before)
        .gte("due_date", due_after)
    )
    late = "(status != 'completed' AND due_date IS NOT NULL AND due_date < ?)"
    if overdue is not None:
        where.raw(late if overdue else f"NOT {late}", _today(ctx))
    order = "due_date IS NULL, due_date, id"
    rows, total, nxt = ctx.paginate("tasks", where.sql, where.params, order, page_size, page_token)
    return TaskPage(items=[_view(ctx, r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def get_task(ctx: ToolContext, task_id: TaskId) -> TaskView:
    """Read one task in full."""
    return _view(ctx, _task(ctx, task_id))


@tool()
def create_task(
    ctx: ToolContext,
    title: Title,
    description: Annotated[str, Field(max_length=10_000, description="Details. Example: 'Use the March figures'")] = "",
    priority: Annotated[Priority, Field(description="low, medium, high or urgent")] = "medium",
    due_date: Annotated[Day | None, Field(description="The day it is due, YYYY-MM-DD. Example: '2026-03-06'")] = None,
    labels: Labels = [],  # noqa: B006
    project_id: Annotated[str | None, Field(description="The project to put it in. Example: 'PROJ-1'")] = None,
    assignee: Annotated[
        str | None, Field(max_length=200, description="Who does it; omit for the user. Example: 'Kim Nguyen'")
    ] = None,
) -> TaskView:
    """Add a task (status 'pending'); returns it with its new id."""
    _check_project(ctx, project_id)
    now = ctx.now_iso()
    row = {
        "id": ctx.new_id("tasks"),
        "title": title,
        "description": description,
        "priority": priority,
        "due_date": due_date,
        "labels": sorted(set(labels)),
        "project_id": project_id,
        "assignee": assignee or "me",
        "created_at": now,
        "updated_at": now,
    }
    return _view(ctx, ctx.table("tasks").insert(row))


@tool(idempotent=True)
def update_task(
    ctx: ToolContext,
    task_id: TaskId,
    title: Annotated[str | None, Field(min_length=1, max_length=500, description="New title")] = None,
    description: Annotated[str | None, Field(max_length=10_000, description="New description")] = None,
    status: Annotated[Status | None, Field(description="pending, in_progress or completed")] = None,
    priority: Annotated[Priority | None, Field(description="low, medium, high or urgent")] = None,
    due_date: Annotated[Day | None, Field(description="New due day, YYYY-MM-DD. Example: '2026-03-13'")] = None,
    clear_due_date: Annotated[bool, Field(description="true: the task has no due day any more")] = False,
    add_labels: Annotated[list[str], Field(description="Labels to add. Example: ['urgent']")] = [],  # noqa: B006
    remove_labels: Annotated[list[str], Field(description="Labels to remove. Example: ['later']")] = [],  # noqa: B006
    project_id: Annotated[str | None, Field(description="Move it to this project. Example: 'PROJ-2'")] = None,
    assignee: Annotated[str | None, Field(max_length=200, description="Hand it to this person. Example: 'me'")] = None,
) -> TaskView:
    """Change a task. Omitted fields stay as they are. Setting status 'completed' is what complete_task does."""
    row = _task(ctx, task_id)
    if clear_due_date and due_date is not None:
        raise ServiceError("Pass due_date or clear_due_date, not both.")
    _check_project(ctx, project_id)
    changes: dict[str, Any] = {}
    for key, value in (
        ("title", title),
        ("description", description),
        ("priority", priority),
        ("due_date", due_date),
        ("project_id", project_id),
        ("assignee", assignee),
    ):
        if value is not None and value != row.get(key):
            changes[key] = value
    if clear_due_date and row.get("due_date") is not None:
        changes["due_date"] = None
    if status is not None:
        changes.update(_status_stamps(ctx, row, status))
    if add_labels or remove_labels:
        labels = sorted((set(row["labels"]) | set(add_labels)) - set(remove_labels))
        if labels != row["labels"]:
            changes["labels"] = labels
    return _save(ctx, task_id, changes) if changes else _view(ctx, row)


@tool()
def complete_task(ctx: ToolContext, task_id: TaskId) -> TaskView:
    """Mark a task completed (it stays on the list as done; reopen_task undoes it)."""
    row = _task(ctx, task_id)
    if row["status"] == "completed":
        raise ServiceError(f"Task {task_id} is already completed.", "Use reopen_task to bring it back.")
    return _save(ctx, task_id, _status_stamps(ctx, row, "completed"))


@tool()
def reopen_task(ctx: ToolContext, task_id: TaskId) -> TaskView:
    """Bring a completed task back to 'pending'."""
    row = _task(ctx, task_id)
    if row["status"] != "completed":
        raise ServiceError(
            f"Task {task_id} is {row['status']}, not completed.", "Only completed tasks can be reopened."
        )
    return _save(ctx, task_id, _status_stamps(ctx, row, "pending"))


class DeletedTask(BaseModel):
    id: str = Field(description="The id of the task that was deleted.")
    deleted: bool = Field(description="True: the task no longer exists.")


@tool(destructive=True, idempotent=True)
def delete_task(ctx: ToolContext, task_id: TaskId) -> DeletedTask:
    """Delete a task permanently. This cannot be undone; to close a task that is done or a duplicate, complete it."""
    _task(ctx, task_id)
    ctx.table("tasks").delete(task_id)
    return DeletedTask(id=task_id, deleted=True)


def _project_views(ctx: ToolContext, rows: list[dict[str, Any]]) -> list[ProjectView]:
    ids = [r["id"] for r in rows]
    counts: dict[str, int] = {}
    if ids:
        marks = ", ".join("?" * len(ids))
        for task in ctx.table("tasks").select(f"status != 'completed' AND project_id IN ({marks})", ids):
            counts[task["project_id"]] = counts.get(task["project_id"], 0) + 1
    return [ProjectView.model_validate({**r, "open_tasks": counts.get(r["id"], 0)}) for r in rows]


@tool(read_only=True)
def list_projects(
    ctx: ToolContext,
    query: Annotated[str | None, Field(description="Text in the name. Example: 'onboarding'")] = None,
    include_archived: Annotated[bool, Field(description="true: archived projects too")] = False,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> ProjectPage:
    """List projects by name, each with its number of open tasks."""
    where = Where().text(["name"], query)
    if not include_archived:
        where.raw("archived = 0")
    rows, total, nxt = ctx.paginate("projects", where.sql, where.params, "name, id", page_size, page_token)
    return ProjectPage(items=_project_views(ctx, rows), total=total, next_page_token=nxt)


@tool()
def create_project(
    ctx: ToolContext,
    name: Annotated[
        str,
        StringConstraints(strip_whitespace=True, min_length=1, max_length=200),
        Field(description="Example: 'Office move'"),
    ],
) -> ProjectView:
    """Add a project to group tasks in; names are unique (ignoring case)."""
    clash = ctx.table("projects").select("casefold(name) = ?", [name.casefold()], limit=1)
    if clash:
        raise ServiceError(f"A project named {name!r} exists already: {clash[0]['id']}.", "Use that project's id.")
    row = {"id": ctx.new_id("projects"), "name": name, "created_at": ctx.now_iso()}
    return _project_views(ctx, [ctx.table("projects").insert(row)])[0]


TOOLS = (
    list_tasks,
    get_task,
    create_task,
    update_task,
    complete_task,
    reopen_task,
    delete_task,
    list_projects,
    create_project,
)
