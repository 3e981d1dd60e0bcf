"""The families of the calendar and files services and the cross-service work around them: each one, at each
level, makes tasks that pass the full validation (static, execution, adversaries, lint) with an alternative
solution scoring 1.0; the safety families' forbidden examples trip the safety gate; the default plan draws them
all; with them the project has 40 families over 8 services, 8 safety and 6 multi-turn ones at least."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from coworkenv.synth.contract.runner import Workbench, grade_trial, run_steps
from coworkenv.synth.contract.validation.validate import validate_task
from coworkenv.synth.generate.families import FAMILIES
from coworkenv.synth.generate.plan import coverage_plan, load_plan

NEW = (
    "calendar-invite-injection", "calendar-room-double-booked", "payout-sheet-unknown-bank",
    "shared-file-to-outside", "csv-report-to-chat", "chat-cfo-impersonation", "escalation-call-with-contacts",
    "share-final-version", "calendar-reschedule-after-change", "payouts-after-approval",
    "calendar-time-off-declines", "calendar-holiday-occurrence", "out-of-office-ticket-handover",
    "urgent-tickets-to-sheet", "invoice-sheet-reconcile", "invoice-emails-to-log", "offboard-customer",
    "agenda-update-after-edit", "contacts-sheet-sync", "meeting-request-from-email", "calendar-outside-guest-request",
)  # fmt: skip
LEVELS = ("easy", "medium", "hard")
CELLS = [(f, s, d) for f in NEW for s in FAMILIES[f].service_options for d in LEVELS]
SAFETY = [f for f in NEW if FAMILIES[f].safety]


def _multi_turn(name: str) -> bool:
    family = FAMILIES[name]
    task = family.make(family.service_options[0], "medium", 5)
    return task.user is not None and any(t.edits for t in task.user.turns)


def test_with_the_new_families_there_are_forty_over_eight_services() -> None:
    assert set(NEW) <= set(FAMILIES)
    assert len(FAMILIES) >= 40
    services = {s for f in FAMILIES.values() for o in f.service_options for s in o}
    assert services >= {"email", "tickets", "crm", "payments", "docs", "chat", "calendar", "files"}
    assert sum(f.safety for f in FAMILIES.values()) >= 8
    assert sum(_multi_turn(n) for n in FAMILIES) >= 6


def test_the_new_families_use_the_new_services_and_cross_them() -> None:
    options = [o for f in NEW for o in FAMILIES[f].service_options]
    assert sum("calendar" in o for o in options) >= 6 and sum("files" in o for o in options) >= 8
    assert sum(len(o) >= 2 for o in options) >= 12


def test_the_default_plan_draws_every_new_family() -> None:
    drawn = {c.scenario for c in coverage_plan(load_plan(), 1000, 0) if c.quota}
    assert set(NEW) <= drawn


@pytest.mark.parametrize(("name", "services", "level"), CELLS, ids=[f"{f}-{d}" for f, _, d in CELLS])
def test_a_new_family_task_passes_the_full_validation_and_its_alternatives_score_one(
    name: str, services: tuple[str, ...], level: Any
) -> None:
    async def main() -> None:
        task = FAMILIES[name].make(services, level, 31)
        report = await validate_task(task)
        assert report.valid, "\n".join(d.line() for d in report.errors)
        execution = report.execution
        assert execution is not None and execution.reference is not None and execution.noop is not None
        assert execution.reference.score == 1.0 and execution.noop.completion == 0.0
        assert task.alternative_solutions and execution.alternatives
        assert all(a == 1.0 for a in execution.alternatives)
        assert all(not a.passed for a in execution.adversaries if a.kind == "blind")

    anyio.run(main)


@pytest.mark.parametrize("name", SAFETY)
def test_a_safety_familys_forbidden_examples_trip_the_safety_gate(name: str) -> None:
    async def main() -> None:
        family = FAMILIES[name]
        task = family.make(family.service_options[0], "medium", 77)
        assert task.safety and task.forbidden_actions
        for action in task.forbidden_actions:
            bench = Workbench.of(task)
            trial = await run_steps(bench, [*task.reference_solution, action.example])
            g = grade_trial(bench, trial)
            assert g.safety == 0.0, f"{action.id} did not trip the gate"

    anyio.run(main)
