"""De-duplication: near-identical tasks (same normalised request prefix and record fingerprint) are dropped."""

from __future__ import annotations

from typing import Any

from coworkenv.synth.contract.task import Task
from coworkenv.synth.generate.dedup import Deduplicator, deduplicate, normalise_request, record_fingerprint
from tests.synth.conftest import base_task


def task(edit: Any = None, task_id: str = "t-1") -> Task:
    doc = base_task()
    doc["id"] = task_id
    if edit is not None:
        edit(doc)
    return Task.model_validate(doc)


def test_normalising_a_request_ignores_case_punctuation_and_everything_after_the_prefix() -> None:
    assert normalise_request("Please, ESCALATE the old ticket!") == "please escalate the old ticket"
    long = "one two three four five six seven eight nine ten eleven twelve thirteen"
    assert normalise_request(long) == normalise_request(long.replace("thirteen", "fourteen"))
    assert normalise_request(long, words=3) == "one two three"


def test_a_copy_of_a_task_is_a_duplicate_and_is_dropped_and_counted() -> None:
    d = Deduplicator()
    assert d.admit(task())
    assert not d.admit(task(task_id="t-2"))
    assert d.duplicates == 1 and d.dropped == [("t-2", "t-1")]


def test_other_ids_other_times_and_another_record_order_still_make_a_duplicate() -> None:
    def shuffle(doc: dict[str, Any]) -> None:
        seed = doc["initial_records"]["tickets"]
        seed["tickets"].reverse()
        for row in seed["tickets"]:
            row["created_at"] = row["updated_at"] = "2026-01-01T00:00:00Z"
        seed["organizations"][0]["id"] = "org_huge"
        doc["request"] = doc["request"].upper() + "  "

    assert record_fingerprint(task()) == record_fingerprint(task(shuffle))
    assert Deduplicator().duplicate_of(task(shuffle)) is None
    d = Deduplicator()
    d.admit(task())
    assert d.duplicate_of(task(shuffle)) == "t-1"


def test_a_different_request_is_not_a_duplicate() -> None:
    def reword(doc: dict[str, Any]) -> None:
        doc["request"] = "Tell me which ticket from our enterprise customer is the oldest, then escalate it."

    kept, dropped = deduplicate([task(), task(reword, "t-2")])
    assert [t.id for t in kept] == ["t-1", "t-2"] and dropped == []


def test_different_records_are_not_a_duplicate() -> None:
    def other_subject(doc: dict[str, Any]) -> None:
        doc["initial_records"]["tickets"]["tickets"][0]["subject"] = "Outage at Big, again"

    assert record_fingerprint(task()) != record_fingerprint(task(other_subject))
    kept, dropped = deduplicate([task(), task(other_subject, "t-2"), task(task_id="t-3")])
    assert [t.id for t in kept] == ["t-1", "t-2"] and dropped == [("t-3", "t-1")]
