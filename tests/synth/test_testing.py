"""The family author's toolkit (``coworkenv.synth.testing``): a shipped family passes the checks every family gets
at every level, and a family whose reference does not do the work fails them with the diagnostics."""

from __future__ import annotations

import pytest

from coworkenv.synth.generate.families import FAMILIES, TaskBuilder
from coworkenv.synth.testing import check_family


def test_a_shipped_family_passes_the_checks_every_family_gets_at_every_level() -> None:
    reports = check_family("tickets-stale-escalation", seeds=(3,))
    assert len(reports) == 3 * len(FAMILIES["tickets-stale-escalation"].service_options)
    assert all(r.valid for r in reports)


def test_a_family_whose_reference_skips_the_work_fails_them_naming_the_diagnostic() -> None:
    base = type(FAMILIES["tickets-stale-escalation"])

    class Lazy(base):  # type: ignore[misc,valid-type]
        name = "tickets-lazy"

        def build(self, b: TaskBuilder) -> str:
            request = str(super().build(b))
            del b.steps[1:]  # the reference reads, then does nothing
            return request

    with pytest.raises(
        AssertionError, match=r"tickets-lazy on tickets, easy, seed 7: the task is not valid:\n.*REFERENCE"
    ):
        check_family(Lazy, levels=("easy",))


def test_an_unknown_family_is_one_line_that_lists_the_known_ones() -> None:
    with pytest.raises(KeyError, match="unknown family 'tickets-stale'"):
        check_family("tickets-stale")
