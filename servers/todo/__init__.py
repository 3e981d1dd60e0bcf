"""todo: a Todoist-like task list — projects and tasks with priorities, due days, labels and assignees."""

from coworkenv.servers.kit import Service
from coworkenv.servers.todo.models import TABLES
from coworkenv.servers.todo.sensitive import SENSITIVE
from coworkenv.servers.todo.tools import TOOLS

SERVICE = Service(
    name="todo",
    title="To-do list",
    instructions=(
        "The user's task list. Tasks are pending, in_progress or completed, with a priority (low, medium, high, "
        "urgent), an optional due day (YYYY-MM-DD), labels, a project and an assignee ('me' is the user). A task "
        "not completed and due before today is overdue. Close finished or duplicate tasks with complete_task; "
        "deleting a task cannot be undone."
    ),
    tables=TABLES,
    tools=TOOLS,
    sensitive=SENSITIVE,
)
