"""export: demonstrations that end on a tool result are dropped and counted; --tools task|used|none."""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from coworkenv.harness.agents.registry import make_agent
from coworkenv.harness.episode import run_episode
from coworkenv.harness.export.chat import ExportParams, export_records, to_record
from coworkenv.synth.contract.taskfile import load_task

EXAMPLES = Path(__file__).parents[3] / "synth" / "examples"


def replayed(name: str):  # type: ignore[no-untyped-def]
    async def go():  # type: ignore[no-untyped-def]
        with anyio.fail_after(30):
            return await run_episode(load_task(EXAMPLES / name), make_agent("replay"))

    return anyio.run(go)


def test_a_demonstration_without_a_closing_reply_is_dropped_as_ends_on_tool() -> None:
    records = [replayed(p.name) for p in sorted(EXAMPLES.glob("*.json"))]
    rows, dropped = export_records(records, ExportParams(min_assistant_turns=1))
    ends_on_tool = [r for r in records if r.messages[-1].role == "tool"]
    assert dropped["ends_on_tool"] == len(ends_on_tool)
    assert all(row["messages"][-1]["role"] == "assistant" for row in rows)


def test_tools_task_writes_every_tool_of_the_services_used_only_the_called_ones_and_none_no_column() -> None:
    record = replayed("tickets-triage-new-urgent.json")
    messages = [{"role": "user", "content": "x"}] + [
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": s.name}}]} for s in record.steps
    ]
    every = {t["function"]["name"] for t in json.loads(to_record(record, messages, "task")["tools"])}
    used = {t["function"]["name"] for t in json.loads(to_record(record, messages, "used")["tools"])}
    assert used == {s.name for s in record.steps} and used < every
    assert "tools" not in to_record(record, messages, "none") and "tools" not in to_record(record, messages, False)


def test_with_the_task_known_a_demonstration_ending_on_a_tool_gets_its_closing_reply_and_is_counted() -> None:
    from coworkenv.harness.export.chat import closing_reply

    names = [p.name for p in sorted(EXAMPLES.glob("*.json"))]
    records = [replayed(n) for n in names]
    tasks = {t.id: t for t in (load_task(EXAMPLES / n) for n in names)}
    ends_on_tool = [r for r in records if r.messages[-1].role == "tool"]
    assert ends_on_tool  # the examples include some
    rows, dropped = export_records(records, ExportParams(min_assistant_turns=1), tasks)
    assert dropped["ends_on_tool"] == 0 and dropped["closed"] == len(ends_on_tool)
    closed = {r.task_id for r in ends_on_tool}
    for row in rows:
        if row["task_id"] in closed:
            assert row["messages"][-1] == {"role": "assistant", "content": closing_reply(tasks[row["task_id"]])}


def test_the_export_command_takes_the_template_and_task_files_and_reports_token_lengths(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from coworkenv.harness.cli import export_cmd
    from coworkenv.harness.trajectory import TrajectoryWriter

    writer = TrajectoryWriter(tmp_path / "run")
    for name in ("tickets-triage-new-urgent.json", "tickets-pending-acme-question.json"):
        writer.write(replayed(name))
    writer.close()
    out = tmp_path / "demos.jsonl"
    args = [str(tmp_path / "run"), "--out", str(out), "--template", "compact", "--max-length", "500"]
    result = CliRunner().invoke(export_cmd, [*args, "--tasks", str(EXAMPLES)])
    assert result.exit_code == 0, result.output
    assert "2 of 2 trajectories written" in result.output and "closing reply" in result.output
    assert "lengths: p50" in result.output and "2 over --max-length 500" in result.output
    report = json.loads((tmp_path / "demos.jsonl.report.json").read_text())
    assert report["lengths"]["over"] == 2 and report["params"]["template"] == "compact"
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert all("tools" not in r and "# Tools" in r["messages"][0]["content"] for r in rows)


def test_tool_names_list_only_those_tools_in_the_export_and_in_the_hf_agents_spec(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from coworkenv.harness.agents.hf_agent import HFAgent
    from coworkenv.harness.cli import export_cmd
    from coworkenv.harness.trajectory import TrajectoryWriter

    writer = TrajectoryWriter(tmp_path / "run")
    writer.write(replayed("tickets-triage-new-urgent.json"))
    writer.close()
    out, names = tmp_path / "demos.jsonl", "tickets__update_ticket,tickets__search_tickets,tickets__nothing"
    args = [str(tmp_path / "run"), "--out", str(out), "--template", "compact", "--tool-names", names]
    result = CliRunner().invoke(export_cmd, [*args, "--tasks", str(EXAMPLES)])
    assert result.exit_code == 0, result.output
    system = json.loads(out.read_text().splitlines()[0])["messages"][0]["content"]
    listed = [line.split("(")[0] for line in system.splitlines() if line.startswith("- tickets__")]
    assert listed == ["- tickets__search_tickets", "- tickets__update_ticket"]  # the task's order; unknown ignored
    full = to_record(replayed("tickets-triage-new-urgent.json"), [{"role": "user", "content": "x"}], "task", "full")
    only = to_record(replayed("tickets-triage-new-urgent.json"), [{"role": "user", "content": "x"}], "task", "full",
                     ("tickets__get_ticket",))  # fmt: skip
    assert len(json.loads(full["tools"])) > 1 and [t["function"]["name"] for t in json.loads(only["tools"])] == [
        "tickets__get_ticket"
    ]
    agent = make_agent(f"hf:/models/student?template=compact&tools={names}")
    assert isinstance(agent, HFAgent) and agent.tool_names == tuple(names.split(","))
    assert agent.name.endswith(f"?template=compact&tools={names}")
    assert make_agent("hf:/models/student").tool_names is None  # type: ignore[union-attr]
