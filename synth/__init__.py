"""coworkenv.synth: tasks as data, the one grader, and validation of tasks (static and by execution)."""

from coworkenv.synth.checks import KINDS, Check, ForbiddenMatch
from coworkenv.synth.diagnostics import Diagnostic
from coworkenv.synth.grader import PASS_THRESHOLD, CheckResult, ForbiddenResult, Grade, grade
from coworkenv.synth.matchers import Filter, Matcher
from coworkenv.synth.task import CompletionCheck, ForbiddenAction, SayStep, Step, Task, ToolStep, task_json_schema
from coworkenv.synth.taskfile import TaskFileError, load_task, load_tasks, save_task, save_tasks
from coworkenv.synth.validate import TaskReport, validate_paths, validate_task
from coworkenv.synth.validate_exec import ExecReport, validate_exec
from coworkenv.synth.validate_static import validate_static

__all__ = [
    "KINDS",
    "PASS_THRESHOLD",
    "Check",
    "CheckResult",
    "CompletionCheck",
    "Diagnostic",
    "ExecReport",
    "Filter",
    "ForbiddenAction",
    "ForbiddenMatch",
    "ForbiddenResult",
    "Grade",
    "Matcher",
    "SayStep",
    "Step",
    "Task",
    "TaskFileError",
    "TaskReport",
    "ToolStep",
    "grade",
    "load_task",
    "load_tasks",
    "save_task",
    "save_tasks",
    "task_json_schema",
    "validate_exec",
    "validate_paths",
    "validate_static",
    "validate_task",
]
