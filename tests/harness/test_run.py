"""Runs: concurrency, durable appends, resuming after a crash, retrying infrastructure failures, the CLI."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import click
import pytest
from click.testing import CliRunner

from coworkenv.harness.agents.base import EpisodeIO
from coworkenv.harness.agents.builtin import ReplayAgent
from coworkenv.harness.cli import COMMANDS
from coworkenv.harness.faults import FaultInjector
from coworkenv.harness.run import RunError, RunOptions, load_task_set, run_tasks
from coworkenv.harness.trajectory import FILENAME, read_lines, read_trajectories
from coworkenv.servers.kit import Environment
from coworkenv.synth.contract.library import examples_dir, load_examples
from coworkenv.synth.providers import ProviderConfigError
from tests.harness.conftest import FlakyAgent

TASKS = load_examples()


def opts(**changes: Any) -> RunOptions:
    """Run options for tests: no progress bar, no backoff waits."""
    return RunOptions(**{"progress": False, "backoff_s": 0.0, **changes})


def keys(out: Path) -> Counter[tuple[str, int]]:
    records, _ = read_lines(out / FILENAME)
    return Counter(r.key for r in records)


@pytest.mark.anyio
async def test_a_run_writes_every_task_and_trial_once(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        report = await run_tasks(TASKS, ReplayAgent(), tmp_path, options=opts(trials=2, concurrency=8))
    counts = keys(tmp_path)
    assert len(counts) == 2 * len(TASKS) and set(counts.values()) == {1}
    assert report.finished == 2 * len(TASKS) and report.statuses == {"completed": 2 * len(TASKS)}
    assert all(r.score == 1.0 for r in read_trajectories(tmp_path))
    assert json.loads((tmp_path / "run.json").read_text())["agent"] == "replay"


@pytest.mark.anyio
async def test_a_run_seeds_each_task_once_for_its_episodes_and_their_grades(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seeded: list[str] = []
    create = Environment.create.__func__  # type: ignore[attr-defined]

    def counting(cls: type[Environment], seeds: Any, *args: Any, **kwargs: Any) -> Environment:
        seeded.append(str(kwargs.get("now")))
        return create(cls, seeds, *args, **kwargs)

    monkeypatch.setattr(Environment, "create", classmethod(counting))
    tasks = [t for t in TASKS if t.expected_changes is None]  # the baseline derives them: still one seeding
    assert tasks
    with anyio.fail_after(60):
        report = await run_tasks(tasks, ReplayAgent(), tmp_path, options=opts(trials=3, concurrency=4))
    assert report.statuses == {"completed": 3 * len(tasks)}
    assert all(r.score == 1.0 for r in read_trajectories(tmp_path))
    assert len(seeded) == len(tasks)  # not once per episode, nor again for the grade


@pytest.mark.anyio
async def test_a_run_cancelled_halfway_and_started_again_finishes_each_pair_exactly_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    class CrashingReplay(ReplayAgent):
        """Replays, but the whole run is cancelled (like a kill) when the 7th episode starts."""

        def __init__(self, scope: anyio.CancelScope) -> None:
            self.scope = scope
            self.started = 0

        async def run_episode(self, io: EpisodeIO) -> None:
            self.started += 1
            if self.started == 7:
                self.scope.cancel()
                await anyio.Event().wait()
            await super().run_episode(io)

    options = opts(trials=3, concurrency=2)
    with anyio.fail_after(60):
        with anyio.CancelScope() as scope:
            await run_tasks(TASKS, CrashingReplay(scope), tmp_path, agent_spec="replay", options=options)
    partial = keys(tmp_path)
    assert 0 < len(partial) < 3 * len(TASKS)
    # a crash mid-write leaves a torn last line; the resumed run drops it and says so
    with (tmp_path / FILENAME).open("a") as f:
        f.write('{"format": "coworkenv.trajectory/1", "task_id": "tick')
    with anyio.fail_after(60):
        report = await run_tasks(TASKS, ReplayAgent(), tmp_path, agent_spec="replay", options=options)
    counts = keys(tmp_path)
    assert len(counts) == 3 * len(TASKS) and set(counts.values()) == {1}
    assert report.skipped == len(partial)
    assert (tmp_path / FILENAME).read_text().endswith("}\n")
    warned = capsys.readouterr().err
    assert "warning: " in warned and f"dropped a torn last line (line {len(partial) + 1}, 53 bytes)" in warned


@pytest.mark.anyio
async def test_more_trials_later_only_adds_the_new_trials(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        await run_tasks(TASKS[:2], ReplayAgent(), tmp_path, options=opts(trials=1))
        report = await run_tasks(TASKS[:2], ReplayAgent(), tmp_path, options=opts(trials=3))
    assert report.finished == 4 and report.skipped == 2
    assert sorted(keys(tmp_path)) == sorted((t.id, k) for t in TASKS[:2] for k in range(3))


@pytest.mark.anyio
async def test_infrastructure_failures_are_retried_and_the_attempts_are_recorded(tmp_path: Path) -> None:
    agent = FlakyAgent(failures=2)
    with anyio.fail_after(60):
        await run_tasks(TASKS[:3], agent, tmp_path, options=opts(retries=3))
    records = read_trajectories(tmp_path)
    assert [r.status for r in records] == ["completed"] * 3
    assert all(r.attempts == 3 and len(r.attempt_errors) == 2 for r in records)
    assert "503" in records[0].attempt_errors[0]


@pytest.mark.anyio
async def test_failures_that_outlast_the_retries_are_marked_infra_error_and_kept_out_of_scores(
    tmp_path: Path,
) -> None:
    from coworkenv.harness.metrics import summarize

    with anyio.fail_after(60):
        await run_tasks(TASKS[:2], FlakyAgent(failures=99), tmp_path, options=opts(retries=2))
    records = read_trajectories(tmp_path)
    assert [(r.status, r.attempts, r.grade) for r in records] == [("infra_error", 3, None)] * 2
    summary = summarize(records)
    assert summary["overall"]["trials"] == 0 and summary["failures"] == {"infra_error": 2}
    # --retry-infra redoes them on resume; the newer record is the one read
    with anyio.fail_after(60):
        await run_tasks(TASKS[:2], FlakyAgent(failures=0), tmp_path, options=opts(retry_infra=True))
    assert [r.status for r in read_trajectories(tmp_path)] == ["completed"] * 2


@pytest.mark.anyio
async def test_a_failure_that_retrying_cannot_fix_stops_the_run_with_its_message(tmp_path: Path) -> None:
    agent = FlakyAgent(failures=99, error=ProviderConfigError)
    with anyio.fail_after(60), pytest.raises(RunError, match="run the same command again"):
        await run_tasks(TASKS, agent, tmp_path, options=opts(concurrency=2))
    assert keys(tmp_path) == Counter()


@pytest.mark.anyio
async def test_injected_errors_are_retried_and_counted(tmp_path: Path) -> None:
    faults = FaultInjector(rate=0.1, seed=7)
    with anyio.fail_after(60):
        await run_tasks(TASKS, ReplayAgent(), tmp_path, options=opts(retries=20), faults=faults)
    records = read_trajectories(tmp_path)
    assert sum(r.faults_injected for r in records) == faults.injected > 0
    assert all(r.status == "completed" and r.score == 1.0 for r in records)
    assert any(r.attempts > 1 for r in records)


@pytest.mark.anyio
async def test_a_folder_of_another_agent_is_refused(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        await run_tasks(TASKS[:1], ReplayAgent(), tmp_path, options=opts())
        with pytest.raises(RunError, match="another --out"):
            await run_tasks(TASKS[:1], ReplayAgent(), tmp_path, agent_spec="noop", options=opts())


def test_task_sets_must_have_unique_ids(tmp_path: Path) -> None:
    source = next(examples_dir().glob("*.json"))
    for name in ("a.json", "b.json"):
        (tmp_path / name).write_text(source.read_text())
    with pytest.raises(RunError, match="repeated"):
        load_task_set([tmp_path])


def cli() -> click.Group:
    group = click.Group("coworkenv")
    for command in COMMANDS:
        group.add_command(command)
    return group


def test_the_offline_pipeline_runs_from_the_command_line(tmp_path: Path) -> None:
    runner = CliRunner()
    run_dir, curated, out = tmp_path / "run", tmp_path / "curated", tmp_path / "sft.jsonl"
    result = runner.invoke(cli(), ["run", "--tasks", "examples", "--agent", "replay", "--trials", "2",
                                   "--concurrency", "4", "--out", str(run_dir), "--no-progress"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert f"{2 * len(TASKS)} trajectories" in result.output
    again = runner.invoke(cli(), ["run", "--tasks", "examples", "--agent", "replay", "--trials", "2",
                                  "--out", str(run_dir), "--no-progress"])  # fmt: skip
    assert again.exit_code == 0 and f"{2 * len(TASKS)} already done" in again.output
    assert json.loads((run_dir / "run.json").read_text())["task_sources"] == [str(examples_dir().resolve())]
    summary = runner.invoke(cli(), ["summary", str(run_dir), "--json"])
    assert summary.exit_code == 0, summary.output
    figures = json.loads(summary.output)["overall"]
    assert figures["score"] == 100.0 and figures["pass^2"] == 100.0
    assert runner.invoke(cli(), ["summary", str(run_dir)]).exit_code == 0
    curate = runner.invoke(cli(), ["curate", str(run_dir), "--out", str(curated)])
    assert curate.exit_code == 0, curate.output
    export = runner.invoke(cli(), ["export", str(curated), "--out", str(out), "--tasks", str(examples_dir())])
    assert export.exit_code == 0, export.output
    assert len(out.read_text().splitlines()) == len(read_trajectories(curated))


def test_a_bad_agent_spec_is_a_clear_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli(), ["run", "--tasks", "examples", "--agent", "gpt", "--out", str(tmp_path)])
    assert result.exit_code != 0 and "unknown agent 'gpt'" in result.output


def test_a_file_without_a_whole_trajectory_is_an_error_not_an_empty_summary_curation_or_export(tmp_path: Path) -> None:
    torn = tmp_path / "results.json"
    torn.write_text("{bad")
    for args in (["summary"], ["curate", "--out", str(tmp_path / "c")], ["export", "--out", str(tmp_path / "e.jsonl")]):
        result = CliRunner().invoke(cli(), [args[0], str(torn), *args[1:]])
        assert result.exit_code == 1, result.output
        assert "no trajectories in" in result.output and "Traceback" not in result.output
    assert torn.read_text() == "{bad"  # nothing lost, nothing written
    assert not (tmp_path / "c").exists() and not (tmp_path / "e.jsonl").exists()
