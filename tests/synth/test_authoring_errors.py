"""What a task author sees for a mistake: one line naming the file, the field and what to do; never a traceback.

Driven through the real ``coworkenv`` command line (click's runner on ``coworkenv.train.cli:main``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from coworkenv.servers.kit import SeedError, load_seed
from coworkenv.synth.contract.library import examples_dir
from coworkenv.synth.contract.taskfile import TaskDoc, TaskFileError, load_tasks, parse_task
from coworkenv.train.cli import main
from tests.synth.conftest import base_task

EXAMPLE = "crm-close-umbrella-renewal"


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def one_error_line(result: Result) -> str:
    """The command failed with a single ``Error: …`` line and no traceback."""
    assert result.exit_code != 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    return lines[0]


def task_error(edit: Callable[[dict[str, Any]], None]) -> str:
    data = base_task()
    edit(data)
    with pytest.raises(TaskFileError) as info:
        parse_task(TaskDoc("task.json", data))
    message = str(info.value)
    assert "\n" not in message and "function-after" not in message and "Matcher]" not in message
    return message


def set_filter(value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        data["forbidden_actions"][0]["match"]["arguments"]["status"] = value

    return edit


def write_task(folder: Path, edit: Callable[[dict[str, Any]], None], name: str = "task.json") -> Path:
    data = base_task()
    edit(data)
    path = folder / name
    path.write_text(json.dumps(data))
    return path


# ---------------------------------------------------------------------------------------------- matcher typos
def test_a_misspelt_operator_is_named_with_the_closest_one_and_the_list_of_operators() -> None:
    message = task_error(set_filter({"contians": "x"}))
    assert message.startswith("task.json: field forbidden_actions[0].match.arguments.status: ")
    assert "unknown matcher operator 'contians' (did you mean 'contains'?)" in message
    assert "equals, contains, regex, in, gt, gte, lt, lte, exists, any, not" in message
    assert "more problem" not in message  # the "not a string, not a number" noise of the other types is left out


def test_an_unknown_operator_beside_a_good_one_is_named() -> None:
    message = task_error(set_filter({"gte": 1, "lessthan": 3}))
    assert "field forbidden_actions[0].match.arguments.status: unknown matcher operator 'lessthan'" in message


def test_a_typo_in_a_nested_matcher_names_the_nested_path() -> None:
    def edit(data: dict[str, Any]) -> None:
        data["completion_checks"][0]["check"]["fields"]["escalated"] = {"not": {"equal": True}}

    message = task_error(edit)
    assert "field completion_checks[0].check.fields.escalated.not: unknown matcher operator 'equal'" in message
    assert "did you mean 'equals'?" in message


def test_an_empty_matcher_says_it_needs_an_operator() -> None:
    message = task_error(set_filter({}))
    assert "field forbidden_actions[0].match.arguments.status: a matcher needs at least one operator" in message
    assert "Value error" not in message


def test_the_spelt_out_operators_still_load() -> None:
    parse_task(TaskDoc("task.json", base_task()))
    edit = set_filter({"in_": ["solved"], "not_": {"equals": "open"}, "case_insensitive": True})
    data = base_task()
    edit(data)
    parse_task(TaskDoc("task.json", data))


# ---------------------------------------------------------------------------------------------- other task typos
def test_an_unknown_check_kind_names_the_kind_field_and_the_closest_kind() -> None:
    message = task_error(lambda d: d["completion_checks"][0]["check"].update(kind="record_feilds"))
    assert message.startswith("task.json: field completion_checks[0].check.kind: unknown kind 'record_feilds'")
    assert "did you mean 'record_fields'?" in message and "said_contains" in message


def test_a_missing_check_kind_names_the_kind_field() -> None:
    message = task_error(lambda d: d["completion_checks"][0]["check"].pop("kind"))
    assert message.startswith("task.json: field completion_checks[0].check.kind: is required but missing")


def test_a_missing_weight_names_the_check() -> None:
    message = task_error(lambda d: d["completion_checks"][0].pop("weight"))
    assert message == "task.json: field completion_checks[0].weight: is required but missing"


def test_an_unknown_field_of_a_check_names_its_path_without_the_kind_tag() -> None:
    message = task_error(lambda d: d["completion_checks"][0]["check"].update(feilds={}))
    assert message.startswith("task.json: field completion_checks[0].check.feilds: is not a known field")


def test_validate_shows_the_readable_matcher_error_for_the_file(tmp_path: Path) -> None:
    path = write_task(tmp_path, set_filter({"contians": "x"}))
    out = tmp_path / "report.json"
    result = invoke("validate", path, "--json", out)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "unknown matcher operator 'contians'" in result.output and "function-after" not in result.output
    [report] = json.loads(out.read_text())
    [diag] = report["diagnostics"]
    assert diag["path"] == "$.forbidden_actions[0].match.arguments.status" and report["execution"] is None


def test_grade_of_a_task_with_a_misspelt_operator_is_one_error_line(tmp_path: Path) -> None:
    path = write_task(tmp_path, set_filter({"contians": "x"}))
    line = one_error_line(invoke("grade", path, "--dir", tmp_path))
    assert str(path) in line and "unknown matcher operator 'contians'" in line


# ---------------------------------------------------------------------------------------------- validate --json
def test_validate_json_carries_what_running_the_task_found(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = invoke("validate", examples_dir() / f"{EXAMPLE}.json", "--json", out)
    assert result.exit_code == 0, result.output
    [report] = json.loads(out.read_text())
    execution = report["execution"]
    assert execution["reference"]["score"] == 1.0 and execution["reference"]["checks"]
    assert execution["noop"]["score"] == 0.0
    assert execution["mutations"] and {"description", "score", "lost_score"} <= set(execution["mutations"][0])
    names = [a["name"] for a in execution["adversaries"]]
    assert "spray" in names and names == [a["name"] for a in report["adversaries"]]
    assert "diagnostics" not in execution  # they are in the report itself, once


def test_validate_json_without_execution_says_so_with_null(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = invoke("validate", examples_dir() / f"{EXAMPLE}.json", "--json", out, "--no-exec")
    assert result.exit_code == 0, result.output
    [report] = json.loads(out.read_text())
    assert report["execution"] is None and report["adversaries"] == []


def test_validate_json_into_a_missing_folder_is_one_error_line_before_any_work(tmp_path: Path) -> None:
    out = tmp_path / "nowhere" / "report.json"
    line = one_error_line(invoke("validate", examples_dir() / f"{EXAMPLE}.json", "--json", out))
    assert "does not exist" in line and not out.parent.exists()


# ---------------------------------------------------------------------------------------------- bad task files
ALIAS_BOMB = "\n".join(
    ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
).encode()
"""~430 bytes that PyYAML's safe_load expands to 9^9 values (77 s of CPU); refused at the first alias."""


