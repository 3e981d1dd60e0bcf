"""The procedural families: every family, at every level, makes tasks that pass validation (static and by
execution); their distractors are really in the seed; the level changes distractors, volume and steps."""

from __future__ import annotations

import ast
import pkgutil
import re
import statistics
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from coworkenv.synth.contract.checks import RecordExists, SaidContains
from coworkenv.synth.contract.task import CompletionCheck, ForbiddenAction, SayStep, Task, ToolStep, UserSpec
from coworkenv.synth.contract.validation.static import validate_static
from coworkenv.synth.contract.validation.validate import validate_task
from coworkenv.synth.generate.families import FAMILIES, Family, shipped_families
from coworkenv.synth.generate.families.kit.base import SAFETY, FamilyError, TaskBuilder

LEVELS = ("easy", "medium", "hard")
SHIPPED = shipped_families()
CELLS = [(f, s, d) for f in SHIPPED for s in SHIPPED[f].service_options for d in LEVELS]
EXECUTED_SEEDS = (11, 2026, 90210)
STATIC_SEEDS = range(100, 106)
TIME_FIELDS = ("created", "created_at", "date")


def make(name: str, services: tuple[str, ...], level: Any, seed: int) -> Task:
    return FAMILIES[name].make(services, level, seed)


def records(task: Task) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for service, tables in task.initial_records.items():
        for table, rows in tables.items():
            for row in rows:
                yield service, table, row


def test_there_are_enough_families_of_each_kind() -> None:
    families: list[Family] = list(SHIPPED.values())
    assert len(families) >= 12
    assert sum(any(len(o) >= 2 for o in f.service_options) for f in families) >= 6
    safety = {f.name for f in families if f.safety}
    assert {
        "bank-change-lookalike",
        "refund-outside-policy",
        "customer-data-to-outside-address",
        "ticket-comment-injection",
    } <= safety
    assert all(SAFETY in FAMILIES[n].capabilities for n in safety)
    covered = {s for f in families for o in f.service_options for s in o}
    assert covered >= {"email", "tickets", "crm", "payments"}


@pytest.mark.parametrize(("name", "services", "level"), CELLS, ids=[f"{f}-{'+'.join(s)}-{d}" for f, s, d in CELLS])
def test_every_family_makes_tasks_that_pass_validation_by_execution(
    name: str, services: tuple[str, ...], level: str
) -> None:
    async def main() -> None:
        for seed in EXECUTED_SEEDS:
            task = make(name, services, level, seed)
            report = await validate_task(task)
            assert report.valid, "\n".join(d.line() for d in report.errors)
            assert report.execution is not None and report.execution.reference is not None
            assert report.execution.reference.score == 1.0 and report.execution.noop is not None
            assert report.execution.noop.completion == 0.0
            assert task.alternative_solutions, f"{name} {level}: no alternative solution"
            assert report.execution.alternatives and all(a == 1.0 for a in report.execution.alternatives)

    anyio.run(main)


def _path(steps: list[Any]) -> list[tuple[str, str, str]]:
    return [(s.service, s.tool, str(sorted(s.arguments.items()))) for s in steps if isinstance(s, ToolStep)]


@pytest.mark.parametrize(("name", "services", "level"), CELLS, ids=[f"{f}-{'+'.join(s)}-{d}" for f, s, d in CELLS])
def test_every_family_offers_a_genuinely_different_correct_solution(
    name: str, services: tuple[str, ...], level: str
) -> None:
    """Each alternative takes another path (other tools, another order or lookup) and still scores 1.0."""

    async def main() -> None:
        task = make(name, services, level, 424242)
        assert task.alternative_solutions, f"{name} {level}: no alternative solution"
        reference = _path(task.reference_solution)
        for alternative in task.alternative_solutions:
            assert _path(alternative) != reference
        report = await validate_task(task)
        assert report.execution is not None, "\n".join(d.line() for d in report.errors)
        scores = report.execution.alternatives
        assert len(scores) == len(task.alternative_solutions) and all(a == 1.0 for a in scores), "\n".join(
            d.line() for d in report.errors
        )

    anyio.run(main)


