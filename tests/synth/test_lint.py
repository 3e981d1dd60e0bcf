"""The static lint: path checks, distractor guards too light to fail a task, entities no agent can reach, checks
that a message exists that do not read what it says."""

from __future__ import annotations

from typing import Any

from coworkenv.synth.contract.diagnostics import Diagnostic
from coworkenv.synth.contract.validation.lint import DISTRACTOR_SEVERITY
from coworkenv.synth.contract.validation.static import validate_static
from tests.synth.conftest import base_task

Json = dict[str, Any]


LINT = {"PATH_CHECK", "DISTRACTOR_CHECK_LIGHT", "UNREACHABLE_ENTITY", "MESSAGE_UNREAD"}


def found(task: Json, code: str) -> list[Diagnostic]:
    """The task's diagnostics of this code (the task must be otherwise valid, so that none is missed)."""
    diagnostics = validate_static(task)
    assert [d.line() for d in diagnostics if d.code not in LINT] == []
    return [d for d in diagnostics if d.code == code]


def set_check(task: Json, i: int, check: Json, weight: float | None = None, **extra: Any) -> None:
    task["completion_checks"][i]["check"] = check
    task["completion_checks"][i].update(extra)
    if weight is not None:
        task["completion_checks"][i]["weight"] = weight


def weights(task: Json, *values: float) -> None:
    for c, w in zip(task["completion_checks"], values, strict=True):
        c["weight"] = w


def add_check(task: Json, cid: str, check: Json) -> None:
    """Append a check, taking its weight (0.1) from the first one."""
    task["completion_checks"][0]["weight"] -= 0.1
    task["completion_checks"].append({"id": cid, "weight": 0.1, "description": cid, "check": check})


def comment_says(text: str) -> Json:
    return {"kind": "record_exists", "service": "tickets", "table": "comments", "where": {"body": {"contains": text}}}


# ---------------------------------------------------------------------------------------------- path checks
SEARCH = {"service": "tickets", "tool": "search_tickets", "arguments": {}}
SEARCHED = {**SEARCH, "kind": "tool_called"}


def test_a_check_on_a_read_only_tool_is_a_warning_unless_it_says_why() -> None:
    task = base_task()
    set_check(task, 1, SEARCHED)
    [d] = found(task, "PATH_CHECK")
    assert d.severity == "warning" and d.path == "$.completion_checks[1]" and d.check == "said_subject"
    assert "tickets.search_tickets" in d.message and "why" in d.fix
    task["completion_checks"][1]["why"] = "The user asked us to look before acting; the search is the point."
    assert found(task, "PATH_CHECK") == []


def test_a_check_on_what_a_mutating_tool_did_is_not_a_path_check() -> None:
    task = base_task()
    set_check(task, 1, {**SEARCHED, "tool": "escalate_ticket"})
    assert found(task, "PATH_CHECK") == []


def test_an_order_through_a_read_only_tool_or_a_count_of_its_calls_is_a_path_check() -> None:
    task = base_task()
    escalated = {"service": "tickets", "tool": "escalate_ticket"}
    set_check(task, 1, {"kind": "call_order", "first": SEARCH, "then": escalated})
    assert [d.check for d in found(task, "PATH_CHECK")] == ["said_subject"]
    set_check(task, 1, {**SEARCH, "kind": "call_count", "count": {"gte": 1}})
    assert [d.check for d in found(task, "PATH_CHECK")] == ["said_subject"]


def test_a_blank_why_does_not_count() -> None:
    task = base_task()
    set_check(task, 1, SEARCHED, why="  ")
    assert len(found(task, "PATH_CHECK")) == 1


# ---------------------------------------------------------------------------------------------- distractor checks
def test_a_distractor_check_too_light_to_fail_the_task_is_flagged() -> None:
    task = base_task()
    task["metadata"]["distractors"] = ["tkt_2"]
    [d] = found(task, "DISTRACTOR_CHECK_LIGHT")
    assert d.severity == DISTRACTOR_SEVERITY and d.path == "$.completion_checks[2].weight" and d.check == "left_small"
    assert "0.90" in d.message and "0.25" in d.fix


def test_a_distractor_check_heavy_enough_to_fail_the_task_is_not_flagged() -> None:
    task = base_task()
    task["metadata"]["distractors"] = ["tkt_2"]
    weights(task, 0.45, 0.25, 0.3)
    assert found(task, "DISTRACTOR_CHECK_LIGHT") == []


def test_the_checks_that_require_a_guard_fall_with_it() -> None:
    task = base_task()
    task["metadata"]["distractors"] = ["tkt_2"]
    weights(task, 0.55, 0.3, 0.15)
    task["completion_checks"][1]["requires"] = ["left_small"]
    assert found(task, "DISTRACTOR_CHECK_LIGHT") == []  # acting on tkt_2 loses 0.15 + 0.3: scores 0.55


def test_a_check_on_a_distractor_record_guards_it() -> None:
    task = base_task()
    task["metadata"]["distractors"] = ["tkt_2"]
    weights(task, 0.45, 0.25, 0.3)
    add_check(task, "small_not_escalated", {**_fields("tkt_2"), "fields": {"escalated": False}})
    assert [d.check for d in found(task, "DISTRACTOR_CHECK_LIGHT")] == ["small_not_escalated"]


