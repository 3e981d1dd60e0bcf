"""Seed validation with canonical times checked inside pydantic-core gives the records the real models give, and
a seed with other times or errors is still normalised or refused by the real models, in their words."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from coworkenv.servers.kit import SeedError
from coworkenv.servers.kit import seed as seeding
from coworkenv.servers.kit.seedmodels import fast_model
from coworkenv.servers.registry import SERVICES, shipped_services

EXAMPLES = Path(__file__).parents[3] / "servers/examples"
SHIPPED_TASKS = Path(__file__).parents[3] / "synth/examples"


def seeds() -> Iterator[tuple[str, dict[str, Any]]]:
    for path in sorted(EXAMPLES.glob("*.json")):
        yield path.stem, json.loads(path.read_text())
    for path in sorted(SHIPPED_TASKS.glob("*.json")):
        task = json.loads(path.read_text())
        yield from task.get("initial_records", {}).items()


def slow(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(seeding, "_fast_adapter", lambda model: None)


def test_every_table_with_times_has_a_fast_model_with_the_same_fields_in_the_same_order() -> None:
    timed = 0
    for service in shipped_services().values():
        for table in service.tables:
            fast = fast_model(table.model)
            if fast is not None:
                timed += 1
                assert tuple(fast.model_fields) == tuple(table.model.model_fields)
    assert timed >= 20


@pytest.mark.parametrize(("service", "seed"), list(seeds()), ids=[f"{s}-{n}" for n, (s, _) in enumerate(seeds())])
def test_the_fast_path_validates_to_what_the_real_models_give(
    service: str, seed: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = seeding.parse_seed_columns(SERVICES[service], copy.deepcopy(seed))
    slow(monkeypatch)
    assert seeding.parse_seed_columns(SERVICES[service], copy.deepcopy(seed)) == fast


def ticket_seed() -> dict[str, Any]:
    return dict(json.loads((EXAMPLES / "tickets.json").read_text()))


def test_times_in_another_iso_form_are_still_normalised() -> None:
    seed = ticket_seed()
    seed["tickets"][0]["created_at"] = "2026-02-26T15:10:00+01:00"
    seed["tickets"][1]["updated_at"] = "2026-02-26 14:10:00.000Z"
    out = seeding.parse_seed(SERVICES["tickets"], seed)
    assert out["tickets"][0]["created_at"] == "2026-02-26T14:10:00Z"
    assert out["tickets"][1]["updated_at"] == "2026-02-26T14:10:00Z"


@pytest.mark.parametrize(
    ("value", "said"),
    [("yesterday", "not an ISO 8601 time"), ("2026-02-26T14:10:00", "has no zone"), (5, "")],
)
def test_a_bad_time_is_refused_with_the_real_models_words(
    value: Any, said: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed = ticket_seed()
    seed["tickets"][2]["created_at"] = value
    with pytest.raises(SeedError) as fast:
        seeding.parse_seed(SERVICES["tickets"], copy.deepcopy(seed))
    slow(monkeypatch)
    with pytest.raises(SeedError) as real:
        seeding.parse_seed(SERVICES["tickets"], seed)
    assert str(fast.value) == str(real.value)
    assert "tickets[2] field 'created_at'" in str(fast.value) and said in str(fast.value)
