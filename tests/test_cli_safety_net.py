"""The `coworkenv` command never ends in a traceback: a path it cannot use, a file it cannot read and an error
nobody foresaw each end in one `Error:` line that says what to do, with nothing written."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from coworkenv.servers.cli import TRACEBACK_ENV, CommandGroup
from coworkenv.train.cli import main


def one_error_line(result: Result, *words: str) -> str:
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1, result.output
    for word in words:
        assert word in errors[0], errors[0]
    return errors[0]


@pytest.fixture
def blocked(tmp_path: Path) -> Path:
    """A path whose parent is a file: no folder can ever be made there."""
    (tmp_path / "a-file").write_text("not a folder")
    return tmp_path / "a-file" / "out"


def test_workspace_in_a_folder_that_cannot_be_made_says_so(blocked: Path) -> None:
    result = CliRunner().invoke(main, ["workspace", "payments-bank-change-investigation", "--dir", str(blocked)])
    one_error_line(result, str(blocked), "Not a directory")


def test_run_with_an_output_folder_that_cannot_be_made_says_so(blocked: Path) -> None:
    result = CliRunner().invoke(main, ["run", "--tasks", "examples", "--agent", "noop", "--out", str(blocked)])
    one_error_line(result, str(blocked))


def test_synth_refuses_an_output_folder_it_cannot_make_before_any_work(blocked: Path) -> None:
    result = CliRunner().invoke(main, ["synth", "--count", "3", "--out", str(blocked), "-q"])
    line = one_error_line(result, str(blocked), "--out")
    assert "synthesizing" not in result.output and "accepted" not in result.output, line


def test_grade_with_an_answer_that_is_not_utf8_names_the_byte(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    assert CliRunner().invoke(main, ["workspace", "tickets-triage-new-urgent", "--dir", str(ws)]).exit_code == 0
    answer = tmp_path / "answer.txt"
    answer.write_bytes(b"Done \xff\xfe")
    before = {p.name: p.read_bytes() for p in ws.iterdir() if p.is_file()}
    result = CliRunner().invoke(main, ["grade", "tickets-triage-new-urgent", "--dir", str(ws), "--answer", str(answer)])
    one_error_line(result, "not UTF-8", "offset 5")
    assert {p.name: p.read_bytes() for p in ws.iterdir() if p.is_file()} == before


def _group_with(fail: BaseException) -> click.Group:
    @click.group(cls=CommandGroup)
    def group() -> None:
        """A test group."""

    @group.command("boom")
    def boom() -> None:
        raise fail

    return group


def test_an_unforeseen_error_is_one_line_asking_for_a_report(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TRACEBACK_ENV, raising=False)
    result = CliRunner().invoke(_group_with(KeyError("cursor")), ["boom"])
    line = one_error_line(result, "unexpected error", "KeyError", "cursor", TRACEBACK_ENV)
    assert "report" in line


def test_the_traceback_variable_lets_the_error_through(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TRACEBACK_ENV, "1")
    result = CliRunner().invoke(_group_with(KeyError("cursor")), ["boom"])
    assert isinstance(result.exception, KeyError)


def test_a_file_system_error_names_the_path_and_the_remedy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TRACEBACK_ENV, raising=False)
    full = OSError(28, "No space left on device", "/data/runs/trajectories.jsonl")
    result = CliRunner().invoke(_group_with(full), ["boom"])
    one_error_line(result, "/data/runs/trajectories.jsonl", "No space left", "free some disk space")


def test_click_s_own_errors_and_exits_pass_unchanged() -> None:
    result = CliRunner().invoke(_group_with(click.ClickException("a clear message")), ["boom"])
    assert result.exit_code == 1 and result.output.strip() == "Error: a clear message"
    assert CliRunner().invoke(_group_with(click.exceptions.Exit(3)), ["boom"]).exit_code == 3


def test_a_closed_output_pipe_ends_quietly() -> None:
    result = CliRunner().invoke(_group_with(BrokenPipeError(32, "Broken pipe")), ["boom"])
    assert result.exit_code == 1
    assert "Error" not in result.output and "Traceback" not in result.output
