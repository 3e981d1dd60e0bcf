"""Seeded images: a second environment from the same seed is a copy of the first, never of another seed's."""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from coworkenv.servers.kit import Environment, SeedError, ServiceState
from coworkenv.servers.kit.images import IMAGES, ImageCache, seed_key
from coworkenv.servers.tickets import SERVICE as TICKETS

EXAMPLES = Path(__file__).parents[3] / "servers/examples"
SEED: dict[str, Any] = json.loads((EXAMPLES / "tickets.json").read_text())


def test_a_second_environment_from_the_same_seed_copies_the_first_and_holds_no_parsed_seed() -> None:
    IMAGES.clear()
    with Environment.create({"tickets": SEED}) as first, Environment.create({"tickets": copy.deepcopy(SEED)}) as again:
        assert again.dump() == first.dump()
        assert len(IMAGES) == 1
        assert again.state("tickets").seed is None and again.state("tickets").image is not None


def test_a_changed_seed_is_validated_and_seeded_afresh() -> None:
    changed = copy.deepcopy(SEED)
    changed["tickets"][0]["subject"] = "Something else entirely"
    with Environment.create({"tickets": SEED}) as env, Environment.create({"tickets": changed}) as other:
        first_id = SEED["tickets"][0]["id"]
        assert other.state("tickets").tables["tickets"].get(first_id)["subject"] == "Something else entirely"
        assert env.state("tickets").tables["tickets"].get(first_id)["subject"] == SEED["tickets"][0]["subject"]


def test_a_bad_seed_is_refused_every_time_and_never_kept() -> None:
    bad = copy.deepcopy(SEED)
    bad["tickets"][1]["priority"] = "whenever"
    for _ in range(2):
        with pytest.raises(SeedError, match=r"tickets\.tickets\[1\] field 'priority'"):
            Environment.create({"tickets": bad})


def test_a_seed_equal_in_json_but_not_in_types_gets_its_own_validation() -> None:
    Environment.create({"tickets": SEED}).close()
    as_tuple = {**SEED, "tickets": tuple(SEED["tickets"])}
    assert seed_key(TICKETS, as_tuple) != seed_key(TICKETS, SEED)
    with pytest.raises(SeedError, match="expected a list of records"):
        Environment.create({"tickets": as_tuple})


def test_reset_of_a_copied_environment_returns_to_the_seed_with_an_empty_audit_and_the_first_clock() -> None:
    Environment.create({"tickets": SEED}, now="2026-03-02T09:00:00Z").close()
    with Environment.create({"tickets": SEED}, now="2026-04-01T10:00:00Z") as env:
        pristine = env.dump()
        state = env.state("tickets")
        result = state.call_now("add_comment", {"ticket_id": "tkt_1001", "body": "On it.", "public": False})
        assert not result.is_error and env.dump() != pristine
        env.clock.advance(3600)
        env.reset()
        assert env.dump() == pristine and env.audit() == []
        assert env.clock.iso() == "2026-04-01T10:00:00Z"


def test_forks_of_a_copied_environment_are_independent_of_it_and_of_each_other() -> None:
    with Environment.create({"tickets": SEED}) as env:
        one, two = env.fork(), env.fork()
        one.state("tickets").call_now("add_comment", {"ticket_id": "tkt_1001", "body": "Hi.", "public": False})
        assert two.dump() == env.dump() != one.dump()
        assert len(one.audit()) == 1 and two.audit() == [] and env.audit() == []
        one.close()
        two.close()


def test_a_closed_state_refuses_calls_like_a_closed_connection_and_closing_twice_is_fine() -> None:
    state = ServiceState.open(TICKETS, SEED)
    state.close()
    state.close()
    with pytest.raises(sqlite3.ProgrammingError):
        state.call_now("get_ticket", {"ticket_id": "tkt_1001"})


def test_the_image_cache_keeps_within_its_budget_dropping_the_least_recently_used() -> None:
    cache = ImageCache(budget_bytes=4000)
    for n in range(6):
        cache.put(("svc", "1", str(n)), bytes(900), TICKETS)
        cache.get(("svc", "1", "0"))  # keep the first one in use
    assert cache.size <= 4000
    assert cache.get(("svc", "1", "0")) is not None and cache.get(("svc", "1", "1")) is None
    cache.put(("svc", "1", "big"), bytes(2000), TICKETS)  # over a quarter of the budget: not kept
    assert cache.get(("svc", "1", "big")) is None


def test_the_first_bad_record_of_a_large_table_is_still_named() -> None:
    rows = [{**SEED["tickets"][0], "id": f"tkt_{n}"} for n in range(500)]
    dup = [*rows[:10], rows[3], *rows[10:]]
    with pytest.raises(SeedError, match=r"tickets\.tickets\[10\] field 'id': duplicate id 'tkt_3'"):
        ServiceState.open(TICKETS, {**SEED, "tickets": dup})
    surrogate = copy.deepcopy(rows)
    surrogate[321]["subject"] = "bad \ud800 text"
    with pytest.raises(SeedError, match=r"tickets\.tickets\[321\]: the record\.subject holds text that is not valid"):
        ServiceState.open(TICKETS, {**SEED, "tickets": surrogate})
