"""`coworkenv import claw-eval`: a Claw-Eval checkout's tasks as our task files, with a report of what was refused.

The checkout here is a fake one built in tmp_path from small tasks we write in Claw-Eval's format; its services are
fake profile modules registered for the test (``claw_service`` monkeypatched), so the tests hold whichever real
profile modules exist. The last test imports a real checkout, when ``CLAW_EVAL_PATH`` names one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from pydantic import BaseModel

from coworkenv.harness.claw_eval import parity as parity_module
from coworkenv.harness.claw_eval.import_task import DEFAULT_NOW
from coworkenv.harness.claw_eval.importer import REPORT_FILE, NotACheckout, import_claw_eval
from coworkenv.harness.run import load_task_set
from coworkenv.servers import claw_eval
from coworkenv.servers.claw_eval import ClawService, Fixtures, SeedTables
from coworkenv.servers.kit import ToolContext, format_time, tool
from coworkenv.servers.kit.tool import ToolSpec
from coworkenv.synth.contract.taskfile import load_task
from coworkenv.train.cli import main


class _Answer(BaseModel):
    ok: bool = True


def _tool(name: str) -> ToolSpec:
    def fn(ctx: ToolContext) -> _Answer:
        """A fake Claw-Eval tool."""
        return _Answer()

    return tool(name=name)(fn)


def _todo_seed(fixtures: Fixtures) -> SeedTables:
    rows = []
    for name, records in fixtures.items():
        if not isinstance(records, list):
            raise ValueError(f"{name}: a list of tasks expected")
        rows += [
            {"id": r["task_id"], "title": r["title"], "created_at": r["created_at"], "labels": r.get("tags", [])}
            for r in records
        ]
    return {"tasks": rows}


def _project_seed(fixtures: Fixtures) -> SeedTables:
    return {"projects": [{"id": p["id"], "name": p["name"]} for f in fixtures.values() for p in f]}


FAKES = {
    "todo": ClawService(
        "todo", "todo", (_tool("todo_list_tasks"), _tool("todo_update_task")), _todo_seed, lambda s, a: {}
    ),
    "projects": ClawService(
        "projects",
        "todo",
        (_tool("projects_list"),),
        _project_seed,
        lambda s, a: {},
        clock=lambda f: datetime(2026, 4, 1, 8, 0, tzinfo=UTC),
    ),
}


@pytest.fixture(autouse=True)
def fake_services(monkeypatch: pytest.MonkeyPatch) -> None:
    real: Callable[[str], ClawService] = claw_eval.claw_service
    monkeypatch.setattr(claw_eval, "claw_service", lambda name: FAKES[name] if name in FAKES else real(name))


TODOS = [
    {"task_id": "todo_001", "title": "Finish the Q1 report", "created_at": "2026-02-20T10:00:00Z", "tags": ["q1"]},
    {"task_id": "todo_002", "title": "Book the dentist", "created_at": "2026-02-22T14:00:00Z"},
]


def _tool_decl(name: str) -> dict[str, Any]:
    return {"name": name, "description": f"{name} does it", "input_schema": {"type": "object", "properties": {}}}


def _task(task_id: str, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "task_id": task_id,
        "task_name": task_id.split("_", 1)[1].replace("_", " ").title(),
        "version": "1.0",
        "category": "productivity",
        "difficulty": "easy",
        "tags": ["general"],
        "prompt": {"text": "Tidy up my to-do list.", "language": "en"},
        "tools": [],
        "environment": {"timeout_seconds": 300, "max_turns": 20},
        "scoring_components": [{"name": "done", "weight": 1.0, "check": {"type": "llm_judge"}}],
        "safety_checks": [],
        "judge_rubric": "Judge it.",
        "reference_solution": "1. List the tasks.\n",
    }
    return {**base, **fields}


def _service(name: str, fixture: str | None) -> dict[str, Any]:
    env = {f"{name.upper()}_FIXTURES": fixture} if fixture else {}
    return {"name": name, "command": f"python mock_services/{name}/server.py", "port": 9100, "env": env}


def _write(root: Path, task_id: str, data: dict[str, Any] | str, fixtures: Mapping[str, Any] = {}) -> None:
    folder = root / "tasks" / task_id
    folder.mkdir(parents=True)
    text = data if isinstance(data, str) else yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    (folder / "task.yaml").write_text(text, encoding="utf-8")
    (folder / "grader.py").write_text("# the task's grader\n", encoding="utf-8")
    for rel, content in fixtures.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(content), encoding="utf-8")


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "claw-eval"
    todo = _service("todo", "tasks/T010_todo_cleanup/fixtures/todo/tasks.json")
    _write(
        root,
        "T010_todo_cleanup",
        _task(
            "T010_todo_cleanup",
            services=[todo],
            tools=[_tool_decl("todo_list_tasks"), _tool_decl("todo_update_task")],
            safety_checks=[{"type": "tool_not_called", "tool_name": "todo_delete_task"}],
        ),
        {"fixtures/todo/tasks.json": TODOS},
    )
    _write(
        root,
        "T020_web_lookup",
        _task("T020_web_lookup", services=[_service("web_real", None)], tools=[_tool_decl("web_search")]),
    )
    persona = "You are a 32-year-old in Beijing with a mortgage of 1.5 million yuan."
    _write(
        root,
        "C01zh_mortgage",
        _task(
            "C01zh_mortgage",
            category="user_agent",
            tags=["general", "user_agent"],
            prompt={"text": "我在考虑提前还房贷。", "language": "zh"},
            user_agent={"enabled": True, "persona": persona, "max_rounds": 8, "system_prompt_suffix": "Ask first."},
        ),
    )
    _write(root, "T030_broken", "task_id: T030_broken\nprompt: [unclosed\n")
    _write(
        root,
        "T040_teleport",
        _task(
            "T040_teleport",
            services=[_service("todo", "tasks/T040_teleport/fixtures/todo/tasks.json")],
            tools=[_tool_decl("todo_list_tasks"), _tool_decl("todo_teleport")],
        ),
        {"fixtures/todo/tasks.json": TODOS},
    )
    return root


def _entries(out: Path) -> dict[str, dict[str, Any]]:
    report = json.loads((out / REPORT_FILE).read_text(encoding="utf-8"))
    return {e["id"]: e for e in report["tasks"]}


def test_the_report_has_one_entry_per_task_folder_saying_whether_and_why_not(checkout: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = import_claw_eval(checkout, out)
    entries = _entries(out)
    assert sorted(entries) == ["C01zh_mortgage", "T010_todo_cleanup", "T020_web_lookup", "T030_broken", "T040_teleport"]
    assert entries["T010_todo_cleanup"] == {
        "id": "T010_todo_cleanup",
        "imported": True,
        "file": "claw-eval.t010_todo_cleanup.json",
    }
    assert entries["C01zh_mortgage"]["imported"] is True
    assert entries["T020_web_lookup"] == {
        "id": "T020_web_lookup",
        "imported": False,
        "reason": "needs web_real (live web search)",
    }
    assert entries["T030_broken"]["imported"] is False
    assert entries["T030_broken"]["reason"].startswith("malformed task.yaml:")
    assert entries["T030_broken"]["reason"] == (
        "malformed task.yaml: not valid YAML: expected ',' or ']', but got '<stream end>' at line 3, column 1"
    )
    assert entries["T040_teleport"]["reason"] == "needs tool todo_teleport (no profile module serves it)"
    assert report.summary().startswith("imported 2 of 5 tasks; refused: ")
    assert "1 needs web_real (live web search)" in report.summary()


def test_the_task_files_load_with_our_loader_and_keep_the_fixtures_ids(checkout: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    import_claw_eval(checkout, out)
    tasks = {t.id: t for t in load_task_set([out])}
    assert sorted(tasks) == ["claw-eval.c01zh_mortgage", "claw-eval.t010_todo_cleanup"]
    todo = tasks["claw-eval.t010_todo_cleanup"]
    assert todo.services == ["todo"]
    assert [r["id"] for r in todo.initial_records["todo"]["tasks"]] == ["todo_001", "todo_002"]
    assert todo.tool_profile is not None and todo.tool_profile.services == ["todo"]
    assert [t["name"] for t in todo.tool_profile.tools] == ["todo_list_tasks", "todo_update_task"]
    assert todo.tool_profile.tools[0]["input_schema"] == {"type": "object", "properties": {}}
    assert todo.now == "2026-02-23T14:00:00Z"  # the newest fixture date + 1 day (the fake todo has no clock)
    assert todo.safety and todo.difficulty == "easy" and todo.scenario == "Todo Cleanup"
    assert todo.external is not None and todo.external.kind == "claw-eval"
    assert todo.external.source == "T010_todo_cleanup"
    spec = todo.external.spec
    assert spec["grader"] == "grader.py" and spec["checkout"] == str(checkout.resolve())
    assert spec["environment"] == {"timeout_seconds": 300, "max_turns": 20}
    assert spec["safety_checks"] == [{"type": "tool_not_called", "tool_name": "todo_delete_task"}]
    assert spec["scoring_components"][0]["name"] == "done" and spec["reference_solution"].startswith("1. List")


def test_a_conversation_task_without_tools_is_imported_with_the_persona_of_its_user_agent(
    checkout: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    import_claw_eval(checkout, out)
    task = load_task(out / "claw-eval.c01zh_mortgage.json")
    assert task.services == [] and task.tool_profile is None and task.initial_records == {}
    assert task.user is not None and task.user.persona.startswith("You are a 32-year-old in Beijing")
    assert task.request == "我在考虑提前还房贷。" and task.metadata["language"] == "zh"
    assert task.now == format_time(DEFAULT_NOW)
    assert task.external is not None
    assert task.external.spec["user_agent"] == {"max_rounds": 8, "system_prompt_suffix": "Ask first."}
    assert "multi-turn clarification" in task.capabilities


def test_two_claw_services_on_one_of_ours_merge_their_seeds_and_take_the_latest_clock(tmp_path: Path) -> None:
    root = tmp_path / "ce"
    _write(
        root,
        "T050_projects",
        _task(
            "T050_projects",
            services=[
                _service("todo", "tasks/T050_projects/fixtures/todo/tasks.json"),
                _service("projects", None),  # no env: the task's own fixtures/projects/ folder
            ],
            tools=[_tool_decl("todo_list_tasks"), _tool_decl("projects_list")],
        ),
        {"fixtures/todo/tasks.json": TODOS, "fixtures/projects/projects.json": [{"id": "PROJ-9", "name": "Q1"}]},
    )
    import_claw_eval(root, tmp_path / "out")
    task = load_task(tmp_path / "out" / "claw-eval.t050_projects.json")
    assert task.services == ["todo"]
    assert task.tool_profile is not None and task.tool_profile.services == ["todo", "projects"]
    assert task.initial_records["todo"]["projects"] == [{"id": "PROJ-9", "name": "Q1"}]
    assert len(task.initial_records["todo"]["tasks"]) == 2
    assert task.now == "2026-04-01T08:00:00Z"


def test_a_seed_that_refuses_its_fixtures_refuses_the_task_with_its_reason(tmp_path: Path) -> None:
    root = tmp_path / "ce"
    todo = _service("todo", "tasks/T060_bad/fixtures/todo/tasks.json")
    _write(root, "T060_bad", _task("T060_bad", services=[todo]), {"fixtures/todo/tasks.json": {"not": "a list"}})
    _write(root, "T061_missing", _task("T061_missing", services=[_service("todo", "tasks/nowhere.json")]))
    import_claw_eval(root, tmp_path / "out")
    entries = _entries(tmp_path / "out")
    assert entries["T060_bad"]["reason"] == "fixtures of todo: tasks.json: a list of tasks expected"
    assert entries["T061_missing"]["reason"] == "fixture file tasks/nowhere.json of todo is missing"


def test_media_and_sandbox_tasks_are_refused_saying_what_they_need(tmp_path: Path) -> None:
    root = tmp_path / "ce"
    _write(root, "M001_video", _task("M001_video", sandbox_files=["fixtures/clip.mp4"]))
    _write(root, "M002_photo", _task("M002_photo", prompt={"text": "What is this?", "attachments": ["a.jpg"]}))
    _write(root, "T100_decoder", _task("T100_decoder", sandbox_files=["fixtures/decoder.py"]))
    _write(root, "M003_page", _task("M003_page", env_snapshot_commands=["python shot.py"]))
    _write(root, "T070_shell", _task("T070_shell", tools=[_tool_decl("Bash")]))
    _write(root, "T091_blog", _task("T091_blog", prompt={"text": "Humanize it.", "attachments": ["fixtures/blog.txt"]}))
    report = import_claw_eval(root, tmp_path / "out")
    entries = _entries(tmp_path / "out")
    assert entries["M001_video"]["reason"] == "needs media: fixtures/clip.mp4 (video) in the sandbox"
    assert entries["M002_photo"]["reason"] == "needs media: the prompt attaches a.jpg (image)"
    assert entries["T100_decoder"]["reason"].startswith("needs a sandbox")
    assert entries["M003_page"]["reason"].startswith("needs a sandbox")
    assert entries["T070_shell"]["reason"] == "needs Bash (a sandbox shell)"
    assert entries["T091_blog"]["reason"] == (
        "needs a sandbox (the agent works on files in its own container): the prompt attaches fixtures/blog.txt"
    )
    assert "3 needs a sandbox (the agent works on files in its own container)" in report.summary()


def test_importing_again_into_the_same_folder_gives_the_same_files_and_leaves_the_users_files(
    checkout: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    import_claw_eval(checkout, out)
    first = {p.name: p.read_bytes() for p in out.iterdir()}
    import_claw_eval(checkout, out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == first
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary file left


def test_a_task_refused_now_loses_the_file_an_earlier_import_wrote_for_it(checkout: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    import_claw_eval(checkout, out)
    (checkout / "tasks" / "T010_todo_cleanup" / "task.yaml").write_text("task_id: [", encoding="utf-8")
    import_claw_eval(checkout, out)
    assert not (out / "claw-eval.t010_todo_cleanup.json").exists()
    assert (out / "claw-eval.c01zh_mortgage.json").exists()


def test_a_file_of_the_users_under_a_task_files_name_is_never_overwritten(checkout: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "claw-eval.t010_todo_cleanup.json").write_text('{"id": "mine"}', encoding="utf-8")
    import_claw_eval(checkout, out)
    assert (out / "claw-eval.t010_todo_cleanup.json").read_text(encoding="utf-8") == '{"id": "mine"}'
    assert "is not a task file this import wrote" in _entries(out)["T010_todo_cleanup"]["reason"]


def test_a_folder_without_tasks_is_not_a_checkout_and_says_so_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(NotACheckout, match="is not a Claw-Eval checkout: no tasks/ folder"):
        import_claw_eval(tmp_path, tmp_path / "out")
    result = CliRunner().invoke(main, ["import", "claw-eval", str(tmp_path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert [line for line in result.output.splitlines() if line.startswith("Error: ")] == [
        f"Error: {tmp_path} is not a Claw-Eval checkout: no tasks/ folder"
    ]
    assert not (tmp_path / "out").exists()


def test_the_command_prints_the_summary_then_parity_with_a_line_per_task_on_stderr(
    checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[Path, Path]] = []

    def run_parity(checkout: Path, out: Path, *, echo: Callable[[str], None], progress: Callable[[str], None]) -> None:
        calls.append((checkout, out))
        progress("parity 1/1 T010_todo_cleanup: 12/12 agree")
        echo("parity: 100.0 % agreement (12 of 12)")

    monkeypatch.setattr(parity_module, "run_parity", run_parity)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["import", "claw-eval", str(checkout), "--out", str(out), "--parity"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0].startswith("imported 2 of 5 tasks; refused: ")
    assert result.stdout.splitlines()[-1] == "parity: 100.0 % agreement (12 of 12)"
    assert result.stderr.splitlines() == ["parity 1/1 T010_todo_cleanup: 12/12 agree"]
    assert calls == [(checkout, out)]


def test_parity_over_a_folder_with_nothing_imported_is_one_line_saying_what_to_do(tmp_path: Path) -> None:
    root = tmp_path / "ce"
    _write(root, "T020_web_lookup", _task("T020_web_lookup", services=[_service("web_real", None)]))
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["import", "claw-eval", str(root), "--out", str(out), "--parity"])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines()[-1] == (
        f"Error: {out} holds no imported Claw-Eval task; run `coworkenv import claw-eval CHECKOUT --out {out}`"
    )


@pytest.mark.skipif(not os.environ.get("CLAW_EVAL_PATH"), reason="CLAW_EVAL_PATH names no Claw-Eval checkout")
def test_a_real_checkout_imports_at_least_a_third_of_its_tasks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.undo()  # the real profile modules, not the fakes
    report = import_claw_eval(os.environ["CLAW_EVAL_PATH"], tmp_path / "out")
    assert len(report.entries) >= 300
    assert len(report.imported) >= 100, report.summary()
    assert len(load_task_set([tmp_path / "out"])) == len(report.imported)
