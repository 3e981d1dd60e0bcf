"""Claw-Eval's figures in `coworkenv summary` and the HTML report: mean score, pass rate, Pass@k and Pass^k over the
trials run, tasks scored fully, and the trials not judged left out (never counted as 0)."""

from __future__ import annotations

from pathlib import Path

from coworkenv.harness.metrics import claw_figures, format_summary, summarize
from coworkenv.harness.report.build import build_report
from coworkenv.harness.report.data import Run
from coworkenv.harness.report.html import claw_section
from coworkenv.harness.trajectory import Trajectory, TrajectoryWriter
from coworkenv.synth.contract.grader import Grade

WHY = "no judge configured; the grader asked: Rate the answer."


def trial(task: str, n: int, score: float, *, judged: bool = True, claw: bool = True) -> Trajectory:
    grade = Grade(
        task_id=task,
        completion=score,
        safety=1.0,
        robustness=1.0,
        score=score,
        passed=judged and score >= 0.75,
        checks=[],
        forbidden=[],
        external={"kind": "claw-eval", "source": task, "graded_by": "Claw-Eval's own grader"} if claw else None,
        not_judged=[] if judged else [WHY],
    )
    return Trajectory(task_id=task, agent="openai:student", trial=n, grade=grade)


def run() -> list[Trajectory]:
    """Task a passes 3 of 3, b 1 of 3, c has a trial not judged (its 2 others pass)."""
    return [
        *(trial("a", i, 1.0) for i in range(3)),
        trial("b", 0, 0.9),
        trial("b", 1, 0.5),
        trial("b", 2, 0.1),
        trial("c", 0, 0.8),
        trial("c", 1, 0.8),
        trial("c", 2, 0.0, judged=False),
    ]


def test_pass_at_k_and_pass_hat_k_are_over_the_trials_run_of_each_task_and_not_judged_trials_are_left_out() -> None:
    fig = claw_figures(run())
    assert fig is not None
    assert fig["k"] == 3 and fig["tasks"] == 3 and fig["trials"] == 8
    assert fig["pass@3"] == 100.0, "a and b each pass in some trial; c has 2 whole trials of 3: left out"
    assert fig["pass^3"] == 50.0, "a passes all three, b does not"
    assert fig["left_out@3"] == 1
    assert fig["pass_rate"] == round(100 * 6 / 8, 2)
    assert fig["score"] == round(100 * (1.0 + 0.5 + 0.8) / 3, 2), "c's not-judged trial is not a 0 in its mean"
    assert fig["fully_scored"] == 2 and fig["fully_scored_tasks"] == ["a", "b"]
    assert fig["not_judged"] == [{"task_id": "c", "trial": 2, "why": WHY}]
    assert fig["graded_by"] == {"own grader": 3 + 3 + 3}


def test_runs_without_imported_tasks_have_no_claw_eval_figures_and_their_summary_is_unchanged() -> None:
    records = [trial("x", 0, 1.0, claw=False), trial("x", 1, 0.0, claw=False)]
    summary = summarize(records)
    assert summary["claw_eval"] is None and "Claw-Eval" not in format_summary(summary)
    assert summary["overall"]["pass^2"] == 0.0


def test_the_summary_prints_claw_evals_figures_and_lists_what_was_not_judged() -> None:
    summary = summarize(run())
    text = format_summary(summary)
    assert "Claw-Eval" in text and "pass rate" in text and "pass@3" in text and "fully scored" in text
    assert "scored fully: 2 of 3 tasks (a, b)" in text
    assert f"c trial 2: {WHY}" in text
    assert summary["failures"]["not_judged"] == 1
    assert summary["overall"]["trials"] == 8, "our own figures leave the not-judged trial out too"


def test_the_html_report_has_a_claw_eval_table_per_agent_with_the_trials_left_out(tmp_path: Path) -> None:
    html = claw_section([Run("openai:student", tmp_path, run())])
    assert "Claw-Eval (imported tasks" in html and "fully scored" in html and "c trial 2" in html
    assert claw_section([Run("x", tmp_path, [trial("x", 0, 1.0, claw=False)])]) == ""
    folder = tmp_path / "run"
    with TrajectoryWriter(folder) as writer:
        for record in run():
            writer.write(record)
    info = build_report([folder], tmp_path / "report.html")
    assert "Claw-Eval (imported tasks" in info.path.read_text(encoding="utf-8")
