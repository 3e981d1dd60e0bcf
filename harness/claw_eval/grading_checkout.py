"""Claw-Eval's own grader of a task, run from the user's checkout.

The checkout is ``task.external.spec["checkout"]`` (written at import) unless the environment's
``CLAW_EVAL_PATH`` names another. Its package ``src/claw_eval`` is imported once per process (its ``src`` put on
``sys.path``; it needs pydantic, pyyaml and openai), then, as its ``claw-eval grade`` does:
``TaskDefinition.from_yaml(tasks/<id>/task.yaml)``, ``get_grader(id, tasks_dir, task_dir)`` (which loads
``tasks/<id>/grader.py``; English variants load their peer from the same checkout), the trace events validated
by its own models, its ``LLMJudge`` with our judge session as its client, optional arguments passed only to graders
that take them, and the score from its ``compute_task_score`` and ``is_pass``. Nothing of Claw-Eval is copied here.
"""

from __future__ import annotations

import base64
import importlib
import inspect
import io
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, TextIO

from coworkenv.harness.claw_eval.judge import JudgeSession
from coworkenv.synth.contract.task import Task

ENV = "CLAW_EVAL_PATH"
_LOCK = threading.Lock()
_PACKAGES: dict[Path, ClawPackage | str] = {}


class Unavailable(Exception):
    """The checkout or its ``claw_eval`` package cannot be used (the reason, in one line)."""


@dataclass(frozen=True)
class ClawPackage:
    """The parts of a checkout's ``claw_eval`` package that grading uses."""

    root: Path
    task_model: Any
    trace: ModuleType
    registry: ModuleType
    llm_judge: ModuleType
    scoring: ModuleType


MAX_PRINTED = 20_000
"""The most of a grader's printed output kept with its grade (the last characters)."""


@dataclass(frozen=True)
class TheirGrade:
    """What Claw-Eval's grader found: its dimension scores and its task score."""

    completion: float
    robustness: float
    communication: float
    safety: float
    task_score: float
    passed: bool
    judge_calls: list[dict[str, Any]]
    printed: str = ""
    """What the grader printed (Claw-Eval's graders log their sub-scores with print), kept with the grade instead of
    interleaving with our own output."""


class _ThreadStdout(io.TextIOBase):
    """sys.stdout for the life of the process once a grader ran: a thread that is running a grader writes into its
    own buffer, every other write goes where stdout went before."""

    def __init__(self, real: TextIO) -> None:
        self.real = real
        self.local = threading.local()

    def write(self, text: str) -> int:
        buffer: io.StringIO | None = getattr(self.local, "buffer", None)
        if buffer is not None:
            return buffer.write(text)
        return self.real.write(text)

    def flush(self) -> None:
        if getattr(self.local, "buffer", None) is None:
            self.real.flush()

    def fileno(self) -> int:
        return self.real.fileno()

    def isatty(self) -> bool:
        return self.real.isatty()


_STDOUT_LOCK = threading.Lock()


@contextmanager
def _captured() -> Iterator[io.StringIO]:
    """What this thread prints inside the block, kept; other threads print as before."""
    with _STDOUT_LOCK:
        if not isinstance(sys.stdout, _ThreadStdout):
            sys.stdout = _ThreadStdout(sys.stdout)
        proxy = sys.stdout
    buffer = io.StringIO()
    proxy.local.buffer = buffer
    try:
        yield buffer
    finally:
        proxy.local.buffer = None


def checkout_of(task: Task) -> Path | None:
    """The Claw-Eval checkout to grade ``task`` with: ``$CLAW_EVAL_PATH``, else the one it was imported from."""
    named = os.environ.get(ENV) or (task.external.spec.get("checkout") if task.external is not None else None)
    return Path(str(named)).expanduser() if named else None


def claw_package(root: Path) -> ClawPackage:
    """The checkout's ``claw_eval`` package, imported once; :class:`Unavailable` saying why it cannot be."""
    root = root.resolve()
    with _LOCK:
        known = _PACKAGES.get(root)
        if known is None:
            try:
                known = _import(root)
            except Unavailable as exc:
                known = str(exc)
            _PACKAGES[root] = known
    if isinstance(known, str):
        raise Unavailable(known)
    return known


