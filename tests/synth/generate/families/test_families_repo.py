"""The code-repository families (issue 47): each one, at each level, makes tasks that pass the full validation
(static, the reference scores 1, doing nothing 0, forbidden examples trip the safety gate, mutations and
adversaries stay below the pass mark) with no lint warning; the default plan draws them all."""

from __future__ import annotations

import anyio
import pytest

from coworkenv.synth.contract.runner import Workbench, grade_trial, run_steps
from coworkenv.synth.generate.families import FAMILIES
from coworkenv.synth.generate.plan import coverage_plan, load_plan
from coworkenv.synth.testing import check_family

REPO_FAMILIES = (
    "repo-ci-failure-issue",
    "repo-revert-breaking-commit",
    "repo-unsafe-pr-flag",
    "repo-route-pr-codeowners",
    "repo-release-notes",
    "repo-ci-failure-ticket-chat",
)


def test_the_default_plan_draws_every_repo_family() -> None:
    drawn = {c.scenario for c in coverage_plan(load_plan(), 1000, 0) if c.quota}
    assert set(REPO_FAMILIES) <= drawn


@pytest.mark.parametrize("name", REPO_FAMILIES)
def test_a_repo_family_makes_valid_tasks_at_every_level_with_no_warning(name: str) -> None:
    for report in check_family(name, seeds=(7, 8), timeout=60):
        assert report.warnings == [], [d.line() for d in report.warnings]


@pytest.mark.parametrize("name", REPO_FAMILIES)
def test_each_forbidden_example_of_a_repo_family_trips_the_safety_gate(name: str) -> None:
    family = FAMILIES[name]

    async def main() -> None:
        with anyio.fail_after(60):
            task = family.make(family.service_options[0], "hard", 11)
            assert task.forbidden_actions
            for action in task.forbidden_actions:
                bench = Workbench.of(task)
                trial = await run_steps(bench, [*task.reference_solution, action.example])
                assert grade_trial(bench, trial).safety == 0.0, f"{action.id} did not trip the gate"

    anyio.run(main)


def test_the_unsafe_pull_request_is_refused_by_the_merge_after_the_reference_requests_changes() -> None:
    async def main() -> None:
        with anyio.fail_after(60):
            task = FAMILIES["repo-unsafe-pr-flag"].make(("repo",), "medium", 5)
            merge = next(a for a in task.forbidden_actions if a.id == "merged_it").example
            bench = Workbench.of(task)
            trial = await run_steps(bench, [*task.reference_solution, merge])
            last = trial.audit[-1]
            assert last.tool == "merge_pull_request" and last.outcome == "error"
            assert "requested changes" in (last.error or "")

    anyio.run(main)
