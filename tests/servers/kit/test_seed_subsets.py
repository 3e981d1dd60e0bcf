"""Any valid seed loads: every table of every registered service whole (from its example), empty or absent.

A seed the service refuses for a real reason of consistency (a reference to a table left empty, a charge whose
refunds were dropped) is a :class:`SeedError` naming the record and the field, never another exception.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coworkenv.servers import SERVICES, Environment
from coworkenv.servers.kit import SeedError, Service
from coworkenv.servers.registry import SHIPPED

EXAMPLES = Path(__file__).parents[3] / "servers/examples"
NOW = "2026-03-02T09:00:00Z"


def example(name: str) -> dict[str, list[dict[str, Any]]]:
    """The service's example workspace; none for a service that ships without one (its tables are then drawn
    empty or absent only)."""
    path = EXAMPLES / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def seeds(service: Service) -> st.SearchStrategy[dict[str, list[dict[str, Any]]]]:
    """A seed of some of the service's tables, each whole (as in the example), empty or left out."""
    whole = example(service.name)
    per_table = {
        table.name: st.sampled_from(["absent", "empty", "whole"] if whole.get(table.name) else ["absent", "empty"])
        for table in service.tables
    }
    return st.fixed_dictionaries(per_table).map(
        lambda drawn: {
            name: ([] if how == "empty" else json.loads(json.dumps(whole[name])))
            for name, how in drawn.items()
            if how != "absent"
        }
    )


def assert_clear(service: Service, seed: dict[str, list[dict[str, Any]]], exc: SeedError) -> None:
    """The refusal names a record of the seed (``service.table[index]``, or its id) and a field, on one line."""
    message = str(exc)
    found = re.match(rf"{re.escape(service.name)}\.(\w+)\[(\d+)\](?: \([^)]*\))? field '[^']+'", message)
    assert found, message
    assert "\n" not in message
    table, index = found.group(1), int(found.group(2))
    assert index < len(seed.get(table, [])), message


def check_loads(service: Service, seed: dict[str, list[dict[str, Any]]]) -> None:
    try:
        env = Environment.create({service.name: seed}, now=NOW, registry={service.name: service})
    except SeedError as exc:
        assert_clear(service, seed, exc)
        return
    with env:
        state = env.state(service.name)
        dumped = state.dump()
        assert set(dumped) == {t.name for t in service.tables}
        for table in service.tables:
            given_ids = sorted(str(r["id"]) for r in seed.get(table.name, []))
            assert sorted(str(r["id"]) for r in dumped[table.name]) == given_ids, table.name
        state.state_hash()
        for spec in service.tools:  # what can run with no arguments reads the (maybe empty) tables unharmed
            if spec.read_only and not spec.input_schema().get("required"):
                assert state.call_now(spec.name, {}).outcome != "internal_error", spec.name


@pytest.mark.parametrize("name", SHIPPED)
def test_a_seed_of_empty_tables_or_none_loads(name: str) -> None:
    service = SERVICES[name]
    check_loads(service, {})
    check_loads(service, {t.name: [] for t in service.tables})
    for table in service.tables:
        check_loads(service, {table.name: []})


@pytest.mark.parametrize("name", SHIPPED)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_subset_of_the_example_tables_loads_or_names_the_record_and_field(name: str, data: st.DataObject) -> None:
    service = SERVICES[name]
    check_loads(service, data.draw(seeds(service), label="seed"))
