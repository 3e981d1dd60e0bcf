"""The family guide's template runs: its one file, registered by its decorator, makes tasks that pass the full
validation at every level and joins the default plan; the same file in another package joins through the
``coworkenv.families`` entry point, and ``coworkenv synth`` makes validated tasks of it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest

from coworkenv.servers.kit.plugins import FAMILIES_GROUP, register_entry_points
from coworkenv.servers.registry import register_service, unregister_service
from coworkenv.servers.template import SERVICE as NOTES
from coworkenv.synth.contract.validation.validate import validate_task
from coworkenv.synth.generate.families import FAMILIES, add_family, unregister_family
from coworkenv.synth.generate.plan import coverage_plan, load_plan
from tests.guides import guide_module, install_dist, python_blocks

GUIDE = "synth/generate/families/README.md"
NAME = "notes-duplicate-note"


@pytest.fixture
def notes() -> Iterator[None]:
    register_service(NOTES)
    try:
        yield
    finally:
        unregister_service(NOTES.name)


@pytest.fixture
def family(tmp_path: Path, notes: None) -> Iterator[ModuleType]:
    (code,) = python_blocks(GUIDE)
    try:
        with guide_module(tmp_path, "duplicate_note", code) as module:
            yield module
    finally:
        unregister_family(NAME)


@pytest.mark.parametrize("level", ["easy", "medium", "hard"])
def test_the_guide_family_registers_itself_and_its_tasks_pass_the_full_validation(
    family: ModuleType, level: Any
) -> None:
    assert isinstance(FAMILIES[NAME], family.DuplicateNote)

    async def main() -> None:
        task = FAMILIES[NAME].make(("notes",), level, 7)
        with anyio.fail_after(60):
            report = await validate_task(task)
        assert report.valid, "\n".join(d.line() for d in report.errors)
        assert report.execution is not None and report.execution.reference is not None
        assert report.execution.reference.score == 1.0

    anyio.run(main)


def test_the_default_plan_draws_a_registered_family_that_fits_it_without_an_edit(family: ModuleType) -> None:
    class OnTickets(family.DuplicateNote):  # type: ignore[name-defined,misc]
        name = "tickets-extra"
        service_options = (("tickets",),)

    add_family(OnTickets)
    try:
        plan = load_plan()
        assert plan.scenarios is not None and plan.scenarios[-1].family == "tickets-extra"
        assert NAME not in {s.family for s in plan.scenarios}, "the plan has no notes combination: it is left out"
        assert any(c.quota for c in coverage_plan(plan, 400, 0) if c.scenario == "tickets-extra")
    finally:
        unregister_family("tickets-extra")


def test_a_plan_without_scenarios_takes_every_registered_family_that_fits(family: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "notes.json"
    path.write_text(
        json.dumps(
            {"name": "notes", "capabilities": [{"name": "distractor rejection"}], "service_combinations": [["notes"]]}
        )
    )
    cells = coverage_plan(load_plan(path), 6, 0)
    assert {c.scenario for c in cells} == {NAME} and sum(c.quota for c in cells) == 6


def test_a_family_of_another_package_joins_through_its_entry_point(tmp_path: Path, notes: None) -> None:
    (tmp_path / "duplicate_note.py").write_text(python_blocks(GUIDE)[0] + "\n")
    install_dist(tmp_path, "notes_family", {FAMILIES_GROUP: {NAME: "duplicate_note:DuplicateNote"}})
    sys.path.insert(0, str(tmp_path))
    try:
        register_entry_points(FAMILIES_GROUP, add_family)
        assert FAMILIES[NAME].service_options == (("notes",),)
    finally:
        unregister_family(NAME)
        sys.modules.pop("duplicate_note", None)
        sys.path.remove(str(tmp_path))


@pytest.mark.slow
def test_coworkenv_synth_makes_validated_tasks_of_a_plugin_family_on_a_plugin_service(tmp_path: Path) -> None:
    pkg = tmp_path / "site"
    pkg.mkdir()
    (pkg / "duplicate_note.py").write_text(python_blocks(GUIDE)[0] + "\n")
    install_dist(
        pkg,
        "notes_plugin",
        {
            "coworkenv.services": {"notes": "coworkenv.servers.template:SERVICE"},
            FAMILIES_GROUP: {NAME: "duplicate_note:DuplicateNote"},
        },
    )
    plan = tmp_path / "plan.yaml"
    plan.write_text("name: notes\ncapabilities: [{name: distractor rejection}]\nservice_combinations: [[notes]]\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(pkg), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "coworkenv.train.cli", "synth", "--plan", str(plan), "--count", "3"]
    done = subprocess.run(
        [*command, "--out", str(tmp_path / "out")], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    tasks = [json.loads(p.read_text()) for p in (tmp_path / "out").glob("*.json") if p.name != "synthesis_report.json"]
    assert len(tasks) == 3 and all(t["services"] == ["notes"] for t in tasks)
