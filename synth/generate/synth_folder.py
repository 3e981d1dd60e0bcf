"""The output folder of ``coworkenv synth``: every file in it is whole at any moment, and a killed run resumes.

- Each accepted task is written as it is settled, through the kit's atomic writer (a temporary file in the same
  folder, fsync, rename); the report is written last the same way. A kill leaves only whole files.
- ``.synth.journal`` (JSON lines, but not named ``.jsonl``: the task loader reads those as tasks) records the
  run: its first line holds the options that decide the output (plan, count, seed, generator, model, rounds,
  version), then one line per settled slot attempt, appended whole (write, flush, fsync) after the task file it
  names. ``--resume`` replays it: a slot whose file is whole (the
  SHA-256 the journal holds) is kept, a missing or changed file is made again, the rest is generated, and the
  output is byte for byte that of an uninterrupted run. Other options than the journal's are refused.
- ``--overwrite`` of a folder that holds files generates into the sibling ``.NAME.synth-new`` and swaps it in
  only when complete; the old set waits in ``.NAME.synth-old`` until the swap is done. A later run finishes an
  interrupted swap (or restores the old set) and removes the leftovers.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections import deque
from dataclasses import asdict, dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import IO, Any

from coworkenv.servers.kit.atomic import (
    append_line,
    atomic_open,
    fsync_folder,
    read_json_lines,
    remove_temp_files,
    write_atomic,
)
from coworkenv.synth.contract.diagnostics import Diagnostic
from coworkenv.synth.generate.plan import CapabilityPlan
from coworkenv.synth.generate.synth_report import REPORT_FILE

JOURNAL = ".synth.journal"
FORMAT = 1
NEW, OLD = "synth-new", "synth-old"


class FolderError(ValueError):
    """An output folder this run cannot use; the message is one line that says what to do."""


@dataclass
class Settled:
    """One settled attempt of a slot, as the journal holds it (the task's text lives in its own file)."""

    round: int
    slot: int
    kept: bool
    """Whether the run accepted the task (so ``TASK_ID.json`` holds it)."""
    task_id: str
    key: tuple[str, str]
    sha256: str | None
    """Of the task's text; ``None`` when the attempt made no task."""
    repairs: int
    rejected: list[str]
    reason: str | None
    detail: str
    feedback: list[dict[str, Any]]
    usage: dict[str, Any]
    """The run's usage (tokens, cost) when this line was written, earlier sessions included."""

    def diagnostics(self) -> list[Diagnostic]:
        return [Diagnostic.model_validate(d) for d in self.feedback]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Settled:
        return cls(**{**data, "key": tuple(data["key"])})


def run_options(
    plan: CapabilityPlan, count: int | None, seed: int, generator: str, model: str | None, max_rounds: int
) -> dict[str, Any]:
    """The options that decide a run's output, as its journal records them (``--workers`` does not: the output
    is the same for any number)."""
    plan_json = json.dumps(plan.model_dump(mode="json"), sort_keys=True)
    try:
        made_by = version("coworkenv")
    except PackageNotFoundError:
        made_by = "unknown"
    return {
        "plan": plan.name,
        "plan_sha256": digest(plan_json),
        "count": plan.count if count is None else count,
        "seed": seed,
        "generator": generator,
        "model": model,
        "max_rounds": max_rounds,
        "coworkenv": made_by,
    }


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _sibling(out: Path, what: str) -> Path:
    return out.parent / f".{out.name}.{what}"


def _busy(folder: Path) -> bool:
    return folder.exists() and any(folder.iterdir())


def recover(out: Path) -> None:
    """Finish or undo a swap that a kill interrupted, and remove what an interrupted ``--overwrite`` left."""
    new, old = _sibling(out, NEW), _sibling(out, OLD)
    if old.is_dir() and not _busy(out):  # killed between the two renames of the swap
        os.replace(new if (new / REPORT_FILE).is_file() else old, out)
        fsync_folder(out.parent)
    for leftover in (new, old):
        if leftover.is_dir():
            shutil.rmtree(leftover)


class SynthFolder:
    """Where one synthesis run writes; see the module's docstring. ``options`` decide the output."""

    def __init__(self, out: Path, options: dict[str, Any], *, resume: bool = False, overwrite: bool = False) -> None:
        if resume and overwrite:
            raise FolderError("--resume keeps the tasks in --out and --overwrite replaces them; give one of the two")
        recover(out)
        self.out, self.options, self.dropped = out, options, ""
        self.replayed, self.remade = 0, 0
        """Tasks kept from the interrupted run (replayed from the journal), and those whose file was made again."""
        self.swap = overwrite and _busy(out)
        self.folder = _sibling(out, NEW) if self.swap else out
        self._queue: deque[tuple[str, Settled]] = deque()
        self._kept_lines = [self._header()]
        self.usage_before: dict[str, Any] = {}
        if resume and _busy(out):
            self._load()
        elif _busy(out) and not overwrite:
            interrupted = (out / JOURNAL).is_file() and not (out / REPORT_FILE).is_file()
            hint = " (an interrupted run: add --resume to finish it)" if interrupted else ""
            raise FolderError(f"{out} is not empty{hint}; give an empty or new folder, --resume or --overwrite")
        else:
            self.folder.mkdir(parents=True, exist_ok=True)
            write_atomic(self.folder / JOURNAL, self._header())
        self._journal: IO[str] = (self.folder / JOURNAL).open("a", encoding="utf-8")

    def _header(self) -> str:
        return json.dumps({"coworkenv_synth_journal": FORMAT, "options": self.options}, sort_keys=True) + "\n"

    def _load(self) -> None:
        path = self.out / JOURNAL
        if not path.is_file():
            raise FolderError(
                f"{self.out} holds no {JOURNAL}: --resume continues only a run that `coworkenv synth` started "
                "there; give an empty or new folder, or --overwrite"
            )
        try:
            found = read_json_lines(path)
        except ValueError as exc:
            raise FolderError(f"{exc}; start again with --overwrite") from None
        self.dropped = found.torn_note(path)
        head = found.lines[0][2] if found.lines else None
        if not isinstance(head, dict) or head.get("coworkenv_synth_journal") != FORMAT:
            raise FolderError(f"{path} is not a synthesis journal this version reads; start again with --overwrite")
        if head.get("options") != self.options:
            raise FolderError(f"{self.out} was made with {_differences(head.get('options'), self.options)}")
        remove_temp_files(self.out)
        (self.out / REPORT_FILE).unlink(missing_ok=True)  # the report marks a complete run: it comes back last
        try:
            entries = [(text, Settled.from_json(value)) for _, text, value in found.lines[1:]]
        except (TypeError, KeyError, ValueError) as exc:
            raise FolderError(
                f"{path}: a line is not a settled attempt ({exc}); start again with --overwrite"
            ) from None
        self._queue.extend(entries)
        self.usage_before = dict(entries[-1][1].usage) if entries else {}
        write_atomic(path, self._header() + "".join(text + "\n" for text, _ in entries))  # without a torn line

    # ------------------------------------------------------------------------------------------ replaying
    def recorded(self, round_: int, slot: int) -> Settled | None:
        """The journal's next settled attempt when it is this round's ``slot`` (else ``None``)."""
        if self._queue and (self._queue[0][1].round, self._queue[0][1].slot) == (round_, slot):
            return self._queue[0][1]
        return None

    def kept_text(self, entry: Settled) -> str | None:
        """The task file of a kept entry, when it is whole and unchanged (else ``None``: make it again)."""
        try:
            text = (self.folder / f"{entry.task_id}.json").read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        return text if digest(text) == entry.sha256 else None

    def consume(self, kept: bool, remade: bool = False) -> None:
        """The recorded head was replayed (its task file ``remade`` when it was missing or changed) and the run
        ``kept`` its task or not, as the journal says it did."""
        text, entry = self._queue.popleft()
        if kept != entry.kept:
            raise FolderError(
                f"{self.out / JOURNAL} does not match this run (slot {entry.slot} of round {entry.round} was "
                f"{'' if entry.kept else 'not '}kept); start again with --overwrite"
            )
        self._kept_lines.append(text + "\n")
        self.replayed += entry.kept and not remade
        self.remade += remade

    # ------------------------------------------------------------------------------------------ writing
    def write_task(self, task_id: str, text: str) -> None:
        # the folder is fsynced once, at the end: a rename lost to a power cut is a missing file that the
        # journal's hash sends to be made again, and a folder fsync per task costs as much as the file's own
        write_atomic(self.folder / f"{task_id}.json", text, sync_folder=False)

    def record(self, entry: Settled, text: str | None) -> None:
        """A newly settled attempt: its task file first (when kept), then its journal line."""
        if entry.kept and text is not None:
            self.write_task(entry.task_id, text)
        if self._queue:  # what the journal held after this point was made from a state that no longer holds
            self._queue.clear()
            self._journal.close()
            write_atomic(self.folder / JOURNAL, "".join(self._kept_lines))
            self._journal = (self.folder / JOURNAL).open("a", encoding="utf-8")
        line = json.dumps(asdict(entry), sort_keys=True, ensure_ascii=False)
        append_line(self._journal, line)
        self._kept_lines.append(line + "\n")

    def finish(self, task_ids: list[str], report: dict[str, Any]) -> Path:
        """Remove task files the run did not keep, write the report last, and swap a new set in."""
        self._journal.close()
        keep = {f"{t}.json" for t in task_ids} | {REPORT_FILE}
        for stale in self.folder.glob("*.json"):
            if stale.name not in keep:
                stale.unlink()
        fsync_folder(self.folder)
        with atomic_open(self.folder / REPORT_FILE) as handle:
            handle.write(json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
        if self.swap:
            old = _sibling(self.out, OLD)
            os.replace(self.out, old)
            os.replace(self.folder, self.out)
            fsync_folder(self.out.parent)
            shutil.rmtree(old)
        return self.out / REPORT_FILE

    def close(self) -> None:
        self._journal.close()


def _differences(made: Any, given: dict[str, Any]) -> str:
    if not isinstance(made, dict):
        return "options this version cannot read; start again with --overwrite"
    names = [k for k in sorted(given) if made.get(k) != given[k]]
    before = ", ".join(f"{k} {made.get(k)!r}" for k in names)
    now = ", ".join(f"{k} {given[k]!r}" for k in names)
    return f"{before} (now {now}); resume with the same options, or use --overwrite or another --out"


__all__ = ["JOURNAL", "FolderError", "Settled", "SynthFolder", "digest", "recover", "run_options"]