def bad_files(folder: Path) -> dict[str, Path]:
    files = {
        "latin1.json": b'{"id": "caf\xe9"}',
        "deep.json": b"[" * 100_000 + b"]" * 100_000,
        "deep.jsonl": b"[" * 100_000 + b"]" * 100_000 + b"\n",
        "latin1.jsonl": b'{"id": "caf\xe9"}\n',
        "bad.yaml": b"id: [unclosed\nrequest: x\n",
        "deep.yaml": b"[" * 1_000 + b"]" * 1_000,
        "broken.json": b'{"id": ',
        "bomb.yaml": ALIAS_BOMB,
    }
    out = {}
    for name, content in files.items():
        (folder / name).write_bytes(content)
        out[name] = folder / name
    return out


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("latin1.json", "is not UTF-8"),
        ("deep.json", "nests deeper than"),
        ("deep.jsonl", "nests deeper than"),
        ("latin1.jsonl", "not UTF-8"),
        ("bad.yaml", "is not valid YAML"),
        ("deep.yaml", "nests deeper than"),
        ("broken.json", "is not valid JSON"),
        ("bomb.yaml", "aliases (*a0) are not allowed; write the value out in full at line 2"),
    ],
)
def test_a_task_file_that_cannot_be_read_is_one_line_naming_the_file(tmp_path: Path, name: str, words: str) -> None:
    path = bad_files(tmp_path)[name]
    with pytest.raises(TaskFileError) as info:
        load_tasks(path)
    message = str(info.value)
    assert "\n" not in message and str(path) in message and words in message
    assert message.count(str(path)) == 1


@pytest.mark.parametrize("name", ["latin1.json", "deep.json", "bad.yaml", "deep.jsonl"])
def test_grade_of_an_unreadable_task_file_is_one_error_line(tmp_path: Path, name: str) -> None:
    path = bad_files(tmp_path)[name]
    before = sorted(p.name for p in tmp_path.iterdir())
    line = one_error_line(invoke("grade", path, "--dir", tmp_path))
    assert str(path) in line
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_validate_reports_each_unreadable_task_file_as_invalid(tmp_path: Path) -> None:
    files = bad_files(tmp_path)
    result = invoke("validate", tmp_path, "--no-exec")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert f"{len(files)} task(s): 0 valid, {len(files)} invalid" in result.output
    assert "is not UTF-8" in result.output and "nests deeper than" in result.output


# ---------------------------------------------------------------------------------------------- bad seed files
@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("latin1.json", "is not UTF-8"),
        ("deep.json", "nests deeper than"),
        ("bad.yaml", "is not valid YAML"),
        ("broken.json", "is not valid JSON"),
        ("bomb.yaml", "aliases (*a0) are not allowed"),
    ],
)
def test_a_seed_file_that_cannot_be_read_is_a_one_line_seed_error(tmp_path: Path, name: str, words: str) -> None:
    path = bad_files(tmp_path)[name]
    with pytest.raises(SeedError) as info:
        load_seed(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"seed file {path}") and words in message


def test_a_seed_file_must_hold_an_object(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_text("[]")
    with pytest.raises(SeedError, match="must hold an object"):
        load_seed(path)
