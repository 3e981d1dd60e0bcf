"""The resource families: valid at every level on their stand-in files (the default plan draws them), and on a
folder of files written here, whose records they take as their subject and whose contents their tasks mention."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from coworkenv.synth.contract.validation.validate import validate_task
from coworkenv.synth.generate.families import FAMILIES
from coworkenv.synth.generate.families.kit.resources_common import ResourceFamily
from coworkenv.synth.generate.resources import load_resources
from coworkenv.synth.testing import check_family
from tests.synth.generate.resources.files import write_folder

RESOURCE_FAMILIES = sorted(n for n, f in FAMILIES.items() if isinstance(f, ResourceFamily))
MENTIONS = {
    "document-question": ("Travel policy", "notes"),
    "invoice-mail-to-log": ("Orbit Labs Accounts",),
    "sheet-payments-reconcile": ("ledger.csv", "budget.csv"),
    "sheet-summary-report": ("budget.csv",),
}


def test_there_are_at_least_four_resource_families() -> None:
    assert set(MENTIONS) <= set(RESOURCE_FAMILIES)


@pytest.mark.parametrize("name", RESOURCE_FAMILIES)
def test_a_resource_family_makes_valid_tasks_on_its_stand_in_files(name: str) -> None:
    check_family(name)


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(MENTIONS))
async def test_a_resource_family_grounds_valid_tasks_on_the_users_files(name: str, tmp_path: Path) -> None:
    rs = load_resources(write_folder(tmp_path))
    family = FAMILIES[name]
    assert isinstance(family, ResourceFamily) and family.fits(rs)
    loaded = {f"doc_{d.id}" for d in rs.documents} | {f"file_{s.id}" for s in rs.sheets}
    loaded |= {f"file_{d.id}" for d in rs.documents} | {f"msg_{m.id}" for m in rs.mails}
    for level in ("easy", "medium", "hard"):
        task = family.make(family.service_options[0], level, 11, rs)
        with anyio.fail_after(120):
            report = await validate_task(task)
        assert report.valid, [d.line() for d in report.errors]
        assert any(m in task.request for m in MENTIONS[name]), task.request
        seeded = {r["id"] for tables in task.initial_records.values() for rows in tables.values() for r in rows}
        assert seeded & loaded


def test_without_files_that_fit_a_family_uses_its_stand_ins(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Just prose\n\nNothing to ask about here.\n", encoding="utf-8")
    rs = load_resources(tmp_path)
    family = FAMILIES["sheet-summary-report"]
    assert isinstance(family, ResourceFamily) and not family.fits(rs)
    task = family.make(("files", "docs"), "easy", 3, rs)
    assert "spend-" in task.request
