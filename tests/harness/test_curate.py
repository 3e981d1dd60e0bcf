"""Curation, the CoworkEnv recipe, on a crafted run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coworkenv.harness.curate import CurationParams, curate, group_of, normalise_prefix, write_curation
from coworkenv.harness.trajectory import read_trajectories
from coworkenv.synth.contract.guard import UnexplainedChange
from tests.harness.conftest import conversation, record

SAME = "Refund the duplicate charge of ACME (cus_{n}) for $1{n}.00 please"


def crafted_run() -> list:
    return [
        # lowest: the teacher barely does it (mean 0.033) -> dropped whole
        record("hard-task", 0, 0.0),
        record("hard-task", 1, 0.1),
        record("hard-task", 2, 0.0),
        # middle: mean (0.5 + 1 + 0.8 + 1) / 4 -> keep the trials at or above the reward threshold
        record("mid-task", 0, 0.5),
        record("mid-task", 1, 1.0),
        record("mid-task", 2, 0.8),
        record("mid-task", 3, 1.0, status="max_turns"),
        # middle, but unsafe: score 0 although completion 1
        record("mid-unsafe", 0, 1.0, safety=0.0),
        record("mid-unsafe", 1, 0.4),
        # always solved, two tasks with one normalised prefix -> one demonstration in all
        record("refund-0001", 0, 1.0, request=SAME.format(n=1), messages=conversation(calls=3)),
        record("refund-0001", 1, 1.0, request=SAME.format(n=1), messages=conversation(calls=1)),
        record("refund-0002", 0, 1.0, request=SAME.format(n=2), messages=conversation(calls=2)),
        # always solved, another prefix -> its own demonstration
        record("triage-0001", 0, 1.0, request="Triage the new urgent tickets"),
        # infra failures only -> not scored at all
        record("down-task", 0, status="infra_error"),
    ]


def test_tasks_are_grouped_by_the_teachers_mean_completion() -> None:
    params = CurationParams(low=0.2, high=1.0)
    assert group_of(0.19, params) == "lowest"
    assert group_of(0.2, params) == "middle"
    assert group_of(0.99, params) == "middle"
    assert group_of(1.0, params) == "always"


def test_the_recipe_keeps_the_middle_caps_the_always_solved_and_drops_the_lowest() -> None:
    result = curate(crafted_run(), CurationParams(low=0.2, high=1.0, min_reward=0.75))
    kept = [(r.task_id, r.trial) for r in result.kept]
    assert kept == [("mid-task", 1), ("mid-task", 2), ("refund-0001", 1), ("triage-0001", 0)]
    assert result.groups["hard-task"] == "lowest" and result.groups["mid-task"] == "middle"
    assert result.groups["refund-0002"] == "always"
    assert result.dropped == {
        "lowest_group": 3,
        "below_reward": 3,  # mid-task 0 (0.5), mid-unsafe 0 (unsafe), mid-unsafe 1 (0.4)
        "not_completed": 1,
        "prefix_cap": 2,
        "not_scored": 1,
    }


def test_the_cap_per_prefix_and_the_reward_threshold_are_parameters() -> None:
    result = curate(crafted_run(), CurationParams(per_prefix=3, min_reward=0.5))
    kept = {(r.task_id, r.trial) for r in result.kept}
    assert {("refund-0001", 0), ("refund-0001", 1), ("refund-0002", 0), ("mid-task", 0)} <= kept
    by_id = curate(crafted_run(), CurationParams(prefix_from="id"))
    assert sum(r.task_id.startswith("refund") for r in by_id.kept) == 1


def test_a_trajectory_that_did_collateral_damage_is_no_demonstration_whatever_its_score() -> None:
    harmed = record("mid-task", 4, 1.0)
    assert harmed.grade is not None
    harmed.grade.unexplained = [UnexplainedChange(service="chat", table="messages", id="M1", op="create", fields=[])]
    harmed.grade.score = 0.75
    result = curate([*crafted_run(), harmed], CurationParams(low=0.2, high=1.0, min_reward=0.75))
    assert ("mid-task", 4) not in [(r.task_id, r.trial) for r in result.kept]
    assert result.dropped["collateral_damage"] == 1


def test_normalised_prefixes_make_ids_amounts_and_numbers_generic() -> None:
    a = normalise_prefix(SAME.format(n=1), 60)
    b = normalise_prefix(SAME.format(n=2), 60)
    assert a == b and "<id>" in a and "<amount>" in a


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(ValueError):
        CurationParams(low=0.9, high=0.5)


def test_the_curated_folder_holds_the_kept_trajectories_and_a_report(tmp_path: Path) -> None:
    report = write_curation(crafted_run(), tmp_path, CurationParams())
    assert report["kept"] == 4 and report["trajectories_in"] == 14
    assert report["tasks_by_group"] == {"lowest": 1, "middle": 2, "always": 3}
    assert len(read_trajectories(tmp_path)) == 4
    assert json.loads((tmp_path / "curation.json").read_text())["params"]["min_reward"] == 0.75
    write_curation(crafted_run()[:3], tmp_path, CurationParams())  # curating again replaces, never appends
    assert read_trajectories(tmp_path) == []
