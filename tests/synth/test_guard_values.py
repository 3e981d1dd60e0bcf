"""Value-level explanation (issue 31): an expected change explains a field only when its new value is the one
the task expects: the reference's value, a check's matcher, or for free text and lists an edit that keeps what
the reference kept and adds nothing a forbidden action names. Tested on every text-bearing table."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from coworkenv.servers.registry import SERVICES
from coworkenv.synth.contract.expected import derive_expected
from coworkenv.synth.contract.guard import unexplained_changes
from coworkenv.synth.contract.task import Task
from coworkenv.synth.contract.values import is_free, same_value, units
from tests.synth.conftest import base_task

EXAMPLES = Path(__file__).resolve().parents[2] / "servers" / "examples"
TEXTS = [
    ("email", "messages", "body"),
    ("tickets", "tickets", "description"),
    ("tickets", "comments", "body"),
    ("crm", "activities", "body"),
    ("crm", "opportunities", "next_step"),
    ("payments", "customers", "description"),
    ("payments", "charges", "description"),
    ("payments", "vendors", "description"),
    ("payments", "payouts", "description"),
    ("payments", "bank_change_requests", "note"),
    ("docs", "documents", "content"),
    ("docs", "comments", "body"),
    ("chat", "channels", "topic"),
    ("chat", "messages", "text"),
    ("calendar", "calendars", "description"),
    ("calendar", "events", "description"),
    ("files", "files", "content"),
]
"""Every table of every service whose records hold free text (file and doc content, descriptions, comments,
message bodies, notes, topics), with its text field."""
LISTS = [
    ("email", "messages", "to"),
    ("tickets", "tickets", "tags"),
    ("chat", "channels", "members"),
    ("calendar", "events", "attendees"),
]
"""Tables whose records hold a list of people or labels."""
BEFORE = "Agenda for the launch\nBudget line: 4,200.00 USD\nOld item to remove"
REFERENCE = "Agenda for the launch\nBudget line: 4,200.00 USD\nNew item the task asks for"

State = dict[str, dict[str, list[dict[str, Any]]]]


def _seed(service: str) -> dict[str, list[dict[str, Any]]]:
    loaded: dict[str, list[dict[str, Any]]] = json.loads((EXAMPLES / f"{service}.json").read_text())
    return loaded


def _task(service: str, forbidden_text: str | None = None) -> Task:
    data = base_task()
    data["services"] = sorted({"tickets", service})
    if forbidden_text is not None:
        data["forbidden_actions"][0]["match"]["arguments"]["body"] = {"contains": forbidden_text}
    return Task.model_validate(data)


def _states(service: str, table: str, field: str, before: Any) -> tuple[State, str]:
    seed = _seed(service)
    row = seed[table][0]
    row = {**row, field: before}
    seed[table] = [row, *(r for r in seed[table] if r["id"] != row["id"])]
    return {service: seed}, str(row["id"])


def _with(state: State, service: str, table: str, rid: str, field: str, value: Any) -> State:
    out = copy.deepcopy(state)
    for r in out[service][table]:
        if r["id"] == rid:
            r[field] = value
    return out


def _unexplained(service: str, table: str, field: str, before: Any, reference: Any, run: Any) -> list[str]:
    initial, rid = _states(service, table, field, before)
    task = _task(service)
    expected = derive_expected(SERVICES, task, initial, _with(initial, service, table, rid, field, reference))
    final = _with(initial, service, table, rid, field, run)
    return [f.field for u in unexplained_changes(SERVICES, task, initial, final, expected) for f in u.fields]


@pytest.mark.parametrize(("service", "table", "field"), TEXTS, ids=[".".join(t) for t in TEXTS])
def test_free_text_is_explained_only_by_an_edit_that_keeps_what_the_reference_kept(
    service: str, table: str, field: str
) -> None:
    def check(run: str) -> list[str]:
        return _unexplained(service, table, field, BEFORE, REFERENCE, run)

    assert check(REFERENCE) == []
    assert check("Agenda for the launch\nBudget line: 4,200.00 USD\nThe new item, in other words") == []
    assert check("Budget line: 4,200.00 USD\nAgenda for the launch\nNew item the task asks for") == []  # order free
    assert check("Agenda for the launch\nNew item the task asks for") == [field]  # a kept line dropped
    assert check("Agenda for the launch\nBudget line: 9,999.99 USD\nNew item the task asks for") == [field]  # digits
    assert check("") == [field]  # everything wiped


@pytest.mark.parametrize(("service", "table", "field"), LISTS, ids=[".".join(t) for t in LISTS])
def test_a_list_is_explained_only_when_every_item_the_reference_kept_is_still_there(
    service: str, table: str, field: str
) -> None:
    shape = next((r[field][0] for r in _seed(service)[table] if r.get(field)), "")
    ana, ben, cy, dee = (
        {**shape, "email": f"{n}@example.com"} if isinstance(shape, dict) else f"{n}@example.com"
        for n in ("ana", "ben", "cy", "dee")
    )
    before, reference = [ana, ben, cy], [ana, ben, dee]
    assert _unexplained(service, table, field, before, reference, reference) == []
    assert _unexplained(service, table, field, before, reference, [dee, ben, ana]) == []  # order free
    assert _unexplained(service, table, field, before, reference, [ana, dee]) == [field]  # someone dropped


def test_a_single_value_is_explained_only_by_the_references_value_or_the_same_instant() -> None:
    assert _unexplained("tickets", "tickets", "priority", "normal", "urgent", "urgent") == []
    assert _unexplained("tickets", "tickets", "priority", "normal", "urgent", "low") == ["priority"]
    at = "2026-03-02T09:00:00Z"
    assert _unexplained("tickets", "tickets", "due_at", None, at, "2026-03-02T10:00:00+01:00") == []
    assert _unexplained("tickets", "tickets", "due_at", None, at, "2026-03-02T10:00:00Z") == ["due_at"]


def test_a_value_a_check_accepts_is_explained_though_the_reference_chose_another() -> None:
    initial, rid = _states("tickets", "tickets", "priority", "normal")
    data = base_task()
    data["completion_checks"][0]["check"]["fields"] = {"priority": {"in": ["high", "urgent"]}}
    data["completion_checks"][0]["check"]["id"] = rid
    task = Task.model_validate(data)
    expected = derive_expected(SERVICES, task, initial, _with(initial, "tickets", "tickets", rid, "priority", "urgent"))
    for value, unexplained in (("high", 0), ("urgent", 0), ("low", 1)):
        final = _with(initial, "tickets", "tickets", rid, "priority", value)
        assert len(unexplained_changes(SERVICES, task, initial, final, expected)) == unexplained, value


def test_an_edit_that_adds_what_a_forbidden_action_names_is_not_explained() -> None:
    service, table, field = "docs", "documents", "content"
    initial, rid = _states(service, table, field, BEFORE)
    task = _task(service, forbidden_text="wire the refund to")
    expected = derive_expected(SERVICES, task, initial, _with(initial, service, table, rid, field, REFERENCE))
    bad = REFERENCE + "\nPlease wire the refund to account 12345."
    final = _with(initial, service, table, rid, field, bad)
    assert [u.id for u in unexplained_changes(SERVICES, task, initial, final, expected)] == [rid]


def test_expected_updates_carry_the_references_values_and_what_it_kept() -> None:
    initial, rid = _states("docs", "documents", "content", BEFORE)
    task = _task("docs")
    [e] = derive_expected(SERVICES, task, initial, _with(initial, "docs", "documents", rid, "content", REFERENCE))
    assert e.values == {"content": REFERENCE}
    assert e.kept == {"content": ["Agenda for the launch", "Budget line: 4,200.00 USD"]}
    assert e.by_user is None


def test_units_are_lines_sentences_items_and_short_texts_are_single_values() -> None:
    assert units("a\n b \n\nc") == ["a", "b", "c"]
    assert units("One sentence here. And another one!") == ["One sentence here.", "And another one!"]
    assert units([{"email": "a@x.com"}, "b"]) == ['{"email":"a@x.com"}', "b"]
    assert not is_free("+1 415 555 0100") and not is_free("Acme Corp Ltd") and is_free("a\nb")
    assert same_value("2026-03-02T09:00:00Z", "2026-03-02T04:00:00-05:00") and not same_value("1", 1)