def test_family_tasks_pass_the_static_checks_over_more_seeds() -> None:
    for name, services, level in CELLS:
        for seed in STATIC_SEEDS:
            problems = [d for d in validate_static(make(name, services, level, seed)) if d.severity == "error"]
            assert not problems, f"{name} {level} seed {seed}: " + "; ".join(d.line() for d in problems)


def test_the_distractors_listed_are_really_in_the_seed() -> None:
    for name, services, level in CELLS:
        task = make(name, services, level, 7)
        ids = {str(row["id"]) for _, _, row in records(task)}
        distractors = task.metadata["distractors"]
        assert distractors, f"{name} {level} lists no distractors"
        assert set(distractors) <= ids, f"{name}: {set(distractors) - ids} not in the seed"


def test_the_same_seed_builds_the_same_task_and_another_seed_another_one() -> None:
    for name, family in SHIPPED.items():
        services = family.service_options[0]
        first = make(name, services, "medium", 42).model_dump(mode="json")
        assert make(name, services, "medium", 42).model_dump(mode="json") == first
        assert make(name, services, "medium", 43).model_dump(mode="json") != first


def _mean(name: str, services: tuple[str, ...], level: str, measure: Any) -> float:
    return statistics.mean(measure(make(name, services, level, seed)) for seed in range(6))


def test_harder_levels_have_more_distractors_more_records_and_more_steps() -> None:
    def n_records(t: Task) -> int:
        return sum(1 for _ in records(t))

    def n_steps(t: Task) -> int:
        return sum(isinstance(s, ToolStep) for s in t.reference_solution) + len(t.completion_checks)

    def n_distractors(t: Task) -> int:
        return len(t.metadata["distractors"])

    for name, family in SHIPPED.items():
        services = family.service_options[0]
        assert _mean(name, services, "hard", n_records) > _mean(name, services, "easy", n_records), name
        easy_work = _mean(name, services, "easy", n_steps) + _mean(name, services, "easy", n_distractors)
        hard_work = _mean(name, services, "hard", n_steps) + _mean(name, services, "hard", n_distractors)
        assert hard_work > easy_work, name


def test_every_forbidden_action_has_an_example_and_safety_tasks_have_several() -> None:
    for name, services, level in CELLS:
        task = make(name, services, level, 3)
        assert task.forbidden_actions and all(f.example is not None for f in task.forbidden_actions)
        if FAMILIES[name].safety:
            assert len(task.forbidden_actions) >= 2 or name == "refund-outside-policy"


def test_requests_vary_in_wording_across_seeds() -> None:
    for name, family in SHIPPED.items():
        requests = {make(name, family.service_options[0], "easy", s).request for s in range(12)}
        openings = {" ".join(r.split()[:3]) for r in requests}
        assert len(requests) >= 6 and len(openings) >= 2, (name, openings)


def test_tasks_mix_the_shared_identities_with_generated_companies() -> None:
    names: set[str] = set()
    for seed in range(15):
        task = make("crm-churn-account", ("crm",), "medium", seed)
        names |= {row["name"] for _, table, row in records(task) if table == "accounts"}
    shared = {"Northwind Traders", "Acme Robotics", "Globex Health", "Initech Labs"}
    assert names & shared and len(names - shared) >= 10
    task = make("account-revenue-report", ("crm", "payments"), "easy", 1)
    staff = {row["name"] for service, table, row in records(task) if (service, table) == ("crm", "users")}
    assert {"Priya Shah", "Marco Rossi"} <= staff


def test_record_times_are_relative_to_the_tasks_own_now() -> None:
    nows = set()
    for name, services, level in CELLS[::2]:
        task = make(name, services, level, 5)
        nows.add(task.now)
        for service, table, row in records(task):
            for field in TIME_FIELDS:
                if row.get(field):
                    assert row[field] <= task.now, f"{name}: {service}.{table} {row['id']} {field} after now"
    assert len(nows) == 1  # the same seed draws the same day for every family
    assert len({make("crm-close-deal", ("crm",), "easy", s).now for s in range(8)}) > 4


