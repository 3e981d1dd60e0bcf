"""Reading and writing task files: one task per ``.json``/``.yaml``/``.yml`` file, many per ``.jsonl`` file.

Every error names the file (and line, for JSON lines) and the field, and says what to do.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from coworkenv.servers.kit.atomic import write_atomic
from coworkenv.servers.kit.files import MAX_DEPTH, DocumentError, depth_exceeds, gc_paused, one_line, read_document
from coworkenv.synth.contract.task import Task

SUFFIXES = (".json", ".yaml", ".yml", ".jsonl")


class TaskFileError(ValueError):
    """A task file that cannot be read, parsed or validated; the message names the file and the field."""

    def __init__(self, source: str, message: str, field: str | None = None, *, whole: bool = False) -> None:
        """``whole``: ``message`` already names the file and is the whole message."""
        self.source = source
        self.field = field
        self.detail = message
        where = f"{source}: field {field}" if field else source
        super().__init__(message if whole else f"{where}: {message}")


@dataclass(frozen=True)
class TaskDoc:
    """One task document as read from a file, before validation."""

    source: str
    data: Any


NOT_TASKS = {"synthesis_report.json", "run.json", "curation.json", "import_report.json"}
"""Files that live beside tasks in a folder but are not tasks."""


def format_loc(loc: Sequence[int | str]) -> str:
    """A pydantic error location as a path: ``completion_checks[0].check.weight``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(task)"


_NOT_GIVEN: Any = object()
_MISMATCH_SUFFIXES = ("_type", "_parsing")
_VALUE_PREFIXES = ("Value error, ", "Assertion failed, ")


_TYPE_NAMES = frozenset({"str", "int", "float", "bool", "none", "dict", "list"})


def _is_label(part: int | str) -> bool:
    """A location part pydantic adds for a union member (``function-after[…]``, ``list[any]``, ``str``)."""
    return isinstance(part, str) and ("[" in part or "(" in part or part in _TYPE_NAMES)


def _holds(container: Any, part: int | str) -> bool:
    if isinstance(container, dict):
        return isinstance(part, str) and part in container
    return isinstance(container, list) and isinstance(part, int) and -len(container) <= part < len(container)


def clean_loc(loc: Sequence[int | str], data: Any = _NOT_GIVEN, missing: bool = False) -> list[int | str]:
    """The path of the field in the document: the union member names and tags pydantic inserts are dropped.

    With ``data`` (the document validated) a part is kept when the document has it there (or it is the last
    part of a ``missing`` error); without it, only the parts that look like union member names are dropped.
    """
    out: list[int | str] = []
    current = data
    for index, part in enumerate(loc):
        last = index == len(loc) - 1
        if current is _NOT_GIVEN:
            if not _is_label(part):
                out.append(part)
            continue
        if _holds(current, part):
            out.append(part)
            current = current[part]
        elif last and missing:
            out.append(part)
        # otherwise: a union member's name or a tag, not a field of the document
    return out


def _is_mismatch(err_type: str) -> bool:
    return err_type.endswith(_MISMATCH_SUFFIXES)


