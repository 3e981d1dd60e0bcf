"""Parity with Claw-Eval's mock services, on a checkout written here in its format: a tiny ``memo`` mock (a FastAPI
app with ``/reset`` and ``/audit``, started as a subprocess the way Claw-Eval's harness starts its mocks) against a
matching profile of ours; and, with ``CLAW_EVAL_PATH`` set, over a few real tasks of a real checkout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any

import pytest
import yaml
from pydantic import Field

from coworkenv.harness.claw_eval.parity import REPORT_FILE, ParityError, run_parity
from coworkenv.servers import claw_eval as claw_profile
from coworkenv.servers.claw_eval import ClawService
from coworkenv.servers.claw_eval.common import ClawHTTPError, ClawJson
from coworkenv.servers.kit import Record, Service, Table, Timestamp, ToolContext, tool
from coworkenv.synth.contract.task import ExternalGrading, Task, ToolProfile
from coworkenv.synth.contract.taskfile import save_task

pytest.importorskip("fastapi", reason="the memo mock is a FastAPI app (fastapi comes with the export extra)")
pytest.importorskip("uvicorn", reason="the memo mock runs on uvicorn")

MOCK = '''"""A Claw-Eval-style mock written for coworkenv's tests: memos in memory, /reset and /audit."""
import json, os
from datetime import datetime, timezone
from fastapi import FastAPI, HTTPException
from pydantic import BaseModel

app = FastAPI()
PATH = os.environ["MEMO_FIXTURES"]
_memos, _calls, _created = [], [], []

def _load():
    global _memos
    with open(PATH) as f:
        _memos = json.load(f)

_load()

def _log(endpoint, req, resp):
    stamp = datetime.now(timezone.utc).isoformat()
    _calls.append({"endpoint": endpoint, "request_body": req.model_dump(), "response_body": resp, "timestamp": stamp})
    return resp

class ListReq(BaseModel):
    status: str = "all"

class IdReq(BaseModel):
    memo_id: str

class CreateReq(BaseModel):
    title: str
    priority: str = "normal"

@app.post("/memo/list")
def list_memos(req: ListReq | None = None):
    req = req or ListReq()
    found = [dict(m) for m in _memos if req.status in ("all", m["status"])]
    return _log("/memo/list", req, {"memos": found, "total": len(found)})

@app.post("/memo/get")
def get_memo(req: IdReq):
    for m in _memos:
        if m["memo_id"] == req.memo_id:
            return _log("/memo/get", req, dict(m))
    return _log("/memo/get", req, {"error": f"Memo {req.memo_id} not found"})

@app.post("/memo/create")
def create_memo(req: CreateReq):
    memo = {"memo_id": f"memo_{len(_memos) + 101}", "title": req.title, "priority": req.priority,
            "status": "open", "created_at": datetime.now(timezone.utc).isoformat()}
    _memos.append(memo)
    _created.append(dict(memo))
    return _log("/memo/create", req, {"status": "created", "memo": dict(memo)})

@app.post("/memo/close")
def close_memo(req: IdReq):
    for m in _memos:
        if m["memo_id"] == req.memo_id:
            m["status"] = "closed"
            return _log("/memo/close", req, {"status": "closed", "memo": dict(m)})
    raise HTTPException(status_code=404, detail=f"Memo {req.memo_id} not found")

@app.get("/memo/audit")
def audit():
    return {"calls": _calls, "created": _created}

@app.post("/memo/reset")
def reset():
    global _calls, _created
    _calls, _created = [], []
    _load()
    return {"status": "reset"}

if __name__ == "__main__":
    import uvicorn
    uvicorn.run(app, host="127.0.0.1", port=int(os.environ["PORT"]), log_level="warning")
