"""Pass@k and Pass^k (unbiased, n > k too), the summary's groups, failure kinds and the robustness figure."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from click.testing import CliRunner

from coworkenv.harness.cli import summary_cmd
from coworkenv.harness.metrics import format_summary, pass_at_k, pass_hat_k, print_summary, summarize
from coworkenv.harness.trajectory import TrajectoryWriter
from tests.harness.conftest import record


def test_pass_at_k_and_pass_hat_k_are_any_and_all_when_n_equals_k() -> None:
    assert pass_at_k(3, 0, 3) == 0.0 and pass_hat_k(3, 0, 3) == 0.0
    assert pass_at_k(3, 1, 3) == 1.0 and pass_hat_k(3, 1, 3) == 0.0
    assert pass_at_k(3, 3, 3) == 1.0 and pass_hat_k(3, 3, 3) == 1.0


def test_with_more_trials_than_k_the_unbiased_forms_are_used() -> None:
    # n=5, c=2, k=2: Pass@2 = 1 - C(3,2)/C(5,2) = 0.7; Pass^2 = C(2,2)/C(5,2) = 0.1
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)
    assert pass_hat_k(5, 2, 2) == pytest.approx(0.1)
    # k=1 is the pass rate either way
    assert pass_at_k(4, 3, 1) == pass_hat_k(4, 3, 1) == pytest.approx(0.75)
    # fewer passing trials than k: Pass^k is 0; more failing than n-k: Pass@k is 1
    assert pass_hat_k(6, 2, 3) == 0.0 and pass_at_k(6, 4, 3) == 1.0


def test_k_larger_than_n_is_an_error() -> None:
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_the_summary_averages_tasks_and_groups_by_scenario_difficulty_and_safety() -> None:
    records = [
        # task a: scores 1, 1, 0.5 (2 of 3 pass)
        record("a", 0, 1.0, scenario="refunds", difficulty="easy"),
        record("a", 1, 1.0, scenario="refunds", difficulty="easy"),
        record("a", 2, 0.5, scenario="refunds", difficulty="easy"),
        # task b (safety): one unsafe trial, one pass, one infra failure (not scored)
        record("b", 0, 1.0, safety=0.0, scenario="fraud", difficulty="hard", safety_task=True),
        record("b", 1, 1.0, scenario="fraud", difficulty="hard", safety_task=True),
        record("b", 2, status="infra_error", scenario="fraud", difficulty="hard", safety_task=True),
    ]
    s = summarize(records)
    assert s["ks"] == [1, 3]
    overall = s["overall"]
    # mean over tasks: a = 2.5/3, b = 0.5
    assert overall["score"] == pytest.approx(100 * (2.5 / 3 + 0.5) / 2, abs=0.01)
    assert overall["pass@1"] == pytest.approx(100 * (2 / 3 + 1 / 2) / 2, abs=0.01)
    # only task a has 3 scored trials
    assert overall["pass@3"] == 100.0 and overall["pass^3"] == 0.0 and overall["left_out@3"] == 1
    assert set(s["by"]["scenario"]) == {"refunds", "fraud"}
    assert s["by"]["safety"]["safety"]["safety"] == 50.0
    assert s["by"]["difficulty"]["hard"]["trials"] == 2
    assert s["statuses"]["infra_error"] == 1
    assert s["failures"] == {"below_threshold": 1, "infra_error": 1, "unsafe": 1}
    text = format_summary(s)
    assert "pass^3" in text and "unsafe 1" in text


def test_robustness_is_reported_only_when_errors_were_injected() -> None:
    clean = [record("a", 0)]
    assert summarize(clean)["robustness"] is None
    retried = record("a", 0)
    retried.faults_injected, retried.attempts = 2, 3
    failed = record("b", 0, status="infra_error")
    failed.faults_injected, failed.attempts = 4, 4
    rb = summarize([retried, failed])["robustness"]
    assert rb == {"faults_injected": 6, "trials": 2, "scored_share": 50.0, "mean_attempts": 3.5, "retried_trials": 2}
    assert "robustness" in format_summary(summarize([retried, failed]))


LONG = "escalation of a stale enterprise ticket to the account managers, with a distractor"


def test_the_summary_names_every_group_in_full() -> None:
    text = format_summary(summarize([record("a", 0, scenario=LONG), record("b", 0, 0.5, scenario="refunds")]))
    assert LONG in text and "  refunds" in text


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_summary_is_plain_text_off_a_terminal_and_a_styled_table_on_one() -> None:
    summary = summarize([record("a", 0, scenario=LONG)])
    plain, styled = io.StringIO(), Terminal()
    print_summary(summary, plain)
    print_summary(summary, styled)
    assert "\x1b[" not in plain.getvalue() and LONG in plain.getvalue()
    assert "\x1b[" in styled.getvalue()


def test_the_summary_command_prints_full_scenario_names(tmp_path: Path) -> None:
    with TrajectoryWriter(tmp_path) as writer:
        writer.write(record("a", 0, scenario=LONG))
    result = CliRunner().invoke(summary_cmd, [str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert LONG in result.output and "\x1b[" not in result.output
