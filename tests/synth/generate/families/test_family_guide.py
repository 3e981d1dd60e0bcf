"""The family guide's template runs: its one file, registered by its decorator, makes tasks that pass the full
validation at every level and joins the default plan; the same file in another package joins through the
``coworkenv.families`` entry point, and ``coworkenv synth`` makes validated tasks of it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest
import yaml
from pydantic import TypeAdapter

from coworkenv.servers.kit.plugins import FAMILIES_GROUP, register_entry_points
from coworkenv.servers.registry import register_service, unregister_service
from coworkenv.servers.template import SERVICE as NOTES
from coworkenv.synth.contract.checks import KINDS, Check
from coworkenv.synth.contract.validation.validate import validate_task
from coworkenv.synth.generate.families import FAMILIES, add_family, unregister_family
from coworkenv.synth.generate.plan import coverage_plan, load_plan, parse_plan
from tests.guides import ROOT, guide_module, install_dist, python_blocks

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
    code = python_blocks(GUIDE)[0]
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


def test_the_default_plan_draws_a_registered_family_on_any_registered_service_without_an_edit(
    family: ModuleType,
) -> None:
    class OnTickets(family.DuplicateNote):  # type: ignore[name-defined,misc]
        name = "tickets-extra"
        service_options = (("tickets",),)

    add_family(OnTickets)
    try:
        plan = load_plan()
        assert plan.scenarios is not None and [s.family for s in plan.scenarios][-2:] == [NAME, "tickets-extra"]
        drawn = {c.scenario for c in coverage_plan(plan, 400, 0) if c.quota}
        assert {NAME, "tickets-extra"} <= drawn, "the notes family is drawn on the notes service it registered"
    finally:
        unregister_family("tickets-extra")
    unregister_service(NOTES.name)
    assert NAME not in {s.family for s in load_plan().scenarios or []}, "no notes service: its family is left out"


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


def test_the_guides_test_runs_the_checks_every_family_gets(family: ModuleType) -> None:
    _, test = python_blocks(GUIDE)
    scope: dict[str, Any] = {}
    exec(compile(test, GUIDE, "exec"), scope)
    scope["test_the_family_makes_valid_tasks_at_every_level"]()


def test_the_guide_lists_every_check_kind_with_an_example_that_validates() -> None:
    text = (ROOT / GUIDE).read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \| .+? \| `(\{.+\})` \|$", text, flags=re.M)
    checks = TypeAdapter(Check)
    for kind, example in rows:
        assert checks.validate_python(json.loads(example.replace("\\|", "|"))).kind == kind
    assert [kind for kind, _ in rows] == list(KINDS)


def test_the_guides_plan_validates_and_draws_the_guide_family(family: ModuleType) -> None:
    (doc,) = re.findall(r"```yaml\n(.+?)\n```", (ROOT / GUIDE).read_text(encoding="utf-8"), flags=re.S)
    plan = parse_plan(yaml.safe_load(doc))
    cells = coverage_plan(plan, 20, 0)
    assert {c.scenario for c in cells if c.quota} == {NAME} and {c.difficulty for c in cells} == {"medium", "hard"}