'''

FIXTURE = [
    {"memo_id": "memo_001", "title": "Renew the Northwind contract", "priority": "high", "status": "open",
     "created_at": "2026-02-20T10:00:00Z"},
    {"memo_id": "memo_002", "title": "Book the offsite", "priority": "normal", "status": "closed",
     "created_at": "2026-02-21T11:30:00Z"},
    {"memo_id": "memo_003", "title": "Send the Q1 report", "priority": "low", "status": "open",
     "created_at": "2026-02-25T08:15:00Z"},
]  # fmt: skip
TOOLS = [
    {"name": "memo_list", "description": "List memos", "input_schema": {"type": "object", "properties": {
        "status": {"type": "string", "description": "Filter (open/closed/all)", "default": "all"}}, "required": []}},
    {"name": "memo_get", "description": "Get a memo", "input_schema": {"type": "object", "properties": {
        "memo_id": {"type": "string"}}, "required": ["memo_id"]}},
    {"name": "memo_create", "description": "Create a memo", "input_schema": {"type": "object", "properties": {
        "title": {"type": "string"}, "priority": {"type": "string", "description": "Priority (high/normal/low)"}},
        "required": ["title"]}},
    {"name": "memo_close", "description": "Close a memo", "input_schema": {"type": "object", "properties": {
        "memo_id": {"type": "string"}}, "required": ["memo_id"]}},
]  # fmt: skip
DEFAULTS = {"memo_list": {"status": "all"}, "memo_create": {"priority": "normal"}}
ROUTES = {
    "memo_list": "/memo/list",
    "memo_get": "/memo/get",
    "memo_create": "/memo/create",
    "memo_close": "/memo/close",
}


# ------------------------------------------------------------------------------------------ our side: memos
class Memo(Record):
    id: str
    title: str
    priority: str = "normal"
    status: str = "open"
    created_at: Timestamp


def _claw(row: Mapping[str, Any]) -> dict[str, Any]:
    return {"memo_id": row["id"], **{k: row[k] for k in ("title", "priority", "status", "created_at")}}


def memo_service(shout: bool = False) -> tuple[Service, ClawService]:
    """Our memos service and its Claw-Eval profile; ``shout``: memo_get answers the title in capitals (a
    deliberately different answer)."""

    @tool(read_only=True, name="memo_list")
    def memo_list(ctx: ToolContext, status: str = "all") -> ClawJson:
        """List memos."""
        found = [_claw(r) for r in ctx.table("memos").select() if status in ("all", r["status"])]
        return ClawJson.of({"memos": found, "total": len(found)})

    @tool(read_only=True, name="memo_get")
    def memo_get(ctx: ToolContext, memo_id: Annotated[str, Field(description="The memo")]) -> ClawJson:
        """Get one memo."""
        row = ctx.table("memos").get(memo_id)
        if row is None:
            return ClawJson.of({"error": f"Memo {memo_id} not found"})
        memo = _claw(row)
        return ClawJson.of({**memo, "title": memo["title"].upper()} if shout else memo)

    @tool(name="memo_create")
    def memo_create(ctx: ToolContext, title: str, priority: str = "normal") -> ClawJson:
        """Create a memo."""
        row = {"id": ctx.new_id("memos"), "title": title, "priority": priority, "created_at": ctx.now_iso()}
        return ClawJson.of({"status": "created", "memo": _claw(ctx.table("memos").insert(row))})

    @tool(name="memo_close")
    def memo_close(ctx: ToolContext, memo_id: str) -> ClawJson:
        """Close a memo."""
        if ctx.table("memos").get(memo_id) is None:
            raise ClawHTTPError(404, f"Memo {memo_id} not found")
        return ClawJson.of(
            {"status": "closed", "memo": _claw(ctx.table("memos").update(memo_id, {"status": "closed"}))}
        )

    tools = (memo_list, memo_get, memo_create, memo_close)
    ours = Service("memos", "Memos", "Memos.", (Table("memos", Memo, "memo_new_"),), tools)

    def audit_data(tables: Mapping[str, list[dict[str, Any]]], rows: list[Mapping[str, Any]]) -> dict[str, Any]:
        calls = [
            {"endpoint": ROUTES[r["tool"]], "request_body": {**DEFAULTS.get(r["tool"], {}), **r["arguments"]},
             "response_body": r["result"], "timestamp": r["sim_time"]}
            for r in rows
            if r["outcome"] == "ok"
        ]  # fmt: skip
        return {
            "calls": calls,
            "created": [c["response_body"]["memo"] for c in calls if c["endpoint"] == "/memo/create"],
        }

    def seed(fixtures: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
        return {"memos": [{"id": m["memo_id"], **{k: v for k, v in m.items() if k != "memo_id"}} for m in FIXTURE]}

    return ours, ClawService("memo", "memos", tools, seed, audit_data)


# ------------------------------------------------------------------------------------------ the fake checkout
def write_checkout(root: Path, port: int = 9950) -> None:
    (root / "mock_services" / "memo").mkdir(parents=True)
    (root / "mock_services" / "memo" / "server.py").write_text(MOCK)
    task = root / "tasks" / "T900_memo_cleanup"
    (task / "fixtures" / "memo").mkdir(parents=True)
    (task / "fixtures" / "memo" / "memos.json").write_text(json.dumps(FIXTURE))
    base = f"http://localhost:{port}"
    spec = {
        "task_id": "T900_memo_cleanup",
        "services": [{"name": "memo", "command": "python mock_services/memo/server.py", "port": port,
                      "health_check": f"{base}/memo/list", "health_check_method": "POST", "ready_timeout": 10,
                      "reset_endpoint": f"{base}/memo/reset",
                      "env": {"MEMO_FIXTURES": "tasks/T900_memo_cleanup/fixtures/memo/memos.json"}}],
        "tools": TOOLS,
        "tool_endpoints": [{"tool_name": n, "url": base + route, "method": "POST"} for n, route in ROUTES.items()],
    }  # fmt: skip
    (task / "task.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))


def write_task(out: Path, ours: ClawService) -> None:
    out.mkdir(parents=True, exist_ok=True)
    task = Task(
        id="claw-eval.t900_memo_cleanup",
        scenario="memo cleanup",
        services=["memos"],
        now="2026-03-02T09:00:00Z",
        request="Close the memos that are done.",
        initial_records={"memos": ours.seed({})},
        tool_profile=ToolProfile(name="claw-eval", services=["memo"], tools=TOOLS),
        external=ExternalGrading(kind="claw-eval", source="T900_memo_cleanup"),
    )
    save_task(task, out / "claw-eval.t900_memo_cleanup.json")


@pytest.fixture
def memo_parity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Any]]:
    """Runs parity over the fake checkout with our memos (``shout``: the different answer)."""
    real = claw_profile.claw_service

    def play(shout: bool = False, **options: Any) -> Any:
        service, claw = memo_service(shout)
        monkeypatch.setattr(claw_profile, "claw_service", lambda name: claw if name == "memo" else real(name))
        write_checkout(tmp_path / "checkout")
        write_task(tmp_path / "out", claw)
        lines: list[str] = []
        report = run_parity(
            tmp_path / "checkout", tmp_path / "out", echo=lines.append, base=lambda name: service, **options
        )
        return report, lines, json.loads((tmp_path / "out" / REPORT_FILE).read_text())

    yield play


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_profile_that_answers_as_the_mock_does_agrees_on_every_call_and_audit(memo_parity: Any) -> None:
    report, lines, written = memo_parity(sequences=4, seed=7)
    calls, audits, grades = report.totals()
    assert calls.compared >= 4 + 4 * 2 and calls.agreeing == calls.compared
    assert audits.compared == 5 and audits.agreeing == 5
    assert grades.compared == 0 and "grader outputs not compared" in (report.tasks[0].grading or "")
    assert report.percent() == 100.0
    assert (
        lines[-1].startswith("parity: 100.0 % agreement (")
        and f"{calls.compared} of {calls.compared} calls" in lines[-1]
    )
    assert any(line.strip().startswith("memo: 100.0 % of calls") for line in lines)
    assert written["agreement_percent"] == 100.0 and written["tasks"][0]["first_disagreements"] == {}


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_deliberately_different_answer_is_a_disagreement_showing_both_values(memo_parity: Any) -> None:
    report, lines, written = memo_parity(shout=True, sequences=2, seed=1)
    first = written["tasks"][0]["first_disagreements"]["result"]
    assert first["tool"] == "memo_get" and first["path"] == "$.title"
    assert first["mock"] != first["ours"] and first["ours"] == first["mock"].upper()
    assert first["sequence"] == "scripted" and first["arguments"] == {"memo_id": "memo_001"}
    assert report.percent() < 100.0 and "%" in lines[-1]


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_an_interpreter_without_fastapi_is_one_line_saying_what_to_install(tmp_path: Path) -> None:
    bare = tmp_path / "bare-python"
    bare.write_text(f'#!/bin/sh\nexec {sys.executable} -S "$@"\n')
    bare.chmod(0o755)
    with pytest.raises(ParityError) as caught:
        run_parity(tmp_path, tmp_path, claw_python=str(bare))
    message = str(caught.value)
    assert "\n" not in message and "fastapi" in message and "pip install" in message


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.skipif(not os.environ.get("CLAW_EVAL_PATH"), reason="set CLAW_EVAL_PATH to a Claw-Eval checkout")
def test_a_few_real_tasks_agree_with_claw_eval_s_own_mocks(tmp_path: Path) -> None:
    checkout = Path(os.environ["CLAW_EVAL_PATH"])
    done = subprocess.run(
        [sys.executable, "-m", "coworkenv.train.cli", "import", "claw-eval", str(checkout), "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    few = ["T002_email_triage", "T008_todo_management", "T017zh_ticket_triage", "T004_calendar_scheduling"]
    lines: list[str] = []
    report = run_parity(checkout, tmp_path, sequences=2, only=few, echo=lines.append)
    assert {t.source for t in report.tasks} <= set(few) and report.tasks
    assert not [t.problem for t in report.tasks if t.problem]
    calls, _audits, grades = report.totals()
    assert calls.compared > 20 and grades.compared > 0
    assert report.percent() >= 80.0, lines
    assert lines[-1].startswith("parity: ")
