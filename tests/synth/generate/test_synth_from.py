"""``coworkenv synth --from DIR``: tasks grounded on a folder of the user's files, every one validated like any
other synthesis; a file that cannot be loaded is a warning line and the run goes on; a bad folder is one line."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from coworkenv.synth.cli_synth import synth_cmd
from coworkenv.synth.generate.synth_folder import JOURNAL
from tests.synth.generate.resources.files import write_folder

CONTENTS = ("Travel policy", "notes", "budget.csv", "ledger.csv", "Orbit Labs Accounts")


def test_synth_from_a_folder_makes_validated_tasks_about_its_files(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "files")
    out = tmp_path / "out"
    result = CliRunner().invoke(synth_cmd, ["--from", str(folder), "--count", "12", "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    assert "warning: skipped broken.csv: malformed" in result.output
    assert "loaded 2 documents, 2 sheets, 2 mails, 2 events" in result.output
    report = json.loads((out / "synthesis_report.json").read_text())
    tasks = [json.loads(p.read_text()) for p in sorted(out.glob("*.json")) if p.name != "synthesis_report.json"]
    assert len(tasks) == 12 and report["accepted"] == 12 and not report["unfilled"]
    assert {t["metadata"]["family"] for t in tasks} == {
        "document-question",
        "invoice-mail-to-log",
        "sheet-payments-reconcile",
        "sheet-summary-report",
    }
    for t in tasks:
        assert any(c in t["request"] for c in CONTENTS), t["request"]
    assert '"resources"' in (out / JOURNAL).read_text(encoding="utf-8").splitlines()[0]


def test_synth_from_a_bad_folder_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "only.pdf").write_text("x")
    for folder, says in ((tmp_path / "nope", "no such folder"), (tmp_path / "only.pdf", "not a folder")):
        result = CliRunner().invoke(synth_cmd, ["--from", str(folder), "--out", str(tmp_path / "o")])
        assert result.exit_code == 1 and says in result.output
        assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output


def test_synth_from_files_no_family_can_use_says_so(tmp_path: Path) -> None:
    (tmp_path / "prose.md").write_text("# Musings\n\nNothing here states a fact.\n", encoding="utf-8")
    result = CliRunner().invoke(synth_cmd, ["--from", str(tmp_path), "--out", str(tmp_path / "o")])
    assert result.exit_code == 1 and "no family finds a subject in its files" in result.output
