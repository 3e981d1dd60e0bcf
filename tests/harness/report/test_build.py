"""`coworkenv report`: one self-contained HTML page of one or more runs; what it packs and how (no browser here;
tests/harness/report/test_browser.py opens it in Chromium)."""

from __future__ import annotations

import base64
import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from coworkenv.harness.cli import report_cmd
from coworkenv.harness.report.build import build_report
from coworkenv.harness.report.data import INDEX_COLUMNS, load_runs, pack_runs
from coworkenv.harness.trajectory import ToolStepRecord, Trajectory, TrajectoryWriter
from tests.harness.conftest import record

LONG = "escalation of a stale enterprise ticket to the account managers, with a distractor in the queue"


def write_run(folder: Path, agent: str, scores: list[float]) -> Path:
    with TrajectoryWriter(folder) as writer:
        for i, score in enumerate(scores):
            r = record(f"task-{i % 3}", i // 3, score, scenario=LONG if i % 3 == 0 else "refunds")
            r.agent = agent
            writer.write(r)
    return folder


def unpack(blob: str) -> Any:
    return json.loads(gzip.decompress(base64.b64decode(blob)))


def scripts(html: str) -> dict[str, str]:
    return dict(re.findall(r'<script type="application/gzip-base64" id="([\w-]+)">([^<]*)</script>', html))


def test_runs_are_labelled_by_agent_and_the_same_agent_twice_by_folder(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", "replay", [1.0])
    b = write_run(tmp_path / "b", "replay", [0.5])
    c = write_run(tmp_path / "c", "noop", [0.0])
    assert [r.label for r in load_runs([a, b, c])] == ["replay (a)", "replay (b)", "noop"]


def test_a_missing_run_folder_is_an_error_that_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="coworkenv run"):
        load_runs([tmp_path / "nothing"])


def test_the_index_has_a_row_per_trajectory_and_each_chunk_holds_its_trajectories(tmp_path: Path) -> None:
    runs = load_runs([write_run(tmp_path / "a", "replay", [1.0] * 7), write_run(tmp_path / "b", "noop", [0.0] * 7)])
    packed = pack_runs(runs, chunk_size=4)
    index = unpack(packed.index)
    columns = index["columns"]
    assert set(columns) == set(INDEX_COLUMNS) and len(columns["agent"]) == 14
    assert index["agents"] == ["replay", "noop"] and len(packed.chunks) == 4
    chunks = [unpack(c) for c in packed.chunks]
    for row in range(14):
        detail = chunks[columns["chunk"][row]][columns["slot"][row]]
        task = index["tasks"][columns["task"][row]]
        assert detail["task_id"] == task[0] and detail["trial"] == columns["trial"][row]
        assert "checks" in detail["grade"]


def test_the_system_prompt_is_stored_once_and_tool_results_only_in_the_steps(tmp_path: Path) -> None:
    def with_step(trial: int) -> Trajectory:
        r = record("t", trial)
        step = ToolStepRecord(index=0, turn=0, call_id="c0", name="tickets__get_ticket", text='{"id": "tkt"}',
                              outcome="ok", started_s=0.1)  # fmt: skip
        return r.model_copy(update={"steps": [step]})

    with TrajectoryWriter(tmp_path) as writer:
        writer.write(with_step(0))
        writer.write(with_step(1))
    packed = pack_runs(load_runs([tmp_path]))
    index, (chunk,) = unpack(packed.index), [unpack(c) for c in packed.chunks]
    assert len(index["prompts"]) == 1 and all(d["system"] == 0 for d in chunk)
    tools = [m for m in chunk[0]["messages"] if m["role"] == "tool"]
    assert tools and all(m.get("from_step") and "content" not in m for m in tools)


def test_the_page_is_self_contained_and_shows_every_group_and_agent_in_full(tmp_path: Path) -> None:
    runs = [write_run(tmp_path / "a", "replay", [1.0, 0.5, 1.0]), write_run(tmp_path / "b", "noop", [0.0] * 3)]
    info = build_report(runs, tmp_path / "out" / "report.html")
    html = info.path.read_text()
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    assert not re.search(r'(src|href)="(https?:)?//', html)  # nothing is fetched
    assert LONG in html and "replay" in html and "noop" in html
    assert html.count('<div class="plot">') == 4 and "<svg" in html
    blobs = scripts(html)
    assert "index" in blobs and {k for k in blobs if k.startswith("chunk-")}
    assert info.trajectories == 6 and info.tasks == 3 and info.size_bytes == len(html.encode())


def test_the_report_command_writes_the_page_and_says_how_to_open_it(tmp_path: Path) -> None:
    run = write_run(tmp_path / "a", "replay", [1.0])
    out = tmp_path / "r.html"
    result = CliRunner().invoke(report_cmd, [str(run), "--out", str(out), "--title", "Weekly <run>"])
    assert result.exit_code == 0, result.output
    assert out.is_file() and f"file://{out.resolve()}" in result.output
    assert "<title>Weekly &lt;run&gt;</title>" in out.read_text()


def test_a_run_folder_without_trajectories_is_refused(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "trajectories.jsonl").write_text("")
    result = CliRunner().invoke(report_cmd, [str(tmp_path / "empty"), "--out", str(tmp_path / "r.html")])
    assert result.exit_code != 0 and "no trajectories" in result.output
