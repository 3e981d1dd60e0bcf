"""Claw-Eval's importer and dates: fixtures as the mock loads them by default, and services whose mocks move their
dates to the wall clock moved to sit against the task's one clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from coworkenv.harness.claw_eval.importer import import_claw_eval
from coworkenv.harness.run import load_task_set
from coworkenv.servers import claw_eval
from coworkenv.servers.claw_eval import ClawService, Fixtures
from tests.harness.claw_eval.test_importer import (  # the fake services, installed for each test here too
    FAKES,
    TODOS,
    _service,
    _task,
    _tool,
    _tool_decl,
    _write,
    fake_services,
)

__all__ = ["fake_services"]


def test_services_whose_mocks_move_their_dates_are_moved_to_sit_against_the_tasks_one_clock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def newest(fixtures: Fixtures) -> datetime:
        return max(datetime.fromisoformat(r["date"]) for f in fixtures.values() for r in f) + timedelta(days=1)

    inbox = ClawService(
        "inbox",
        "todo",
        (_tool("inbox_list"),),
        lambda f: {
            "tasks": [{"id": r["id"], "title": r["date"], "created_at": r["date"]} for d in f.values() for r in d]
        },
        lambda s, a: {},
        clock=newest,
        moves=("date",),
    )
    monkeypatch.setitem(FAKES, "inbox", inbox)
    root = tmp_path / "ce"
    services = [_service("inbox", "tasks/T050_mail/fixtures/inbox/mail.json"), _service("projects", "tasks/T050_mail/fixtures/p.json")]  # fmt: skip
    mail = [{"id": "m1", "date": "2026-03-20T09:00:00+08:00"}, {"id": "m2", "date": "2026-03-25T10:30:00Z"}]
    _write(root, "T050_mail", _task("T050_mail", services=services, tools=[_tool_decl("inbox_list"), _tool_decl("projects_list")]),
           {"fixtures/inbox/mail.json": mail, "fixtures/p.json": [{"id": "p1", "name": "P"}]})  # fmt: skip
    import_claw_eval(root, tmp_path / "out")
    (task,) = load_task_set([tmp_path / "out"])
    assert task.now == "2026-04-01T08:00:00Z", "the later clock (projects') is the task's"
    by = datetime(2026, 4, 1, 8, tzinfo=UTC) - datetime(2026, 3, 26, 10, 30, tzinfo=UTC)
    assert task.external is not None and task.external.spec["moved_seconds"] == {"inbox": by.total_seconds()}
    titles = [r["title"] for r in task.initial_records["todo"]["tasks"] if r["id"] in ("m1", "m2")]
    assert titles == ["2026-03-26T06:30:00+08:00", "2026-03-31T08:00:00Z"], "the newest a day before the clock"


def test_moved_fixture_times_keep_how_they_were_written() -> None:
    fixtures = {"a.json": [{"date": "2026-03-01T09:00:00+08:00", "other": "2026-03-01T09:00:00Z", "n": 1}],
                "b.json": {"items": [{"date": "2026-03-01T09:00:00Z"}], "date": "2026-03-01T09:00:00Z"}}  # fmt: skip
    out = claw_eval.moved(fixtures, ("date",), timedelta(days=2, hours=1))
    assert out["a.json"] == [{"date": "2026-03-03T10:00:00+08:00", "other": "2026-03-01T09:00:00Z", "n": 1}]
    assert out["b.json"] == {"items": [{"date": "2026-03-03T10:00:00Z"}], "date": "2026-03-01T09:00:00Z"}
    assert fixtures["a.json"][0]["date"] == "2026-03-01T09:00:00+08:00", "the fixtures read are left as they were"


MOCK_WITH_DEFAULT = """
import os
from pathlib import Path

FIXTURES_PATH = Path(os.environ.get(
    "TODO_FIXTURES",
    str(Path(__file__).resolve().parent.parent.parent / "tasks" / "T010_todo_cleanup" / "fixtures" / "todo" / "tasks.json"),
))
"""


def test_a_service_without_a_fixtures_variable_gets_what_its_mock_loads_by_default(tmp_path: Path) -> None:
    root = tmp_path / "ce"
    tools = [_tool_decl("todo_list_tasks")]
    _write(root, "T010_todo_cleanup", _task("T010_todo_cleanup", services=[_service("todo", None)], tools=tools),
           {"fixtures/todo/tasks.json": TODOS})  # fmt: skip
    english = [{**TODOS[0], "title": "An English title the mock never loads"}]
    _write(root, "T011_todo_cleanup", _task("T011_todo_cleanup", services=[_service("todo", None)], tools=tools),
           {"fixtures/todo/tasks.json": english})  # fmt: skip
    out = tmp_path / "own"
    import_claw_eval(root, out)  # no mock_services in this checkout: each task's own fixtures
    titles = {t.id: [r["title"] for r in t.initial_records["todo"]["tasks"]] for t in load_task_set([out])}
    assert titles["claw-eval.t011_todo_cleanup"] == ["An English title the mock never loads"]
    (root / "mock_services" / "todo").mkdir(parents=True)
    (root / "mock_services" / "todo" / "server.py").write_text(MOCK_WITH_DEFAULT, encoding="utf-8")
    out = tmp_path / "default"
    import_claw_eval(root, out)  # as Claw-Eval runs it: the mock's default file, T010's
    titles = {t.id: [r["title"] for r in t.initial_records["todo"]["tasks"]] for t in load_task_set([out])}
    assert titles["claw-eval.t011_todo_cleanup"] == ["Finish the Q1 report", "Book the dentist"]
