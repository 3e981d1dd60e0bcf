"""The synth output folder survives a kill: a real ``coworkenv synth`` killed with SIGKILL leaves only whole
files, ``--resume`` then gives the bytes of an uninterrupted run, and a kill during ``--overwrite`` leaves
the old set whole."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from coworkenv.synth.cli_synth import COMMANDS
from coworkenv.synth.contract.diagnostics import Diagnostic
from coworkenv.synth.generate.plan import Cell, coverage_plan, parse_plan
from coworkenv.synth.generate.synth_folder import JOURNAL, SynthFolder, recover, run_options
from coworkenv.synth.generate.synth_report import REPORT_FILE
from coworkenv.synth.generate.synthesize import synthesize
from tests.synth.generate.test_synthesize import ONE_FAMILY, Outcome, ScriptedGenerator

CLI = click.Group("coworkenv", commands={c.name: c for c in COMMANDS if c.name})
SYNTH = [sys.executable, "-c", "from coworkenv.synth.cli_synth import synth_cmd; synth_cmd()"]


def synth(*args: str | Path) -> Result:
    return CliRunner().invoke(CLI, ["synth", "--quiet", *(str(a) for a in args)])


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file of a folder, hidden ones (the journal, any temporary file) included."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def task_count(folder: Path) -> int:
    try:
        return sum(1 for p in folder.glob("*.json") if p.name != REPORT_FILE)
    except OSError:
        return 0


def killed_after(tasks: int, folder: Path, *args: str | Path) -> None:
    """Start ``coworkenv synth ARGS`` in a process and SIGKILL it once ``folder`` holds ``tasks`` task files
    (polled: each wait is the process's own, ended early if it exits)."""
    proc = subprocess.Popen([*SYNTH, "--quiet", *(str(a) for a in args)], stdout=subprocess.DEVNULL)
    try:
        for _ in range(3000):
            if task_count(folder) >= tasks:
                break
            try:
                proc.wait(timeout=0.05)
                break
            except subprocess.TimeoutExpired:
                pass
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the run finished before it could be killed"


def test_a_run_killed_midway_leaves_whole_files_and_resume_gives_the_bytes_of_an_uninterrupted_run(
    tmp_path: Path,
) -> None:
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    assert synth("--out", whole, "-n", 10, "-s", 5).exit_code == 0
    killed_after(3, killed, "--out", killed, "-n", 10, "-s", 5)
    assert not (killed / REPORT_FILE).exists() and 3 <= task_count(killed) < 10
    for path in killed.glob("*.json"):  # whatever the kill interrupted, no task file is torn
        assert path.read_bytes() == (whole / path.name).read_bytes()
    refused = synth("--out", killed, "-n", 10, "-s", 5)
    assert refused.exit_code == 1 and "add --resume to finish it" in refused.output
    resumed = synth("--out", killed, "-n", 10, "-s", 5, "--resume")
    assert resumed.exit_code == 0, resumed.output
    assert "kept from the earlier run" in resumed.output
    assert snapshot(killed) == snapshot(whole)


def test_resume_makes_a_missing_or_changed_task_file_again_and_keeps_the_rest(tmp_path: Path) -> None:
    whole, out = tmp_path / "whole", tmp_path / "out"
    assert synth("--out", whole, "-n", 4, "-s", 2).exit_code == 0
    assert synth("--out", out, "-n", 4, "-s", 2).exit_code == 0
    first, second, *_ = sorted(p for p in out.glob("*.json") if p.name != REPORT_FILE)
    first.unlink()
    second.write_text('{"id": "edited"}\n')
    (out / REPORT_FILE).unlink()
    resumed = synth("--out", out, "-n", 4, "-s", 2, "--resume")
    assert resumed.exit_code == 0, resumed.output
    assert "2 kept from the earlier run, 2 made again (missing or changed)" in resumed.output
    assert snapshot(out) == snapshot(whole)


def test_resume_with_other_options_is_refused_in_one_line(tmp_path: Path) -> None:
    assert synth("--out", tmp_path, "-n", 2, "-s", 1).exit_code == 0
    before = snapshot(tmp_path)
    refused = synth("--out", tmp_path, "-n", 3, "-s", 1, "--resume")
    assert refused.exit_code == 1 and refused.output.count("\n") == 1
    assert "was made with count 2 (now count 3)" in refused.output and "--overwrite" in refused.output
    assert snapshot(tmp_path) == before


def test_resume_of_a_folder_no_synth_run_started_is_refused(tmp_path: Path) -> None:
    (tmp_path / "mine.json").write_text("{}")
    refused = synth("--out", tmp_path, "-n", 2, "--resume")
    assert refused.exit_code == 1 and f"holds no {JOURNAL}" in refused.output
    both = synth("--out", tmp_path, "-n", 2, "--resume", "--overwrite")
    assert both.exit_code == 1 and "give one of the two" in both.output
    assert snapshot(tmp_path) == {"mine.json": b"{}"}


def test_a_torn_journal_line_is_dropped_with_a_warning_and_the_run_still_finishes(tmp_path: Path) -> None:
    whole, out = tmp_path / "whole", tmp_path / "out"
    assert synth("--out", whole, "-n", 3, "-s", 7).exit_code == 0
    assert synth("--out", out, "-n", 3, "-s", 7).exit_code == 0
    lines = (out / JOURNAL).read_text().splitlines(keepends=True)
    (out / JOURNAL).write_text("".join(lines[:2]) + lines[2][:40])
    (out / REPORT_FILE).unlink()
    resumed = synth("--out", out, "-n", 3, "-s", 7, "--resume")
    assert resumed.exit_code == 0, resumed.output
    assert "dropped a torn last line (line 3, 40 bytes)" in resumed.output
    assert snapshot(out) == snapshot(whole)


def test_a_full_disk_stops_the_run_in_one_line_and_resume_finishes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole, out = tmp_path / "whole", tmp_path / "out"
    assert synth("--out", whole, "-n", 4, "-s", 6).exit_code == 0
    real, written = SynthFolder.write_task, []

    def fills_up(self: SynthFolder, task_id: str, text: str) -> None:
        if len(written) == 2:
            raise OSError(28, "No space left on device")
        written.append(task_id)
        real(self, task_id, text)

    monkeypatch.setattr(SynthFolder, "write_task", fills_up)
    stopped = synth("--out", out, "-n", 4, "-s", 6)
    assert stopped.exit_code == 1 and stopped.output.count("\n") == 1
    assert "No space left on device" in stopped.output and "with --resume to finish" in stopped.output
    assert task_count(out) == 2
    monkeypatch.undo()
    assert synth("--out", out, "-n", 4, "-s", 6, "--resume").exit_code == 0
    assert snapshot(out) == snapshot(whole)


def test_a_journal_that_does_not_match_the_run_is_refused_in_one_line(tmp_path: Path) -> None:
    assert synth("--out", tmp_path, "-n", 2, "-s", 1).exit_code == 0
    journal = tmp_path / JOURNAL
    journal.write_text(journal.read_text().replace('"kept": true', '"kept": false', 1))
    refused = synth("--out", tmp_path, "-n", 2, "-s", 1, "--resume")
    assert refused.exit_code == 1 and refused.output.count("\n") == 1
    assert "does not match this run (slot 0 of round 0 was not kept)" in refused.output


def test_a_kill_during_overwrite_leaves_the_old_set_whole_and_the_next_run_cleans_up(tmp_path: Path) -> None:
    out = tmp_path / "tasks"
    assert synth("--out", out, "-n", 2, "-s", 1).exit_code == 0
    old = snapshot(out)
    new = tmp_path / ".tasks.synth-new"
    killed_after(3, new, "--out", out, "-n", 10, "-s", 5, "--overwrite")
    assert snapshot(out) == old and new.is_dir()
    done = synth("--out", out, "-n", 3, "-s", 2, "--overwrite")
    assert done.exit_code == 0, done.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tasks"]
    assert json.loads((out / REPORT_FILE).read_text())["accepted"] == 3 and task_count(out) == 3


def test_a_swap_cut_between_its_two_renames_is_finished_or_undone_by_the_next_run(tmp_path: Path) -> None:
    out, new, old = tmp_path / "tasks", tmp_path / ".tasks.synth-new", tmp_path / ".tasks.synth-old"
    for folder, report in ((new, True), (old, False)):
        folder.mkdir()
        (folder / "t.json").write_text(folder.name)
        if report:
            (folder / REPORT_FILE).write_text("{}")
    recover(out)  # the old set had been moved aside and the new one is complete: the swap is finished
    assert (out / "t.json").read_text() == new.name and sorted(p.name for p in tmp_path.iterdir()) == ["tasks"]
    os.replace(out, old)
    (old / "t.json").write_text("old")
    new.mkdir()  # an incomplete new set: the old one comes back
    recover(out)
    assert (out / "t.json").read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["tasks"]


class CountingGenerator(ScriptedGenerator):
    """The scripted generator (a failure, a repair, a duplicate, a slot given up: three rounds) that reports
    what it spent in this process, as a real one does."""

    def __init__(self, cell: Cell, seed: int) -> None:
        super().__init__(cell, seed)
        self.calls = 0

    async def generate(self, cell: Cell, seed: int, feedback: list[Diagnostic] | None = None) -> Outcome:
        self.calls += 1
        return await super().generate(cell, seed, feedback)

    def report(self) -> dict[str, Any]:
        return {"requests": self.calls, "input_tokens": 100 * self.calls}


def test_a_run_cut_after_any_journal_line_resumes_to_the_same_bytes_through_retries_and_duplicates(
    tmp_path: Path,
) -> None:
    plan = parse_plan(ONE_FAMILY)
    (cell,) = [c for c in coverage_plan(plan, 4, 0) if c.quota]
    options = run_options(plan, 4, 0, "scripted", None, 3)

    def run(folder: SynthFolder) -> None:
        synthesize(plan, count=4, seed=0, generator=CountingGenerator(cell, 0), folder=folder)

    whole = tmp_path / "whole"
    run(SynthFolder(whole, options))
    expected = snapshot(whole)
    lines = expected[JOURNAL].decode().splitlines(keepends=True)
    assert len(lines) == 1 + 4 + 3 + 1  # the options, then round 0 (4 slots), round 1 (3), round 2 (1)
    for cut in range(1, len(lines) + 1):
        out = tmp_path / f"cut-{cut}"
        shutil.copytree(whole, out)
        (out / REPORT_FILE).unlink()
        (out / JOURNAL).write_text("".join(lines[:cut]))
        run(SynthFolder(out, options, resume=True))
        assert snapshot(out) == expected, f"cut after line {cut}"