def _message(err: Mapping[str, Any]) -> tuple[str, str | None]:
    """(message, extra path part) for one pydantic error, in plain words."""
    kind, msg, ctx = err["type"], str(err["msg"]), err.get("ctx") or {}
    if kind == "missing":
        return "is required but missing", None
    if kind == "extra_forbidden":
        return "is not a known field (check the spelling against `coworkenv schema task`)", None
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        key = str(ctx.get("discriminator", "kind")).strip("'\"")
        expected = re.findall(r"'([^']*)'", str(ctx.get("expected_tags", "")))
        if kind == "union_tag_not_found":
            return "is required but missing" + (f"; use one of: {', '.join(expected)}" if expected else ""), key
        tag = str(ctx.get("tag", ""))
        close = difflib.get_close_matches(tag, expected, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return f"unknown {key} {one_line(tag, 60)!r}{hint}; use one of: {', '.join(expected)}", key
    for prefix in _VALUE_PREFIXES:
        if msg.startswith(prefix):
            msg = msg[len(prefix) :]
    return msg, None


_FIELD_FIRST = re.compile(r"([a-z][a-z0-9_]*): ")


def validation_errors(exc: ValidationError, data: Any = _NOT_GIVEN) -> list[tuple[str, str]]:
    """(field path, message) for each problem of a pydantic validation error, in plain words.

    Paths are the document's own (``completion_checks[0].check.fields.status``, no union member names), and
    when a value could have been one of several types, the "not a string / not a number" noise of the
    types it was not meant to be is left out in favour of the problem with the one it was.
    """
    found: list[tuple[list[int | str], str, bool]] = []
    for err in exc.errors():
        message, extra = _message(err)
        loc = clean_loc(err["loc"], data, missing=err["type"] == "missing")
        if extra is not None:
            loc.append(extra)
        named = _FIELD_FIRST.match(message) if not loc else None
        if named:  # a whole-document rule about one field ("completion_checks: write at least one check")
            loc, message = [named.group(1)], message[named.end() :]
        found.append((loc, message, _is_mismatch(err["type"])))
    out: list[tuple[str, str]] = []
    for loc, message, mismatch in found:
        if mismatch and any(not m and other[: len(loc)] == loc for other, _, m in found):
            continue
        item = (format_loc(loc), one_line(message, 600))
        if item not in out:
            out.append(item)
    return out


def _read_lines(p: Path) -> list[TaskDoc]:
    """The documents of a .jsonl file, with the same checks as :func:`read_document` (UTF-8, depth, JSON)."""
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise TaskFileError(str(p), f"cannot read the file: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TaskFileError(str(p), f"not UTF-8 text (bad byte at offset {exc.start}); save it as UTF-8") from exc
    docs = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        source = f"{p}:{number}"
        too_deep = f"nests deeper than {MAX_DEPTH} levels; flatten it"
        try:
            with gc_paused():
                data = json.loads(line)
        except RecursionError as exc:
            raise TaskFileError(source, too_deep) from exc
        except json.JSONDecodeError as exc:
            raise TaskFileError(source, f"not valid JSON: {exc.msg} at column {exc.colno}") from exc
        except (ValueError, OverflowError) as exc:
            raise TaskFileError(source, one_line(f"not valid JSON: {exc}")) from exc
        if depth_exceeds(data, MAX_DEPTH):
            raise TaskFileError(source, too_deep)
        docs.append(TaskDoc(source, data))
    return docs


def read_documents(path: str | Path) -> list[TaskDoc]:
    """Parse a task file into documents (one, or one per non-blank line of a .jsonl file).

    A file that can't be read, isn't UTF-8, doesn't parse or nests absurdly deep is a one-line
    :class:`TaskFileError` naming the file.
    """
    p = Path(path)
    if p.suffix not in SUFFIXES:
        raise TaskFileError(str(p), f"unknown task file type {p.suffix!r}; use one of {', '.join(SUFFIXES)}")
    if p.suffix == ".jsonl":
        return _read_lines(p)
    try:
        data = read_document(p, "task")
    except DocumentError as exc:
        raise TaskFileError(str(p), str(exc), whole=True) from exc
    return [TaskDoc(str(p), data)]


def parse_task(doc: TaskDoc) -> Task:
    """Validate one document as a task; the error names the source and the first bad field."""
    if not isinstance(doc.data, dict):
        raise TaskFileError(doc.source, f"a task must be an object, got {type(doc.data).__name__}")
    try:
        with gc_paused():  # a task of 100k checks: no collections mid-validation (see gc_paused)
            return Task.model_validate(doc.data)
    except ValidationError as exc:
        problems = validation_errors(exc, doc.data)
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
        write_atomic(p, yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    elif p.suffix == ".json":
        write_atomic(p, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        raise TaskFileError(str(p), "a single task is saved as .json, .yaml or .yml; use save_tasks for .jsonl")
    return p


def save_tasks(tasks: Iterable[Task], path: str | Path) -> Path:
    """Write tasks as JSON lines."""
    p = Path(path)
    lines = [json.dumps(task_dict(t), ensure_ascii=False, separators=(",", ":")) for t in tasks]
    write_atomic(p, "".join(line + "\n" for line in lines))
    return p


def task_files(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given, folders expanded (recursively) to their task files, sorted. Hidden files and folders
    (a workspace's ``.mcp.json``, a writer's ``.NAME.tmp``) are never tasks."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            out += sorted(
                f
                for f in p.rglob("*")
                if f.is_file()
                and f.suffix in SUFFIXES
                and f.name not in NOT_TASKS
                and not any(part.startswith(".") for part in f.relative_to(p).parts)
            )
        else:
            out.append(p)
    return out
