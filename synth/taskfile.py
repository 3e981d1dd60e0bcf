"""Reading and writing task files: one task per ``.json``/``.yaml``/``.yml`` file, many per ``.jsonl`` file.

Every error names the file (and line, for JSON lines) and the field, and says what to do.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from coworkenv.synth.task import Task

SUFFIXES = (".json", ".yaml", ".yml", ".jsonl")


class TaskFileError(ValueError):
    """A task file that cannot be read, parsed or validated; the message names the file and the field."""

    def __init__(self, source: str, message: str, field: str | None = None) -> None:
        self.source = source
        self.field = field
        self.detail = message
        where = f"{source}: field {field}" if field else source
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class TaskDoc:
    """One task document as read from a file, before validation."""

    source: str
    data: Any


NOT_TASKS = {"synthesis_report.json", "run.json", "curation.json"}
"""Files that live beside tasks in a folder but are not tasks."""


def format_loc(loc: Sequence[int | str]) -> str:
    """A pydantic error location as a path: ``completion_checks[0].check.weight``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(task)"


def validation_errors(exc: ValidationError) -> list[tuple[str, str]]:
    """(field path, message) for each problem of a pydantic validation error."""
    out = []
    for err in exc.errors():
        msg = err["msg"]
        if err["type"] == "missing":
            msg = "is required but missing"
        elif err["type"] == "extra_forbidden":
            msg = "is not a known field (check the spelling against `coworkenv schema task`)"
        out.append((format_loc(err["loc"]), msg))
    return out


def read_documents(path: str | Path) -> list[TaskDoc]:
    """Parse a task file into documents (one, or one per non-blank line of a .jsonl file)."""
    p = Path(path)
    if p.suffix not in SUFFIXES:
        raise TaskFileError(str(p), f"unknown task file type {p.suffix!r}; use one of {', '.join(SUFFIXES)}")
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise TaskFileError(str(p), f"cannot read the file: {exc.strerror}") from exc
    if p.suffix == ".jsonl":
        docs = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                docs.append(TaskDoc(f"{p}:{number}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise TaskFileError(f"{p}:{number}", f"not valid JSON: {exc.msg} at column {exc.colno}") from exc
        return docs
    try:
        data = yaml.safe_load(text) if p.suffix in (".yaml", ".yml") else json.loads(text)
    except json.JSONDecodeError as exc:
        raise TaskFileError(str(p), f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
    except yaml.YAMLError as exc:
        raise TaskFileError(str(p), f"not valid YAML: {exc}") from exc
    return [TaskDoc(str(p), data)]


def parse_task(doc: TaskDoc) -> Task:
    """Validate one document as a task; the error names the source and the first bad field."""
    if not isinstance(doc.data, dict):
        raise TaskFileError(doc.source, f"a task must be an object, got {type(doc.data).__name__}")
    try:
        return Task.model_validate(doc.data)
    except ValidationError as exc:
        problems = validation_errors(exc)
        field, message = problems[0]
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        raise TaskFileError(doc.source, message + more, field) from exc


def load_tasks(path: str | Path) -> list[Task]:
    return [parse_task(doc) for doc in read_documents(path)]


def load_task(path: str | Path) -> Task:
    """The one task of a file (a .jsonl file must hold exactly one)."""
    tasks = load_tasks(path)
    if len(tasks) != 1:
        raise TaskFileError(str(path), f"expected one task, found {len(tasks)}; pick one with its id")
    return tasks[0]


def task_dict(task: Task) -> dict[str, Any]:
    return task.model_dump(mode="json", by_alias=True, exclude_none=True)


def save_task(task: Task, path: str | Path) -> Path:
    """Write one task as .json (indented) or .yaml/.yml."""
    p = Path(path)
    data = task_dict(task)
    if p.suffix in (".yaml", ".yml"):
        p.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    elif p.suffix == ".json":
        p.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    else:
        raise TaskFileError(str(p), "a single task is saved as .json, .yaml or .yml; use save_tasks for .jsonl")
    return p


def save_tasks(tasks: Iterable[Task], path: str | Path) -> Path:
    """Write tasks as JSON lines."""
    p = Path(path)
    lines = [json.dumps(task_dict(t), ensure_ascii=False, separators=(",", ":")) for t in tasks]
    p.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return p


def task_files(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given, folders expanded (recursively) to their task files, sorted."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            out += sorted(f for f in p.rglob("*") if f.is_file() and f.suffix in SUFFIXES and f.name not in NOT_TASKS)
        else:
            out.append(p)
    return out