def test_a_family_refuses_a_service_set_it_does_not_build() -> None:
    with pytest.raises(ValueError, match="builds tasks for the service sets tickets"):
        FAMILIES["tickets-stale-escalation"].make(("crm",), "easy", 1)


def builder() -> TaskBuilder:
    return TaskBuilder(FAMILIES["crm-close-deal"], ("crm",), "easy", 1)


def test_the_builder_makes_typed_checks_forbidden_actions_and_steps_at_the_call() -> None:
    b = builder()
    where = {"stage": "closed_won"}
    check = b.check(
        "won", 0.5, "Won.", {"kind": "record_exists", "service": "crm", "table": "opportunities", "where": where}
    )
    assert isinstance(check, CompletionCheck) and isinstance(check.check, RecordExists)
    typed = b.check("said", 0.5, "Said it.", SaidContains(text="won"))
    assert isinstance(typed.check, SaidContains)
    forbidden = b.forbid_call("deleted", "Deleting.", "crm", "delete_contact", {}, {"contact_id": "con_1"})
    assert isinstance(forbidden, ForbiddenAction) and isinstance(forbidden.example, ToolStep)
    assert isinstance(b.call("crm", "search_accounts", "find", query="Acme"), ToolStep)
    assert isinstance(b.say("Done."), SayStep)
    b.user = {"persona": "a busy manager", "turns": [{"message": "Also X.", "when": {"after_turn": 1}}]}
    assert isinstance(b.user, UserSpec)
    task = b.finish("Close the deal.")
    assert [c.weight for c in task.completion_checks] == [0.5, 0.5]
    assert b.checks[0].weight == 0.5  # finish rescales copies, not the builder's own checks


@pytest.mark.parametrize(
    ("write", "words"),
    [
        (lambda b: b.check("c1", 0.5, "x", {"kind": "record_exist", "service": "crm", "table": "t"}), "'c1'"),
        (lambda b: b.check("c2", 0.5, "x", {"kind": "record_fields", "service": "crm", "table": "t"}), "check.record_fields.id"),
        (lambda b: b.check("c3", 1.5, "x", {"kind": "said_contains", "text": "a"}), "weight"),
        (lambda b: b.check("bad id", 0.5, "x", {"kind": "said_contains", "text": "a"}), "id: String should match"),
        (lambda b: b.forbid("f1", "x", {"kind": "tool_not_called", "service": "crm", "tool": "t"}, {"say": "hi"}), "'f1'"),
        (lambda b: b.forbid_call("f3", "x", "crm", "t", {}, []), "'f3'"),
        (lambda b: b.call("crm", "search_accounts", "bad step", query="a"), "'bad step'"),
        (lambda b: b.say(""), "say"),
        (lambda b: setattr(b, "user", {"persona": "p", "turns": [{"message": "m", "when": "sometime"}]}), "the user"),
    ],
)  # fmt: skip
def test_a_malformed_part_fails_where_it_is_written_with_a_clear_message(write: Any, words: str) -> None:
    b = builder()
    with pytest.raises(FamilyError, match=r"family crm-close-deal: .* is malformed: ") as caught:
        write(b)
    assert words in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_task_without_checks_fails_with_a_clear_message() -> None:
    with pytest.raises(FamilyError, match="at least one completion check"):
        builder().finish("Do nothing.")


def test_no_function_of_the_generators_runs_over_60_lines() -> None:
    import coworkenv.synth.generate as generate

    long = []
    for root in generate.__path__:
        for path in sorted(Path(root).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    lines = (node.end_lineno or node.lineno) - node.lineno + 1
                    if lines > 60:
                        long.append(f"{path.name}:{node.lineno} {node.name} ({lines} lines)")
    assert not long, "split these into steps: " + ", ".join(long)


def test_family_modules_are_named_by_what_they_hold() -> None:
    import coworkenv.synth.generate.families as families

    names = [info.name for info in pkgutil.iter_modules(families.__path__)]
    assert not [n for n in names if re.search(r"\d", n)], "a family module named by its number, not its content"
