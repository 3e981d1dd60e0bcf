"""`coworkenv export --format inspect`: Inspect AI eval logs, checked with Inspect AI's own reader
(`inspect_ai.log.read_eval_log`, `list_eval_logs`), with scores and per-check metadata."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner

from coworkenv.harness.agents.builtin import NoopAgent, ReplayAgent
from coworkenv.harness.cli import export_cmd
from coworkenv.harness.export.inspect_log import model_name
from coworkenv.harness.run import RunOptions, load_task_set, run_tasks
from coworkenv.synth.contract.library import examples_dir

log = pytest.importorskip("inspect_ai.log", reason="Inspect AI is not installed: pip install 'coworkenv[export]'")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, int]:
    folder = tmp_path_factory.mktemp("runs")
    tasks = load_task_set([examples_dir()])

    async def both() -> None:
        with anyio.fail_after(120):
            options = RunOptions(trials=2, progress=False)
            await run_tasks(tasks, ReplayAgent(), folder / "replay", agent_spec="replay", options=options)
            await run_tasks(tasks, NoopAgent(), folder / "noop", agent_spec="noop", options=RunOptions(progress=False))

    anyio.run(both)
    return folder / "replay", folder / "noop", len(tasks)


def export(tmp_path: Path, *sources: Path) -> list[Path]:
    out = tmp_path / "logs"
    result = CliRunner().invoke(export_cmd, ["--format", "inspect", *map(str, sources), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert f"inspect view --log-dir {out}" in result.output
    return sorted(out.glob("*.eval"))


def test_each_run_becomes_an_eval_log_that_inspect_lists_and_reads(
    runs: tuple[Path, Path, int], tmp_path: Path
) -> None:
    replay, noop, n_tasks = runs
    paths = export(tmp_path, replay, noop)
    assert len(paths) == 2 and len(log.list_eval_logs(str(tmp_path / "logs"))) == 2
    first = log.read_eval_log(str(paths[0]))
    assert first.status == "success" and first.eval.model == "coworkenv/replay"
    assert first.samples is not None and len(first.samples) == 2 * n_tasks
    assert {s.epoch for s in first.samples} == {1, 2}
    metrics = first.results.scores[0].metrics
    assert metrics["mean"].value == 1.0 and metrics["pass_rate"].value == 1.0
    header = log.read_eval_log(str(paths[1]), header_only=True)
    assert header.eval.model == "coworkenv/noop" and header.results.scores[0].metrics["pass_rate"].value == 0.0


def test_a_sample_carries_the_score_every_check_and_the_conversation(
    runs: tuple[Path, Path, int], tmp_path: Path
) -> None:
    replay, noop, _ = runs
    paths = export(tmp_path, replay, noop)
    passed = log.read_eval_log(str(paths[0])).samples[0]
    score = passed.scores["coworkenv"]
    assert score.value == 1.0 and score.metadata["passed"] is True and score.metadata["safety"] == 1.0
    checks = score.metadata["checks"]
    assert checks and all({"id", "description", "weight", "passed", "expected", "found"} <= set(c) for c in checks)
    assert [m.role for m in passed.messages][:2] == ["system", "user"] and passed.input
    calls = [c for m in passed.messages if m.role == "assistant" for c in (m.tool_calls or [])]
    assert calls and all("__" in c.function for c in calls)
    assert any(m.role == "tool" for m in passed.messages)
    assert passed.metadata["scenario"] and passed.metadata["status"] == "completed"
    failed = log.read_eval_log(str(paths[1])).samples[0]
    assert failed.scores["coworkenv"].value == 0.0
    assert not all(c["passed"] for c in failed.scores["coworkenv"].metadata["checks"])


def test_model_agents_are_named_the_way_inspect_names_models() -> None:
    assert model_name("anthropic:claude-sonnet-4-5") == "anthropic/claude-sonnet-4-5"
    assert model_name("openai:qwen3@http://127.0.0.1:8000/v1") == "openai/qwen3"
    assert model_name("claude-code") == "coworkenv/claude-code"


def test_inspect_export_into_a_file_is_refused(runs: tuple[Path, Path, int], tmp_path: Path) -> None:
    file = tmp_path / "x.jsonl"
    file.write_text("")
    result = CliRunner().invoke(export_cmd, ["--format", "inspect", str(runs[0]), "--out", str(file)])
    assert result.exit_code != 0 and "folder" in result.output


def test_an_agent_label_of_100_four_byte_characters_becomes_a_file_name_within_255_bytes(tmp_path: Path) -> None:
    task = load_task_set([examples_dir()])[:1]
    label = "\U00020000" * 100  # a CJK letter, four bytes in UTF-8

    async def one() -> None:
        with anyio.fail_after(60):
            await run_tasks(task, NoopAgent(), tmp_path / "run", agent_spec=label, options=RunOptions(progress=False))

    anyio.run(one)
    (path,) = export(tmp_path, tmp_path / "run")
    assert len(path.name.encode()) <= 255 and path.name.startswith("00-\U00020000")
    assert log.read_eval_log(str(path)).eval.metadata["agent"] == label
