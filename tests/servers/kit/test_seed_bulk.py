"""The bulk seed path: ``insert_seed`` stores exactly what ``TableStore.insert`` stores a record at a time, and the column-wise
storability check agrees with the record-by-record one."""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

import pytest

from coworkenv.servers.kit import Record, SeedError, Service, Table, parse_seed
from coworkenv.servers.kit.images import EMPTY, acquire
from coworkenv.servers.kit.schema import schema_template
from coworkenv.servers.kit.seed import insert_seed, paused_gc
from coworkenv.servers.kit.store import TableStore
from coworkenv.servers.registry import SERVICES, SHIPPED

EXAMPLES = Path(__file__).parents[3] / "servers/examples"


def _stored(service: Service, seed: dict[str, list[dict[str, Any]]], bulk: bool) -> dict[str, list[Any]]:
    conn = acquire(service, EMPTY)
    try:
        schema_template(service).backup(conn)
        conn.execute("BEGIN")
        if bulk:
            insert_seed(conn, service, seed)
        else:
            for table in service.tables:  # the path every tool write takes, a record at a time
                store = TableStore(conn, table)
                for row in seed.get(table.name, []):
                    store.insert(row)
        conn.execute("COMMIT")
        stored = {
            t.name: [tuple(map(type, r)) + tuple(r) for r in conn.execute(f'SELECT * FROM "{t.name}" ORDER BY id')]
            for t in service.tables
        }
        stored["(schema)"] = sorted(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall())
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        return stored
    finally:
        conn.close()


@pytest.mark.parametrize("name", SHIPPED)
def test_bulk_insert_stores_every_example_seed_as_single_inserts_do(name: str) -> None:
    service = SERVICES[name]
    document = json.loads((EXAMPLES / f"{name}.json").read_text())
    parsed = parse_seed(service, document)
    assert _stored(service, parsed, bulk=True) == _stored(service, parsed, bulk=False)


class Gadget(Record):
    label: str
    count: int | None = None
    ratio: float = 0.5
    on: bool = False
    extra: dict[str, Any] = {}
    tags: list[str] = []


GADGETS = Service("gadgets", "Gadgets", "Test.", (Table("gadgets", Gadget, "gd_"),), ())


def test_bulk_insert_encodes_nested_json_bools_and_nulls_like_a_single_insert() -> None:
    seed = {
        "gadgets": [
            {"id": "g1", "label": 'é "quoted" \n', "count": 2**63 - 1, "on": True, "extra": {"b": [1, 2.5], "a": None}},
            {"id": "g2", "label": "", "ratio": 1e300, "extra": {"z": {"y": {"x": "ü"}}, "a": True}, "tags": ["t"]},
            {"id": "g0", "label": "x", "count": None, "tags": []},
        ]
    }
    parsed = parse_seed(GADGETS, seed)
    assert _stored(GADGETS, parsed, bulk=True) == _stored(GADGETS, parsed, bulk=False)


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (
            {"id": "g1", "label": "x", "count": 2**63},
            "gadgets.gadgets[1] field 'count': 9223372036854775808 is out of range",
        ),
        (
            {"id": "g1", "label": "bad \ud800"},
            "gadgets.gadgets[1]: the record.label holds text that is not valid Unicode",
        ),
        ({"id": "g1", "label": "x", "tags": ["\udfff"]}, "gadgets.gadgets[1]: the record.tags[0] holds text that"),
        ({"id": "g0", "label": "x"}, "gadgets.gadgets[1] field 'id': duplicate id 'g0'"),
    ],
)
def test_the_column_check_sends_every_bad_record_to_the_record_by_record_message(
    record: dict[str, Any], message: str
) -> None:
    seed = {"gadgets": [{"id": "g0", "label": "fine", "extra": {"n": 10**30}}, record]}
    with pytest.raises(SeedError) as err:
        parse_seed(GADGETS, seed)
    assert str(err.value).startswith(message)


def test_nesting_too_deep_in_a_json_column_is_named() -> None:
    deep: Any = "leaf"
    for _ in range(80):
        deep = {"d": deep}
    with pytest.raises(SeedError, match=r"gadgets.gadgets\[0\]: the record nests deeper than 64 levels"):
        parse_seed(GADGETS, {"gadgets": [{"id": "g0", "label": "x", "extra": deep}]})
    shallow: Any = "leaf"
    for _ in range(40):  # past the quick check's bound, within the rule: looked at record by record, accepted
        shallow = [shallow]
    assert parse_seed(GADGETS, {"gadgets": [{"id": "g0", "label": "x", "extra": {"s": shallow}}]})


def test_paused_gc_restores_the_collector_as_it_was() -> None:
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_large_table_in_any_order_is_stored_as_in_id_order_non_ascii_ids_included() -> None:
    """Rows go in sorted by id (faster B-tree inserts); what is stored does not depend on the order given."""
    from coworkenv.servers.kit.seed import BULK_INDEX_ROWS, by_id

    tickets = SERVICES["tickets"]
    seed = json.loads((EXAMPLES / "tickets.json").read_text())
    base = seed["tickets"][0]
    names = ["tkt_z", "tkt_é", "tkt_\ufffd", "tkt_\U0001f600", "tkt_Z", "tkt_0"]
    extra = [f"tkt_{n:05d}" for n in range(BULK_INDEX_ROWS)] + names
    shuffled = extra[::-1][::2] + extra[::-1][1::2]
    seed["tickets"] += [{**base, "id": i, "subject": f"Bulk {i}"} for i in shuffled]
    in_order = {**seed, "tickets": sorted(seed["tickets"], key=lambda r: r["id"])}
    assert _stored(tickets, seed, bulk=True) == _stored(tickets, in_order, bulk=True)
    columns = [["b", "a", "c"], [2, 1, 3]]
    assert by_id(columns) == [["a", "b", "c"], [1, 2, 3]]
    ordered = [["a", "b"], [1, 2]]
    assert by_id(ordered) is ordered
    mixed = [["b", 1, None], [1, 2, 3]]  # a service of someone's own with ids Python cannot order: as given
    assert by_id(mixed) is mixed
