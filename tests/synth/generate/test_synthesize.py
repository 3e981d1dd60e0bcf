"""A synthesis run: the tasks it writes validate, the same seed gives the same bytes, failed and duplicate
slots are retried with feedback, and the report counts what happened; ``coworkenv synth`` end to end."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import click
import pytest
from click.testing import CliRunner, Result

from coworkenv.synth.cli_synth import COMMANDS
from coworkenv.synth.contract.diagnostics import Diagnostic
from coworkenv.synth.contract.task import Task
from coworkenv.synth.contract.validation.validate import validate_paths
from coworkenv.synth.generate.generator import GeneratorUnavailable, TaskGenerator, make_generator
from coworkenv.synth.generate.plan import Cell, coverage_plan, load_plan, parse_plan
from coworkenv.synth.generate.procedural import ProceduralGenerator, build_task, derive_seed
from coworkenv.synth.generate.synth_folder import FolderError, SynthFolder, run_options
from coworkenv.synth.generate.synth_report import REPORT_FILE, format_report
from coworkenv.synth.generate.synthesize import SynthesisResult, synthesize

CLI = click.Group("coworkenv", commands={c.name: c for c in COMMANDS if c.name})
ONE_FAMILY = {
    "name": "one-family",
    "count": 4,
    "capabilities": [{"name": "clarification with the user"}],
    "service_combinations": [["crm"]],
    "difficulties": {"easy": 1},
    "scenarios": [{"family": "crm-clarify-contact"}],
}


def invoke(*args: str) -> Result:
    return CliRunner().invoke(CLI, [str(a) for a in args])


def synth_into(folder: Path, count: int, seed: int, **kw: Any) -> SynthesisResult:
    """A run of the default plan that writes into ``folder`` (as ``coworkenv synth`` does)."""
    options = run_options(load_plan(), count, seed, "procedural", None, 3)
    return synthesize(load_plan(), count=count, seed=seed, folder=SynthFolder(folder, options), **kw)


def task_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.json") if p.name != REPORT_FILE)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


# ---------------------------------------------------------------------------------------------- procedural runs
def test_a_run_makes_the_requested_number_of_tasks_and_every_file_validates(tmp_path: Path) -> None:
    result = synth_into(tmp_path, 6, 4)
    files = task_files(tmp_path)
    assert len(files) == 6 and result.report["accepted"] == 6 and result.report["unfilled"] == 0
    reports = anyio.run(validate_paths, files)
    assert all(r.valid for r in reports), [d.line() for r in reports for d in r.errors]
    cells = {c.key: c for c in coverage_plan(load_plan(), 6, 4)}
    covered = {(c["scenario"], c["difficulty"]) for c in result.report["coverage"]["cells"] if c["accepted"]}
    assert covered == {(c.scenario, c.difficulty) for c in cells.values() if c.quota}


def test_the_same_seed_gives_byte_identical_files_whatever_the_workers(tmp_path: Path) -> None:
    synth_into(tmp_path / "one", 5, 9)
    synth_into(tmp_path / "again", 5, 9)
    synth_into(tmp_path / "two-workers", 5, 9, workers=2)
    synth_into(tmp_path / "other-seed", 5, 10)
    first = snapshot(tmp_path / "one")
    assert snapshot(tmp_path / "again") == first
    assert snapshot(tmp_path / "two-workers") == first
    assert snapshot(tmp_path / "other-seed") != first


def test_a_folder_that_is_not_empty_is_only_replaced_when_asked(tmp_path: Path) -> None:
    (tmp_path / "old.json").write_text("{}")
    options = run_options(load_plan(), 1, 0, "procedural", None, 3)
    with pytest.raises(FolderError, match="not empty"):
        SynthFolder(tmp_path, options)
    result = synthesize(load_plan(), count=1, folder=SynthFolder(tmp_path, options, overwrite=True))
    assert [p.name for p in task_files(tmp_path)] == [f"{result.tasks[0][0]}.json"]
    assert (tmp_path / REPORT_FILE).is_file()


# ---------------------------------------------------------------------------------------------- retries and the report
@dataclass
class Outcome:
    task: Task | None
    repairs: int = 0
    diagnostics: list[Diagnostic] = field(default_factory=list)
    reason: str | None = None
    detail: str = ""

    @property
    def accepted(self) -> bool:
        return self.task is not None


def _problem(code: str) -> list[Diagnostic]:
    return [Diagnostic(code=code, path="$", message="broken", fix="fix it")]


class ScriptedGenerator:
    """Slot 0 fails once, slot 1 succeeds after a repair, slot 2 first copies slot 1, slot 3 never succeeds."""

    name = "scripted"

    def __init__(self, cell: Cell, seed: int) -> None:
        self.slot_of = {derive_seed(seed, cell.key, i, r): (i, r) for i in range(4) for r in range(3)}
        self.first_of_slot1 = derive_seed(seed, cell.key, 1, 0)
        self.feedback: dict[int, list[str]] = {}

    async def generate(self, cell: Cell, seed: int, feedback: list[Diagnostic] | None = None) -> Outcome:
        slot, rnd = self.slot_of[seed]
        self.feedback.setdefault(slot, []).extend(d.code for d in feedback or [])
        if slot == 0 and rnd == 0:
            return Outcome(None, 2, _problem("WEIGHTS_SUM"), "invalid", "weights sum to 0.9")
        if slot == 2 and rnd == 0:
            return Outcome(build_task(cell, self.first_of_slot1))
        if slot == 3:
            return Outcome(None, 2, _problem("NOOP_PASSES_CHECK"), "invalid", "a no-op passes")
        return Outcome(build_task(cell, seed), repairs=1 if slot == 1 else 0)

    def report(self) -> dict[str, Any]:
        return {"input_tokens": 1200, "output_tokens": 300, "requests": 9, "cost_usd": 0.42}


def test_failed_and_duplicate_slots_are_retried_with_feedback_and_the_report_counts_them() -> None:
    plan = parse_plan(ONE_FAMILY)
    (cell,) = [c for c in coverage_plan(plan, 4, 0) if c.quota]
    generator = ScriptedGenerator(cell, 0)
    assert isinstance(generator, TaskGenerator)
    report = synthesize(plan, count=4, seed=0, generator=generator).report
    assert report["generator"] == "scripted" and report["requested"] == 4
    assert report["accepted"] == 3 and report["unfilled"] == 1 and report["rounds"] == 3
    assert report["duplicates"] == 1 and report["duplicates_dropped"][0][1] == report["tasks"][1]
    assert report["repaired"] == 2  # slot 0 (after feedback) and slot 1 (repaired inside the generator)
    assert report["rejected"] == {"drafts": 4, "by_reason": {"NOOP_PASSES_CHECK": 3, "WEIGHTS_SUM": 1}}
    assert generator.feedback[0] == ["WEIGHTS_SUM"] and generator.feedback[2] == ["DUPLICATE"]
    assert report["gave_up"][0]["detail"] == "a no-op passes"
    assert report["usage"]["input_tokens"] == 1200 and report["usage"]["cost_usd"] == 0.42
    assert report["coverage"]["cells"] == [{**cell.as_dict(), "accepted": 3}]


def test_a_model_without_a_price_reports_its_cost_as_unknown_and_a_procedural_run_as_zero() -> None:
    plan = parse_plan(ONE_FAMILY)
    (cell,) = [c for c in coverage_plan(plan, 4, 0) if c.quota]

    class Unpriced(ScriptedGenerator):
        def report(self) -> dict[str, Any]:
            return {"input_tokens": 1200, "output_tokens": 300, "requests": 9, "cost_usd": None}

    unpriced = synthesize(plan, count=4, seed=0, generator=Unpriced(cell, 0)).report
    assert unpriced["usage"]["cost_usd"] is None and unpriced["usage"]["cache_read_tokens"] == 0
    assert "1200 in, 300 out; cost unknown" in format_report(unpriced)
    procedural = synthesize(plan, count=2, seed=0).report
    assert procedural["usage"]["cost_usd"] == 0 and "cost $0.0000" in format_report(procedural)


def test_the_procedural_generator_repairs_by_building_again_and_keeps_the_failed_codes() -> None:
    cell = Cell("clarification with the user", "crm-clarify-contact", ("crm",), "easy")
    outcome = anyio.run(ProceduralGenerator(max_repairs=1).generate, cell, 5)
    assert outcome.accepted and outcome.repairs == 0 and outcome.rejected_drafts == []
    assert outcome.task is not None and outcome.task.capabilities[0] == "clarification with the user"
    broken = Cell("clarification with the user", "crm-clarify-contact", ("email",), "easy")
    failed = anyio.run(ProceduralGenerator(max_repairs=1).generate, broken, 5)
    assert not failed.accepted and failed.rejected_drafts == ["FAMILY_FAILED", "FAMILY_FAILED"]


class BrokenGenerator:
    name = "broken"

    async def generate(self, cell: Cell, seed: int, feedback: list[Diagnostic] | None = None) -> Outcome:
        raise RuntimeError("no API key: set ANTHROPIC_API_KEY")

    def report(self) -> dict[str, Any]:
        return {}


def test_a_generator_that_cannot_work_at_all_stops_the_run_with_its_own_error() -> None:
    with pytest.raises(RuntimeError, match="no API key"):
        synthesize(parse_plan(ONE_FAMILY), count=2, generator=BrokenGenerator(), workers=2)


# ---------------------------------------------------------------------------------------------- the command
def test_the_synth_command_writes_tasks_and_a_report_and_prints_the_table(tmp_path: Path) -> None:
    out = tmp_path / "tasks"
    result = invoke("synth", "--count", "4", "--seed", "3", "--out", str(out), "--quiet")
    assert result.exit_code == 0, result.output
    for words in ("accepted", "rejected", "repaired", "duplicates", "tokens", "coverage by scenario", "tasks/s"):
        assert words in result.output
    report = json.loads((out / REPORT_FILE).read_text())
    assert report["accepted"] == 4 and len(task_files(out)) == 4 and report["usage"]["cost_usd"] == 0.0
    again = invoke("synth", "--count", "4", "--out", str(out))
    assert again.exit_code != 0 and "not empty" in again.output


def test_the_llm_generator_is_accepted_but_says_when_it_is_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "coworkenv.synth.generate.llm_generator", None)
    with pytest.raises(GeneratorUnavailable, match="not installed yet"):
        make_generator("llm")
    result = invoke("synth", "--generator", "llm", "--count", "2", "--out", "unused-folder")
    assert result.exit_code != 0 and "LLM generator is not installed yet" in result.output
    assert not Path("unused-folder").exists()


def test_pooled_workers_are_pinned_one_to_a_cpu_only_when_there_are_enough_cpus(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from coworkenv.synth.generate import pinning

    monkeypatch.setattr(pinning.os, "sched_getaffinity", lambda pid: {5, 3}, raising=False)
    assert pinning.cores_for(2) == [3, 5]
    assert pinning.cores_for(3) == []  # more workers than CPUs: the scheduler places them
    assert pinning.cores_for(1) == []  # one process: nothing to keep apart
    assert pinning.start_counter([]) is None
    pinned: list[set[int]] = []
    monkeypatch.setattr(pinning.os, "sched_setaffinity", lambda pid, cpus: pinned.append(set(cpus)), raising=False)
    started = pinning.start_counter([3, 5])
    for _ in range(3):
        pinning.pin(started, [3, 5])
    pinning.pin(None, [])  # nothing to pin
    assert pinned == [{3}, {5}, {3}]

    def refused(pid: int, cpus: set[int]) -> None:
        raise PermissionError("not allowed")

    monkeypatch.setattr(pinning.os, "sched_setaffinity", refused, raising=False)
    pinning.pin(started, [3, 5])  # a machine that forbids pinning runs the worker unpinned