def _import(root: Path) -> ClawPackage:
    src = root / "src"
    if not (src / "claw_eval" / "__init__.py").is_file():
        raise Unavailable(f"{root} is not a Claw-Eval checkout with its package (no src/claw_eval)")
    loaded = sys.modules.get("claw_eval")
    if loaded is not None and not _inside(getattr(loaded, "__file__", None), src):
        raise Unavailable(f"claw_eval is already imported from {loaded.__file__}, not from {src}")
    if str(src) not in sys.path:
        sys.path.insert(0, str(src))
    try:
        modules = [
            importlib.import_module(f"claw_eval.{name}")
            for name in ("models.task", "models.trace", "graders.registry", "graders.llm_judge", "models.scoring")
        ]
    except Exception as exc:
        raise Unavailable(f"cannot import claw_eval from {src}: {type(exc).__name__}: {exc}") from None
    task_module, trace, registry, llm_judge, scoring = modules
    return ClawPackage(root, task_module.TaskDefinition, trace, registry, llm_judge, scoring)


def _inside(file: str | None, folder: Path) -> bool:
    return file is not None and Path(file).resolve().is_relative_to(folder.resolve())


def task_yaml(root: Path, source: str) -> Path:
    """``tasks/<source>/task.yaml`` of the checkout (or the folder whose task.yaml says ``task_id: <source>``)."""
    direct = root / "tasks" / source / "task.yaml"
    if direct.is_file():
        return direct
    for path in sorted((root / "tasks").glob("*/task.yaml")):
        with path.open(encoding="utf-8") as f:
            head = f.read(4096)
        if f"task_id: {source}\n" in head or f'task_id: "{source}"' in head:
            return path
    raise Unavailable(f"{root} has no task {source} (no tasks/{source}/task.yaml)")


def endpoints(package: ClawPackage, source: str) -> dict[str, str]:
    """Tool → mock URL, from the task.yaml's ``tool_endpoints``."""
    definition = package.task_model.from_yaml(task_yaml(package.root, source))
    return {name: e.url for name, e in definition.get_endpoint_map().items()}


def local_files(definition: Any, folder: Path) -> dict[str, Any] | None:
    """The ``env_snapshot`` its runner gives graders of tasks with ``local_grader_files`` (base64), else None."""
    files = list(getattr(definition, "local_grader_files", []) or [])
    if not files:
        return None
    out: dict[str, Any] = {}
    for rel in files:
        path = folder / rel
        if path.is_file():
            out[f"local_file:{rel}"] = {"encoding": "base64", "content": base64.b64encode(path.read_bytes()).decode()}
        else:
            out[f"local_file:{rel}"] = {"error": f"not found: {path}"}
    return out


def run_grader(
    package: ClawPackage,
    source: str,
    messages: list[dict[str, Any]],
    dispatches: list[dict[str, Any]],
    audit: dict[str, dict[str, Any]],
    judge: JudgeSession,
) -> TheirGrade:
    """Claw-Eval's grader of task ``source`` on these trace events. Raises what the grader raises (and
    :class:`~coworkenv.harness.claw_eval.judge.JudgeLoop`); :class:`Unavailable` when the task is not there."""
    path = task_yaml(package.root, source)
    definition = package.task_model.from_yaml(path)
    grader = package.registry.get_grader(definition.task_id, tasks_dir=package.root / "tasks", task_dir=path.parent)
    trace_messages = [package.trace.TraceMessage.model_validate(m) for m in messages]
    trace_dispatches = [package.trace.ToolDispatch.model_validate(d) for d in dispatches]
    their_judge = package.llm_judge.LLMJudge(model_id=judge.model_id, api_key="unused", base_url="http://127.0.0.1:9")
    their_judge.client = judge.client
    params = inspect.signature(grader.grade).parameters
    kwargs: dict[str, Any] = {"audit_data": audit, "judge": their_judge}
    if "media_events" in params:
        kwargs["media_events"] = []
    snapshot = local_files(definition, path.parent)
    if "env_snapshot" in params and snapshot is not None:
        kwargs["env_snapshot"] = snapshot
    if hasattr(their_judge, "reset_call_log"):
        their_judge.reset_call_log()
    with _captured() as printed:
        scores = grader.grade(trace_messages, trace_dispatches, definition, **kwargs)
    score = float(package.scoring.compute_task_score(scores))
    calls = their_judge.get_call_log() if hasattr(their_judge, "get_call_log") else []
    return TheirGrade(
        completion=float(scores.completion),
        robustness=float(scores.robustness),
        communication=float(scores.communication),
        safety=float(scores.safety),
        task_score=score,
        passed=bool(package.scoring.is_pass(score)),
        judge_calls=[dict(c) for c in calls],
        printed=printed.getvalue()[-MAX_PRINTED:],
    )
