"""The bookmarks service passes the checks every coworkenv service gets (``coworkenv.servers.testing``), served over
stdio from its entry point as well: the package must be installed (``pip install .``)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("coworkenv_bookmarks", reason="install the example plugin: pip install ./plugins/bookmarks")

from coworkenv_bookmarks import EXAMPLE_SEED, SERVICE

from coworkenv.servers import Environment
from coworkenv.servers.testing import check_service


def test_the_bookmarks_service_passes_the_checks_every_service_gets() -> None:
    check_service(SERVICE, EXAMPLE_SEED)


def test_archiving_a_broken_bookmark_updates_it_in_place_and_audits_the_call() -> None:
    seed = json.loads(EXAMPLE_SEED.read_text())
    with Environment.create({"bookmarks": seed}, now="2026-03-05T09:00:00Z") as env:
        done = env.state("bookmarks").call_now("update_bookmark", {"bookmark_id": "bm_old_wiki", "status": "archived"})
        assert done.data is not None and done.data["status"] == "archived"
        assert done.data["updated_at"] == "2026-03-05T09:00:00Z" and done.data["title"] == "Old wiki"
        assert [(r.tool, r.outcome, r.state_changed) for r in env.audit()] == [("update_bookmark", "ok", True)]
