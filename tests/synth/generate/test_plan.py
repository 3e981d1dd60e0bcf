"""The capability plan, the coverage plan it becomes, and ``coworkenv plan``."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from click.testing import CliRunner, Result

from coworkenv.servers import registry
from coworkenv.synth.cli import schema_group
from coworkenv.synth.cli_synth import COMMANDS
from coworkenv.synth.generate.families import FAMILIES, shipped_families
from coworkenv.synth.generate.plan import (
    PlanError,
    apportion,
    coverage_plan,
    default_plan_path,
    load_plan,
    parse_plan,
    summarise,
)

SHIPPED = shipped_families()
CLI = click.Group("coworkenv", commands={c.name: c for c in COMMANDS if c.name})


def invoke(*args: str) -> Result:
    return CliRunner().invoke(CLI, [str(a) for a in args])


def small_plan() -> dict[str, Any]:
    return {
        "name": "small",
        "count": 20,
        "capabilities": [{"name": "distractor rejection", "weight": 3}, {"name": "cross-service lookup", "weight": 1}],
        "service_combinations": [["tickets"], ["tickets", "crm", "email"]],
        "difficulties": {"easy": 1, "medium": 1, "hard": 2},
        "scenarios": [{"family": "tickets-stale-escalation"}, {"family": "escalate-to-account-managers"}],
    }


def test_the_default_plan_ships_with_the_package_and_draws_every_shipped_family() -> None:
    plan = load_plan(families=SHIPPED)
    assert default_plan_path().exists()
    assert {s.family for s in plan.scenarios or []} == set(SHIPPED)
    assert set(plan.difficulties) == {"easy", "medium", "hard"}
    assert plan.service_combinations is None  # open: any set of registered services a family offers


@pytest.mark.parametrize("count", [1, 7, 50, 200, 333])
def test_quotas_sum_to_the_requested_count(count: int) -> None:
    cells = coverage_plan(load_plan(), count, seed=3)
    assert sum(c.quota for c in cells) == count


def test_the_same_seed_gives_the_same_coverage_plan() -> None:
    plan = load_plan()
    assert coverage_plan(plan, 61, seed=5) == coverage_plan(plan, 61, seed=5)
    assert any(coverage_plan(plan, 61, seed=5) != coverage_plan(plan, 61, seed=s) for s in range(6, 12))


def test_every_cell_pairs_a_family_with_a_capability_it_exercises_and_a_service_set_of_registered_services() -> None:
    plan = load_plan()
    for cell in coverage_plan(plan, 200, seed=0):
        family = FAMILIES[cell.scenario]
        assert cell.capability in family.capabilities
        assert cell.services in family.service_options and set(cell.services) <= set(registry.SERVICES)
    closed = parse_plan(small_plan())
    allowed = {frozenset(c) for c in closed.service_combinations or []}
    assert all(frozenset(c.services) in allowed for c in coverage_plan(closed, 40, seed=0))


def test_the_default_plan_covers_every_scenario_service_and_level_at_300_tasks() -> None:
    totals = summarise(coverage_plan(load_plan(families=SHIPPED), 300, seed=0))  # 62 families: ~5 tasks each
    assert all(totals["scenario"][name] > 0 for name in SHIPPED)
    assert {s for s, n in totals["service"].items() if n} >= {"email", "tickets", "crm", "payments"}
    assert all(totals["difficulty"][d] > 0 for d in ("easy", "medium", "hard"))


def test_capability_and_difficulty_weights_set_the_shares() -> None:
    totals = summarise(coverage_plan(parse_plan(small_plan()), 80, seed=0))
    assert totals["capability"] == {"cross-service lookup": 20, "distractor rejection": 60}
    assert totals["difficulty"]["hard"] == 40


def test_a_scenario_can_be_limited_to_some_capabilities_and_levels() -> None:
    doc = small_plan()
    doc["scenarios"][0].update(capabilities=["distractor rejection"], difficulties=["hard"])
    cells = [c for c in coverage_plan(parse_plan(doc), 40, seed=0) if c.scenario == "tickets-stale-escalation"]
    assert {c.capability for c in cells} == {"distractor rejection"} and {c.difficulty for c in cells} == {"hard"}


def test_apportion_splits_by_largest_remainder_and_breaks_ties_by_seed() -> None:
    assert apportion(10, [1, 1, 2], random.Random(0)) in ([2, 3, 5], [3, 2, 5])
    assert sum(apportion(7, [1, 1, 1], random.Random(1))) == 7
    assert apportion(0, [1, 2], random.Random(0)) == [0, 0]


def test_a_plan_naming_an_unknown_family_is_an_error_that_lists_the_known_ones() -> None:
    doc = small_plan()
    doc["scenarios"].append({"family": "make-coffee"})
    with pytest.raises(PlanError, match=r"scenarios\[2\]\.family: unknown family 'make-coffee'; known: .*bank-change"):
        parse_plan(doc)


def test_a_family_whose_services_are_not_allowed_is_an_error() -> None:
    doc = small_plan()
    doc["service_combinations"] = [["tickets"]]
    with pytest.raises(
        PlanError, match="escalate-to-account-managers needs one of the service sets tickets\\+crm\\+email"
    ):
        parse_plan(doc)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["capabilities"][0].update(weight=-1), r"capabilities\[0\]\.weight"),
        (lambda d: d.update(colour="blue"), r"colour"),
        (lambda d: d["difficulties"].update(extreme=1), r"difficulties\.extreme"),
        (lambda d: d["scenarios"][0].update(capabilities=["juggling"]), r"juggling"),
        (lambda d: d.update(service_combinations=[["crm", "crm"]]), r"names a service twice"),
    ],
)
def test_a_bad_plan_is_an_error_that_names_the_field(edit: Any, message: str) -> None:
    doc = copy.deepcopy(small_plan())
    edit(doc)
    with pytest.raises(PlanError, match=message):
        parse_plan(doc)


def test_plans_load_from_yaml_and_json_files(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(small_plan()))
    (tmp_path / "p.json").write_text(json.dumps(small_plan()))
    assert load_plan(tmp_path / "p.yaml") == load_plan(tmp_path / "p.json")
    (tmp_path / "bad.yaml").write_text("name: [unclosed")
    with pytest.raises(PlanError, match=r"bad\.yaml: not valid YAML"):
        load_plan(tmp_path / "bad.yaml")


def test_a_plan_with_a_yaml_alias_is_refused_in_one_line_at_the_alias(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text("base: &b [1, 2]\nscenarios: *b\n")
    with pytest.raises(PlanError) as info:
        load_plan(tmp_path / "p.yaml")
    assert (
        "\n" not in str(info.value)
        and "aliases (*b) are not allowed" in str(info.value)
        and "line 2" in str(info.value)
    )


def test_the_plan_command_prints_cells_whose_quotas_sum_to_the_count() -> None:
    result = invoke("plan", "--count", "30", "--seed", "2")
    assert result.exit_code == 0, result.output
    assert "QUOTA" in result.output and "30 task(s)" in result.output
    assert invoke("plan", "--count", "30", "--seed", "2").output == result.output
    cells = json.loads(invoke("plan", "default", "--count", "30", "--json").output)["cells"]
    assert sum(c["quota"] for c in cells) == 30


def test_the_plan_command_says_what_is_wrong_with_a_plan_file(tmp_path: Path) -> None:
    doc = small_plan()
    doc["capabilities"][1]["weight"] = 0
    path = tmp_path / "plan.yaml"
    path.write_text(yaml.safe_dump(doc))
    result = invoke("plan", str(path))
    assert result.exit_code != 0
    assert "capabilities[1].weight" in result.output and str(path) in result.output


def test_the_plan_format_has_a_json_schema_that_the_default_plan_satisfies() -> None:
    result = CliRunner().invoke(schema_group, ["plan"])
    assert result.exit_code == 0, result.output
    schema = json.loads(result.output)
    assert schema["title"] == "coworkenv capability plan" and schema["required"] == ["name", "capabilities"]
    assert set(schema["properties"]) == {
        "name", "description", "count", "capabilities", "service_combinations", "difficulties", "scenarios"
    }  # fmt: skip
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(yaml.safe_load(default_plan_path().read_text()), schema)
    jsonschema.validate(small_plan(), schema)


def test_an_open_plan_leaves_out_the_service_sets_with_a_service_nobody_registered() -> None:
    class Elsewhere(type(FAMILIES["tickets-stale-escalation"])):  # type: ignore[misc]
        name = "tickets-or-fax"
        service_options = (("fax",), ("tickets",))

    families = {"tickets-or-fax": Elsewhere()}
    doc = {"name": "open", "capabilities": [{"name": "distractor rejection"}]}
    cells = coverage_plan(parse_plan(doc, families=families), 6, 0, families=families)
    assert {c.services for c in cells} == {("tickets",)} and sum(c.quota for c in cells) == 6

    class FaxOnly(Elsewhere):
        service_options = (("fax",),)

    doc["scenarios"] = [{"family": "tickets-or-fax"}]
    with pytest.raises(PlanError, match="some service of each is not registered; install the package"):
        parse_plan(doc, families={"tickets-or-fax": FaxOnly()})
