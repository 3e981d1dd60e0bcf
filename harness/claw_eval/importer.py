"""``coworkenv import claw-eval CHECKOUT --out DIR``: a user's Claw-Eval checkout as coworkenv task files.

For every folder of ``CHECKOUT/tasks`` the importer reads ``task.yaml`` and the fixtures it names, and either writes
one task file of ours (``DIR/claw-eval.<id>.json``, what ``coworkenv run --tasks DIR`` loads) or records why not;
``DIR/import_report.json`` lists every folder found (``{"id", "imported", "reason"?, "file"?}``). The mapping of one
task is :mod:`.import_task`, reading the checkout :mod:`.import_read`.

Nothing of Claw-Eval is copied into coworkenv: the import reads only the user's checkout, and the task files it
writes name it (``external.spec.checkout``) for the grading bridge to find each task's ``grader.py``. Each file is
written atomically; files in ``DIR`` that the import did not write are never touched, and a task file an earlier
import wrote for a task that is refused now is removed (it would run a task that no longer imports).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coworkenv.harness.claw_eval.import_read import NotACheckout, Refused, read_task_yaml, task_folders
from coworkenv.harness.claw_eval.import_task import ID_PREFIX, convert
from coworkenv.servers.kit.atomic import write_atomic
from coworkenv.synth.contract.taskfile import save_task

REPORT_FILE = "import_report.json"

__all__ = ["REPORT_FILE", "ImportEntry", "ImportReport", "NotACheckout", "OutError", "import_claw_eval"]


class OutError(ValueError):
    """The output folder cannot be used."""


@dataclass(frozen=True)
class ImportEntry:
    """What became of one task folder."""

    id: str
    imported: bool
    reason: str | None = None
    file: str | None = None
    group: str | None = None
    """The reason without the task's details (counted in the summary; not written to the report)."""

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "imported": self.imported}
        if self.reason is not None:
            out["reason"] = self.reason
        if self.file is not None:
            out["file"] = self.file
        return out


@dataclass
class ImportReport:
    checkout: Path
    out: Path
    entries: list[ImportEntry] = field(default_factory=list)

    @property
    def imported(self) -> list[ImportEntry]:
        return [e for e in self.entries if e.imported]

    def refusals(self) -> list[tuple[str, int]]:
        """Each refusal group with its count, most frequent first."""
        counts = Counter(e.group or e.reason or "" for e in self.entries if not e.imported)
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))

    def summary(self) -> str:
        """``imported N of M tasks; refused: K needs web_real (live web search), ...``"""
        head = f"imported {len(self.imported)} of {len(self.entries)} tasks"
        refused = self.refusals()
        if not refused:
            return f"{head}; none refused"
        return f"{head}; refused: " + ", ".join(f"{n} {group}" for group, n in refused)

    def as_json(self) -> dict[str, Any]:
        return {
            "source": "claw-eval",
            "checkout": str(self.checkout.resolve()),
            "imported": len(self.imported),
            "total": len(self.entries),
            "refused": dict(self.refusals()),
            "tasks": [e.as_json() for e in self.entries],
        }


def _prepare_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise OutError(f"--out {out} is a file; pass a folder to write the task files into")
    out.mkdir(parents=True, exist_ok=True)


def _ours(path: Path) -> bool:
    """Whether ``path`` is a task file this importer wrote (so it may replace or remove it)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    external = data.get("external") if isinstance(data, dict) else None
    return (
        isinstance(external, dict)
        and external.get("kind") == "claw-eval"
        and str(data.get("id", "")).startswith(ID_PREFIX)
    )


def _previous_files(out: Path) -> set[str]:
    """The task files an earlier import into ``out`` wrote, as its report lists them."""
    try:
        data = json.loads((out / REPORT_FILE).read_text(encoding="utf-8"))
        return {str(e["file"]) for e in data["tasks"] if isinstance(e, dict) and e.get("file")}
    except (OSError, ValueError, KeyError, TypeError):
        return set()


def _import_one(checkout: Path, folder: Path, out: Path, taken: dict[str, str]) -> ImportEntry:
    try:
        data = read_task_yaml(folder)
        task = convert(checkout, folder, data)
        if task.id in taken:
            raise Refused(f"its id {task.id} is taken by {taken[task.id]}", "id taken by another task")
        name = f"{task.id}.json"
        target = out / name
        if target.exists() and not _ours(target):
            raise Refused(f"{target} exists and is not a task file this import wrote", "task file name in use")
    except Refused as refused:
        return ImportEntry(folder.name, False, reason=refused.reason, group=refused.group)
    taken[task.id] = folder.name
    save_task(task, target)
    return ImportEntry(folder.name, True, file=name)


def import_claw_eval(checkout: str | Path, out: str | Path) -> ImportReport:
    """Import every task of a Claw-Eval checkout that coworkenv can run into ``out``; the report says what became
    of each. Raises :class:`NotACheckout` or :class:`OutError` (one line) before writing anything."""
    root, target = Path(checkout), Path(out)
    folders = task_folders(root)
    _prepare_out(target)
    earlier = _previous_files(target)
    report = ImportReport(root, target)
    taken: dict[str, str] = {}
    for folder in folders:
        report.entries.append(_import_one(root, folder, target, taken))
    written = {e.file for e in report.imported}
    for stale in sorted(earlier - written):
        path = target / stale
        if Path(stale).name == stale and path.is_file() and _ours(path):
            path.unlink()
    write_atomic(target / REPORT_FILE, json.dumps(report.as_json(), indent=2, ensure_ascii=False) + "\n")
    return report
