"""Records of the todo service (a Todoist-like task list: projects and tasks with priorities, due dates, labels).

A task is ``pending``, ``in_progress`` or ``completed``; a due date is a calendar day, and a task not completed
whose due day is before the simulated today is overdue.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field

from coworkenv.servers.kit import Page, Record, Table, Timestamp

Status = Literal["pending", "in_progress", "completed"]
Priority = Literal["low", "medium", "high", "urgent"]


def _calendar_day(value: str) -> str:
    try:
        return date.fromisoformat(value).isoformat()
    except ValueError as exc:
        raise ValueError(f"not a calendar day like 2026-03-20: {value[:40]!r}") from exc


Day = Annotated[str, AfterValidator(_calendar_day)]
"""A calendar day stored as ``YYYY-MM-DD`` text (sorts as text)."""


class Project(Record):
    """A list that groups tasks (Todoist's projects)."""

    id: str = Field(description="The project's id. Example: 'PROJ-1'")
    name: str = Field(min_length=1, description="Example: 'Customer Success'")
    archived: bool = Field(default=False, description="Archived projects are kept but hidden from lists.")
    created_at: Timestamp | None = None


class Task(Record):
    """One to-do: what to do, how urgent, by when, for whom."""

    id: str = Field(description="The task's id. Example: 'TODO-3'")
    title: str = Field(min_length=1, description="Example: 'Send Northwind the renewal quote'")
    description: str = ""
    status: Status = "pending"
    priority: Priority = "medium"
    due_date: Day | None = Field(default=None, description="The day it is due, YYYY-MM-DD. Example: '2026-03-06'")
    labels: list[str] = Field(default=[], description="Example: ['renewal', 'northwind']")
    project_id: str | None = Field(default=None, description="The project it belongs to. Example: 'PROJ-1'")
    assignee: str | None = Field(default=None, description="Who does it: a name or address; 'me' is the user.")
    custom_fields: dict[str, Any] = Field(
        default={}, description="Other attributes as the source system keeps them. Example: {'estimated_hours': 4}"
    )
    created_at: Timestamp
    updated_at: Timestamp | None = None
    completed_at: Timestamp | None = None


TABLES = (
    Table("projects", Project, "PROJ-"),
    Table(
        "tasks",
        Task,
        "TODO-",
        indexes=(("status",), ("due_date",), ("project_id",)),
        refs=(("project_id", "projects"),),
        volatile=("updated_at",),
    ),
)


class TaskView(Task):
    overdue: bool = Field(description="True when not completed and due before today.")


class ProjectView(Project):
    open_tasks: int = Field(description="Tasks of the project not completed.")


class TaskPage(Page[TaskView]):
    pass


class ProjectPage(Page[ProjectView]):
    pass