def test_a_guard_backed_by_a_forbidden_action_is_not_flagged() -> None:
    task = base_task()
    task["metadata"]["distractors"] = ["tkt_2"]
    weights(task, 0.45, 0.25, 0.3)
    call = {"service": "tickets", "tool": "escalate_ticket", "arguments": {"ticket_id": "tkt_2"}}
    add_check(task, "small_left_alone", {**call, "kind": "tool_not_called"})
    assert [d.check for d in found(task, "DISTRACTOR_CHECK_LIGHT")] == ["small_left_alone"]
    task["forbidden_actions"].append(
        {
            "id": "escalated_small",
            "description": "Escalating the starter customer's ticket.",
            "match": {**call, "kind": "tool_called", "outcome": "any"},
            "example": {**call, "arguments": {"ticket_id": "tkt_2", "reason": "x"}},
        }
    )
    assert found(task, "DISTRACTOR_CHECK_LIGHT") == []


def test_weights_that_do_not_sum_to_one_are_reported_alone() -> None:
    task = base_task()
    task["metadata"]["distractors"] = ["tkt_2"]
    task["completion_checks"][0]["weight"] = 0.9
    assert [d.code for d in validate_static(task)] == ["WEIGHTS_SUM"]


def test_a_task_that_lists_no_distractors_has_no_distractor_checks() -> None:
    assert found(base_task(), "DISTRACTOR_CHECK_LIGHT") == []


def _fields(record_id: str) -> Json:
    return {"kind": "record_fields", "service": "tickets", "table": "tickets", "id": record_id}


# ---------------------------------------------------------------------------------------------- reachable entities
def test_an_address_no_seed_record_or_request_names_is_unreachable() -> None:
    task = base_task()
    add_check(task, "told_finance", comment_says("finance@brightwave.io"))
    [d] = found(task, "UNREACHABLE_ENTITY")
    assert d.severity == "error" and d.check == "told_finance"
    assert d.path == "$.completion_checks[3].check.where.body" and "'finance@brightwave.io'" in d.message


def test_an_address_the_request_names_is_reachable() -> None:
    task = base_task()
    add_check(task, "told_finance", comment_says("finance@brightwave.io"))
    task["request"] += " Copy finance@brightwave.io on the reply."
    assert found(task, "UNREACHABLE_ENTITY") == []


def test_an_id_found_by_one_lookup_is_reachable() -> None:
    task = base_task()
    add_check(task, "names_requester", {"kind": "said_contains", "text": "ann@big.com"})
    add_check(task, "names_ticket", {"kind": "said_value", "value": "tkt_2"})
    assert found(task, "UNREACHABLE_ENTITY") == []
    task["completion_checks"][-1]["check"]["value"] = "tkt_9"
    [d] = found(task, "UNREACHABLE_ENTITY")
    assert d.path == "$.completion_checks[4].check.value" and "'tkt_9'" in d.message


def test_part_of_a_seed_value_is_not_reachable() -> None:
    task = base_task()
    add_check(task, "told_ann", comment_says("ann@big.co"))
    assert [d.check for d in found(task, "UNREACHABLE_ENTITY")] == ["told_ann"]


def test_what_the_user_says_later_is_reachable() -> None:
    task = base_task()
    add_check(task, "told_finance", comment_says("finance@brightwave.io"))
    task["user"] = {"held_back": ["Finance is finance@brightwave.io."]}
    assert found(task, "UNREACHABLE_ENTITY") == []
    task["user"] = {"turns": [{"message": "Oh, and copy finance@brightwave.io."}]}
    assert found(task, "UNREACHABLE_ENTITY") == []


def test_ids_in_a_pattern_and_phone_numbers_are_entities() -> None:
    task = base_task()
    add_check(task, "names_it", {"kind": "said_matches", "pattern": "tkt_77|outage"})
    add_check(task, "phone", comment_says("+1 415 555 0100"))
    assert sorted(d.check or "" for d in found(task, "UNREACHABLE_ENTITY")) == ["names_it", "phone"]


def test_numbers_and_words_are_not_entities_nor_what_a_negative_check_rules_out() -> None:
    task = base_task()
    add_check(task, "total", {"kind": "said_value", "value": 1234567, "cents": True})
    add_check(task, "words", {"kind": "said_value", "value": "12,500.00 in total"})
    add_check(task, "nobody", {**comment_says("evil@elsewhere.com"), "kind": "record_absent"})
    assert found(task, "UNREACHABLE_ENTITY") == []


COMMENT = {"kind": "record_exists", "service": "tickets", "table": "comments", "where": {"ticket_id": "tkt_1"}}


def test_a_check_that_a_comment_exists_without_reading_it_is_a_warning_unless_it_says_why() -> None:
    task = base_task()
    add_check(task, "noted", COMMENT)
    [d] = found(task, "MESSAGE_UNREAD")
    assert d.severity == "warning" and d.check == "noted" and '"Hi."' in d.message and "body" in d.fix
    task["completion_checks"][-1]["why"] = "Any note will do: the customer never reads it."
    assert found(task, "MESSAGE_UNREAD") == []


def test_a_check_that_reads_what_a_message_says_is_not_flagged() -> None:
    task = base_task()
    add_check(task, "noted", {**COMMENT, "where": {"ticket_id": "tkt_1", "body": {"regex": "outage|down"}}})
    assert found(task, "MESSAGE_UNREAD") == []


def test_every_field_of_a_path_joined_by_a_bar_must_exist() -> None:
    task = base_task()
    add_check(task, "noted", {**COMMENT, "where": {"ticket_id": "tkt_1", "subject|body": {"regex": "outage"}}})
    [d] = [d for d in validate_static(task) if d.code == "FIELD_UNKNOWN"]
    assert "subject|body" in d.path and "has no field" in d.message


def test_a_check_that_no_such_message_exists_says_nothing_and_is_not_flagged() -> None:
    task = base_task()
    add_check(task, "no_note", {**COMMENT, "kind": "record_count", "count": 0})
    assert found(task, "MESSAGE_UNREAD") == []
