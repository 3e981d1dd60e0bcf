"""Teacher-forced copy rates: how well a model writes the values its demonstrations copy into tool calls."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("trl")

from coworkenv.train.copy_accuracy import copied_values, copy_accuracy
from tests.train.fixtures import example


def test_copied_values_are_call_arguments_seen_earlier_in_a_user_or_tool_message_but_not_the_system() -> None:
    messages = example(0)["messages"]
    found = copied_values(messages)
    assert found[2] == {"tkt_0000"}  # from the request
    assert found[4] == {"ch_123"}  # from the first tool result
    assert not any(found[k] for k in (0, 1, 3))
    messages[0] = {**messages[0], "content": "tickets look like tkt_0000"}
    assert copied_values(messages)[2] == set()  # what the system prompt says is format, not a copy


def test_copy_accuracy_scores_each_copied_argument_teacher_forced(tiny_model: Path) -> None:
    records = [example(i) for i in range(3)]
    accuracy = copy_accuracy(tiny_model, records)
    assert set(accuracy) == {"ticket_id", "charge"}  # the amount is a number: not a copied string
    for figures in accuracy.values():
        assert figures["n"] == 3 and 0.0 <= figures["values"] <= figures["tokens"] <= 1.0
