"""Docs that run: the README's two commands are what CI and users run, the main job works, and the door example runs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

from coworkenv.servers.kit import Environment
from coworkenv.train.cli import main

ROOT = Path(__file__).parents[1]


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## The two commands", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", section, flags=re.S)


def test_the_readme_has_exactly_two_setup_commands_and_ci_runs_the_test_one() -> None:
    main_job, tests = readme_commands()
    assert main_job.endswith("coworkenv pipeline --out pipeline-out")
    ci = (ROOT / ".ci/run").read_text()
    assert tests.strip() in ci, "the README's test command must be what .ci/run runs"


def test_the_main_job_seeds_the_workspace_and_drives_it_over_stdio(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    result = CliRunner().invoke(main, ["demo", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "emailed" in result.output and "priya.shah@brightwave.io" in result.output
    config = json.loads((out / ".mcp.json").read_text())
    assert set(config["mcpServers"]) >= {"email", "tickets", "crm"}
    again = CliRunner().invoke(main, ["demo", "--out", str(out)])
    assert again.exit_code != 0 and "already holds databases" in again.output


def test_mcp_config_writes_one_stdio_entry_per_service_and_rejects_unknown_ones(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["mcp-config", "--db-dir", str(tmp_path), "--services", "tickets,crm"])
    entries = json.loads(result.output)["mcpServers"]
    assert list(entries) == ["tickets", "crm"]
    assert entries["crm"]["args"][-4:] == ["serve", "crm", "--db", str((tmp_path / "crm.db").resolve())]
    bad = CliRunner().invoke(main, ["mcp-config", "--db-dir", str(tmp_path), "--services", "tickets,fax"])
    assert bad.exit_code != 0 and "fax" in bad.output


def test_services_lists_every_service_with_its_tools() -> None:
    result = CliRunner().invoke(main, ["services", "--json"])
    rows = {r["service"]: r["tools"] for r in json.loads(result.output)}
    assert "escalate_ticket" in rows["tickets"] and len(rows["email"]) >= 8


@pytest.mark.timeout(600)  # five stages, a student built, scored, trained and scored again: minutes, not seconds
def test_the_main_job_runs_the_whole_pipeline_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("trl")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    out = tmp_path / "pipeline"
    args = ["pipeline", "--out", str(out), "--count", "6", "--trials", "2", "--sft-steps", "2"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "pipeline.json").read_text())
    assert summary["teacher"] == "replay" and summary["demonstrations"] > 0
    assert len(list((out / "tasks").glob("*.json"))) == 7  # six tasks and the synthesis report
    replay = [json.loads(line) for line in (out / "runs/replay/trajectories.jsonl").read_text().splitlines()]
    noop = [json.loads(line) for line in (out / "runs/noop/trajectories.jsonl").read_text().splitlines()]
    assert len(replay) == 12 and all(r["grade"]["score"] == 1.0 for r in replay)
    assert all(r["grade"]["score"] == 0.0 for r in noop)
    learning = summary["learning"]  # a student trained on some tasks, measured on the others
    assert learning["held_out_tasks"] >= 1 and learning["steps"] == 2
    assert learning["loss_before"] > 0 and learning["loss_after"] > 0
    assert learning["before"]["trials"] == learning["after"]["trials"] == learning["held_out_tasks"]
    assert "held-out loss" in result.output and "held-out score" in result.output
    assert (out / "student" / "config.json").exists() and (out / "runs" / "student-after").is_dir()


def test_the_readme_s_door_example_runs_and_both_doors_answer_alike() -> None:
    text = (ROOT / "README.md").read_text()
    (block,) = [b for b in re.findall(r"```python\n(.+?)\n```", text, flags=re.S) if "open_mcp_door" in b]
    body = "\n".join("    " + line for line in block.splitlines())
    scope: dict[str, Any] = {}
    exec(f"async def example(env):\n{body}\n    return done\n", scope)
    seed = json.loads((ROOT / "servers/examples/tickets.json").read_text())

    async def run() -> Any:
        with anyio.fail_after(30), Environment.create({"tickets": seed}) as env:
            return await scope["example"](env)

    done = anyio.run(run)
    assert done.ok and done.data["id"] == "tkt_1002"
