"""The column-wise seed path (``columns.py``): records taken from the validated models are what their dump
gives, a bad record deep in a large seed is still named, a failed load keeps nothing, and the cache key
still tells types apart."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import field_serializer

from coworkenv.servers.kit import Environment, Record, SeedError, Service, Table, parse_seed
from coworkenv.servers.kit.columns import insert_columns, plain_rows, stored_columns
from coworkenv.servers.kit.images import EMPTY, IMAGES, acquire, seed_key
from coworkenv.servers.kit.seed import _adapter, parse_seed_columns
from coworkenv.servers.registry import SERVICES, SHIPPED
from coworkenv.servers.tickets import SERVICE as TICKETS

EXAMPLES = Path(__file__).parents[3] / "servers/examples"
SEED: dict[str, Any] = json.loads((EXAMPLES / "tickets.json").read_text())


def _large(copies: int = 40) -> dict[str, list[dict[str, Any]]]:
    """The tickets example repeated with suffixed ids (references follow their copy)."""
    refs = {t.name: dict(t.refs) for t in TICKETS.tables}
    return {
        table: [
            {k: f"{v}_{i}" if isinstance(v, str) and (k == "id" or k in refs[table]) else v for k, v in row.items()}
            for i in range(copies)
            for row in rows
        ]
        for table, rows in SEED.items()
    }


@pytest.mark.parametrize("name", SHIPPED)
def test_records_taken_from_the_models_equal_their_json_dump_in_value_and_key_order(name: str) -> None:
    service = SERVICES[name]
    document = json.loads((EXAMPLES / f"{name}.json").read_text())
    for table_name, records in document.items():
        table = service.tables_by_name[table_name]
        adapter = _adapter(table.model)
        dumped = adapter.dump_python(adapter.validate_python(records, context={"seed": True}), mode="json")
        plain = plain_rows(table, adapter.validate_python(records, context={"seed": True}))
        if plain is not None:
            assert [list(r.items()) for r in plain[0]] == [list(r.items()) for r in dumped]


class Stamped(Record):
    label: str
    tags: list[str] = []

    @field_serializer("label")
    def _shout(self, value: str) -> str:
        return value.upper()


class Loose(Record):
    data: Any = None


STAMPED = Service("stamped", "Stamped", "Test.", (Table("things", Stamped, "th_"),), ())
LOOSE = Service("loose", "Loose", "Test.", (Table("things", Loose, "th_"),), ())


def test_a_model_with_a_serializer_is_dumped_not_taken_as_it_is() -> None:
    parsed = parse_seed(STAMPED, {"things": [{"id": "t1", "label": "quiet"}]})
    assert parsed["things"][0]["label"] == "QUIET"


def test_a_stored_record_shares_no_container_with_the_seed_it_came_from() -> None:
    payload = ["a", "b"]
    parsed = parse_seed(LOOSE, {"things": [{"id": "t1", "data": payload}]})
    assert parsed["things"][0]["data"] == payload and parsed["things"][0]["data"] is not payload


def test_the_columns_made_by_the_check_are_what_the_insert_would_encode() -> None:
    seed = _large(3)
    parsed, columns = parse_seed_columns(TICKETS, seed)
    assert set(columns) == set(parsed)
    for name, rows in parsed.items():
        table = TICKETS.tables_by_name[name]
        assert [list(c) for c in columns[name]] == [list(c) for c in stored_columns(table, rows) or []]


def test_the_last_few_rows_past_a_whole_statement_are_inserted_too() -> None:
    table = TICKETS.tables_by_name["organizations"]
    rows = parse_seed(TICKETS, _large(13))["organizations"]
    conn = acquire(TICKETS, EMPTY)
    try:
        conn.execute(table.ddl()[0])
        insert_columns(conn, table, stored_columns(table, rows) or [])
        assert conn.execute('SELECT COUNT(*) FROM "organizations"').fetchone()[0] == len(rows)
    finally:
        conn.close()


def test_a_bad_record_deep_in_a_large_seed_is_named_and_nothing_is_kept() -> None:
    IMAGES.clear()
    seed = _large()
    last = len(seed["tickets"]) - 1
    seed["tickets"][last]["tags"] = ["fine", "bad \ud800"]
    with pytest.raises(SeedError, match=rf"tickets\.tickets\[{last}\]: the record\.tags\[1\] holds text"):
        Environment.create({"tickets": seed})
    assert len(IMAGES) == 0
    seed["tickets"][last]["tags"] = []
    seed["comments"][-1]["ticket_id"] = "tkt_nowhere"
    with pytest.raises(SeedError, match=r"field 'ticket_id': 'tkt_nowhere' is not the id of any tickets record"):
        Environment.create({"tickets": seed})
    assert len(IMAGES) == 0


def test_a_large_seed_loads_the_same_records_as_one_parsed_first() -> None:
    seed = _large()
    IMAGES.clear()
    with Environment.create({"tickets": seed}) as cold:
        parsed = {"tickets": parse_seed(TICKETS, seed)}
        IMAGES.clear()
        with Environment.create({"tickets": seed}, parsed=parsed) as given:
            assert cold.state_hash() == given.state_hash()


@pytest.mark.parametrize(("one", "other"), [(1, "1"), (1, True), (0, False), (1, 1.0), ("a", ("a",))])
def test_the_cache_key_still_tells_seeds_that_differ_only_in_types_apart(one: Any, other: Any) -> None:
    first = {"tickets": [{"id": "t", "value": one}]}
    second = {"tickets": [{"id": "t", "value": other}]}
    assert seed_key(TICKETS, first) != seed_key(TICKETS, second)
    assert seed_key(TICKETS, first) == seed_key(TICKETS, copy.deepcopy(first))


def test_a_seed_with_a_cycle_gets_no_cache_key_and_is_refused_as_usual() -> None:
    looped: list[Any] = []
    looped.append(looped)
    assert seed_key(TICKETS, {"tickets": looped}) is None
    with pytest.raises(SeedError, match=r"tickets\.tickets\[0\]: expected an object"):
        Environment.create({"tickets": {"tickets": looped}})
