"""The bookmarks family passes the checks every coworkenv family gets (``coworkenv.synth.testing``): at each level
its tasks validate (static, reference 1.0, doing nothing 0, the forbidden example trips safety, adversaries below
the pass mark). The packages must be installed (``pip install ./plugins/bookmarks ./...-families``)."""

from __future__ import annotations

import pytest

pytest.importorskip("bookmarks_families", reason="install the example plugins under plugins")

from coworkenv.synth.generate.families import FAMILIES
from coworkenv.synth.testing import check_family


def test_the_archive_broken_family_makes_valid_tasks_at_every_level() -> None:
    check_family("bookmarks-archive-broken")


def test_the_family_joins_through_its_entry_point() -> None:
    assert FAMILIES["bookmarks-archive-broken"].service_options == (("bookmarks",),)
