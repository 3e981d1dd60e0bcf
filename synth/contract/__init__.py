"""The task contract every layer reads: the task model, checks and matchers, the one grader (with the state-diff
guard), the reference runner, task files, diagnostics, and validation (static, by execution, against adversaries).

It imports nothing from the generators (``coworkenv.synth.generate``); the harness and training import only this
and the model-call floor beside it (``coworkenv.synth.model_io``: usage, infrastructure errors;
``coworkenv.synth.providers``: retries, scrubbing, costs).
"""

from coworkenv.synth.contract.baseline import Baseline, NoExpectedChanges
from coworkenv.synth.contract.checks import KINDS, Check, ForbiddenMatch
from coworkenv.synth.contract.diagnostics import Diagnostic
from coworkenv.synth.contract.grader import PASS_THRESHOLD, CheckResult, ForbiddenResult, Grade, grade
from coworkenv.synth.contract.matchers import Filter, Matcher
from coworkenv.synth.contract.task import (
    CompletionCheck,
    ForbiddenAction,
    SayStep,
    Step,
    Task,
    ToolStep,
    task_json_schema,
)
from coworkenv.synth.contract.taskfile import TaskFileError, load_task, load_tasks, save_task, save_tasks
from coworkenv.synth.contract.validation.execution import ExecReport, validate_exec
from coworkenv.synth.contract.validation.static import validate_static
from coworkenv.synth.contract.validation.validate import TaskReport, validate_paths, validate_task

__all__ = [
    "KINDS",
    "PASS_THRESHOLD",
    "Baseline",
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
    "NoExpectedChanges",
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
