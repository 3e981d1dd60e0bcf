"""The advantage estimators and the filtering before them, against examples worked out by hand."""

from __future__ import annotations

import math

import pytest

from coworkenv.train.advantages import (
    Step,
    constant_length_loss,
    discounted_returns,
    dr_grpo_advantages,
    filter_groups,
    gdpo_advantages,
    gigpo_advantages,
    grpo_advantages,
    step_advantages,
)


def close(actual: list[list[float]], expected: list[list[float]], tol: float = 1e-4) -> None:
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected, strict=True):
        assert a == pytest.approx(e, abs=tol)


def test_grpo_subtracts_the_group_mean_and_divides_by_the_group_std() -> None:
    # [1,0,0,1]: mean 0.5, std 0.5 -> ±1.  [3,1]: mean 2, std 1 -> ±1.  [5,5,5]: no spread -> 0.
    close(grpo_advantages([[1, 0, 0, 1], [3, 1], [5, 5, 5]]), [[1, -1, -1, 1], [1, -1], [0, 0, 0]])


def test_dr_grpo_subtracts_the_group_mean_without_std_scaling() -> None:
    close(dr_grpo_advantages([[1, 0, 0, 1], [2, 0, 1]]), [[0.5, -0.5, -0.5, 0.5], [1, -1, 0]])


def test_dr_grpo_loss_divides_the_token_sum_by_a_constant_length_not_each_completions_own() -> None:
    # tokens 1+2 and 3 over 2 sequences × max length 4 = 6/8, whatever each sequence's own length
    assert constant_length_loss([[1.0, 2.0], [3.0]], max_length=4) == 0.75
    assert constant_length_loss([[1.0, 2.0], [3.0, 0.0, 0.0]], max_length=4) == 0.75
    with pytest.raises(ValueError):
        constant_length_loss([[1.0]], max_length=0)


def test_gdpo_normalises_each_reward_in_its_group_then_the_weighted_sum_across_the_batch() -> None:
    groups = [
        [{"completion": 1, "safety": 1}, {"completion": 0, "safety": 1}],  # completion ±1, safety 0 -> 2·(±1)
        [{"completion": 1, "safety": 0}, {"completion": 1, "safety": 1}],  # completion 0, safety ∓1 -> ∓1
    ]
    # weighted sums [2, -2] and [-1, 1]; batch mean 0, std sqrt(10/4)
    s = math.sqrt(2.5)
    close(gdpo_advantages(groups, weights={"completion": 2, "safety": 1}), [[2 / s, -2 / s], [-1 / s, 1 / s]])


def test_gdpo_keeps_reward_combinations_apart_that_a_summed_reward_would_merge() -> None:
    group = [{"c": 1.0, "s": 0.0}, {"c": 0.0, "s": 1.0}, {"c": 1.0, "s": 1.0}, {"c": 0.0, "s": 0.0}]
    summed = grpo_advantages([[sum(x.values()) for x in group]])[0]
    gdpo = gdpo_advantages([group])[0]
    assert summed[0] == pytest.approx(summed[1])  # (1,0) and (0,1) merge under a summed reward
    assert gdpo[2] > gdpo[0] and gdpo[3] < gdpo[1]  # under GDPO both-good beats one-good beats none
    assert gdpo == pytest.approx([0, 0, math.sqrt(2), -math.sqrt(2)], abs=1e-4)


def test_discounted_returns_accumulate_later_rewards_with_gamma() -> None:
    assert discounted_returns([0, 0, 1], gamma=0.5) == [0.25, 0.5, 1.0]


GROUP = [
    [Step("A"), Step("B", 1.0)],  # returns 0.5, 1   episode 1
    [Step("A"), Step("C")],  # returns 0, 0            episode 0
    [Step("A"), Step("A"), Step("B", 1.0)],  # returns 0.25, 0.5, 1   episode 1
]


def test_gigpo_step_groups_compare_discounted_returns_of_steps_from_the_same_anchor_state() -> None:
    # anchor A: returns 0.5, 0, 0.25, 0.5 (mean 0.3125); anchor B: 1, 1; anchor C: alone -> 0
    close(step_advantages(GROUP, gamma=0.5), [[0.1875, 0.0], [-0.3125, 0.0], [-0.0625, 0.1875, 0.0]])


def test_gigpo_adds_omega_times_the_step_advantage_to_the_episode_advantage() -> None:
    e = 1 / 3  # episode returns [1, 0, 1], mean 2/3
    expected = [[e + 0.1875, e], [-2 * e - 0.3125, -2 * e], [e - 0.0625, e + 0.1875, e]]
    close(gigpo_advantages(GROUP, gamma=0.5, omega=1.0), expected)
    half = [[e + 0.09375, e], [-2 * e - 0.15625, -2 * e], [e - 0.03125, e + 0.09375, e]]
    close(gigpo_advantages(GROUP, gamma=0.5, omega=0.5), half)


def test_a_gigpo_step_alone_in_its_anchor_group_gets_no_step_advantage() -> None:
    lonely = [[Step("X", 1.0)], [Step("Y")]]
    assert step_advantages(lonely) == [[0.0], [0.0]]
    close(gigpo_advantages(lonely), [[0.5], [-0.5]])  # only the episode advantage remains


def test_a_sample_without_a_reward_is_dropped_and_counted() -> None:
    groups = [[{"status": "ok", "reward": 1.0}, {"status": "ok", "reward": None}, {"status": "ok", "reward": 0.0}]]
    result = filter_groups(groups)
    assert result.dropped == 1 and result.rejected == []
    assert [s["reward"] for s in result.kept[0]] == [1.0, 0.0]


def test_a_group_with_an_incomplete_or_infra_failed_rollout_is_rejected_for_retry_and_counted() -> None:
    ok = {"status": "ok", "reward": 1.0}
    groups = [
        [ok, ok],
        [ok, {"status": "incomplete", "reward": None}],
        [{"status": "infra_error", "reward": None}, ok],
    ]
    result = filter_groups(groups)
    assert result.rejected == [1, 2]
    assert result.kept_index == [0] and len(result.kept) == 1
    assert result.reasons == {"incomplete": 1, "infra_error": 1}
    assert result.dropped == 0  # rejected groups' samples are retried, not dropped


def test_an_unknown_rollout_status_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown rollout status"):
        filter_groups([[{"status": "weird", "reward": 1.0}]])
