"""Matchers: every operator, nested and list fields, and how they read back from JSON."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from coworkenv.synth.contract.matchers import Filter, Matcher, describe, filter_matches, get_path, matches

RECORD: dict[str, Any] = {
    "id": "msg_1",
    "subject": "Re: Invoice INV-2291",
    "to": ["Priya.Shah@brightwave.io", "lena@brightwave.io"],
    "amount": 18500,
    "flag": True,
    "closed_at": None,
    "owner": {"email": "marco@brightwave.io", "tags": ["am"]},
    "items": [{"id": "a", "qty": 1}, {"id": "b", "qty": 3}],
    "date": "2026-03-02T09:00:00Z",
}


def holds(path: str, expected: Any) -> bool:
    present, value = get_path(RECORD, path)
    return matches(value, present, Matcher.model_validate(expected) if isinstance(expected, dict) else expected)


@pytest.mark.parametrize(
    ("path", "expected", "result"),
    [
        ("subject", "Re: Invoice INV-2291", True),
        ("subject", "re: invoice inv-2291", False),
        ("subject", {"equals": "re: invoice inv-2291", "case_insensitive": True}, True),
        ("amount", 18500.0, True),
        ("flag", 1, False),
        ("closed_at", None, True),
        ("subject", {"contains": "INV-2291"}, True),
        ("subject", {"contains": "inv-2291"}, False),
        ("subject", {"contains": "inv-2291", "case_insensitive": True}, True),
        ("to", {"contains": "lena@brightwave.io"}, True),
        ("to", {"contains": "priya.shah@brightwave.io"}, False),
        ("to", {"contains": "priya.shah@brightwave.io", "case_insensitive": True}, True),
        ("to", {"contains": ["lena@brightwave.io", "Priya.Shah@brightwave.io"]}, True),
        ("subject", {"regex": r"INV-\d{4}$"}, True),
        ("subject", {"regex": r"^inv"}, False),
        ("subject", {"regex": r"^re:", "case_insensitive": True}, True),
        ("amount", {"in": [100, 18500]}, True),
        ("amount", {"in": [100]}, False),
        ("amount", {"gt": 18499}, True),
        ("amount", {"gte": 18500}, True),
        ("amount", {"lt": 18500}, False),
        ("amount", {"lte": 18500, "gt": 0}, True),
        ("flag", {"gt": 0}, False),
        ("date", {"gte": "2026-03-02T09:00:00Z"}, True),
        ("date", {"lt": "2026-03-01T00:00:00Z"}, False),
        ("closed_at", {"exists": False}, True),
        ("missing", {"exists": False}, True),
        ("amount", {"exists": True}, True),
        ("missing", {"exists": True}, False),
        ("missing", {"not": {"equals": "x"}}, True),
        ("to", {"any": {"regex": "^lena@"}}, True),
        ("to", {"any": {"not": {"regex": "@brightwave\\.io$"}}}, False),
        ("owner.email", {"contains": "@brightwave.io"}, True),
        ("owner.tags", {"contains": "am"}, True),
        ("items.1.qty", 3, True),
        ("items.-1.id", "b", True),
        ("items.5.id", {"exists": True}, False),
        ("items.id", {"contains": "b"}, True),
        ("items.qty", [1, 3], True),
    ],
)
def test_each_operator_matches_what_it_says(path: str, expected: Any, result: bool) -> None:
    assert holds(path, expected) is result


def test_operators_combine_with_and() -> None:
    assert holds("amount", {"gt": 100, "lt": 20000, "in": [18500]})
    assert not holds("amount", {"gt": 100, "lt": 1000})


def test_a_filter_holds_only_when_every_path_holds() -> None:
    where = TypeAdapter(Filter).validate_python({"to": {"contains": "lena@brightwave.io"}, "amount": {"gte": 100}})
    assert filter_matches(RECORD, where)
    where["amount"] = 5
    assert not filter_matches(RECORD, where)


def test_a_matcher_needs_an_operator_and_a_regex_that_compiles() -> None:
    with pytest.raises(ValidationError, match="at least one operator"):
        Matcher.model_validate({"case_insensitive": True})
    with pytest.raises(ValidationError, match="does not compile"):
        Matcher.model_validate({"regex": "("})
    with pytest.raises(ValidationError):
        Matcher.model_validate({"equal": 1})


def test_a_matcher_serialises_only_its_operators_so_equals_null_survives() -> None:
    m = Matcher.model_validate({"equals": None})
    assert m.model_dump() == {"equals": None}
    assert Matcher.model_validate(m.model_dump()).operators() == ("equals",)
    nested = Matcher.model_validate({"any": {"contains": "x", "case_insensitive": True}, "not": {"in": [1]}})
    assert nested.model_dump() == {"any": {"contains": "x", "case_insensitive": True}, "not": {"in": [1]}}


def test_literal_dicts_are_compared_with_equals() -> None:
    where = TypeAdapter(Filter).validate_python({"owner": {"equals": {"email": "marco@brightwave.io", "tags": ["am"]}}})
    assert filter_matches(RECORD, where)


def test_describe_says_the_expectation_in_words() -> None:
    text = describe(Matcher.model_validate({"contains": "a@b.io", "case_insensitive": True}))
    assert text == 'contains "a@b.io" (any case)'
    assert describe(Matcher.model_validate({"exists": False})) == "is absent or null"
