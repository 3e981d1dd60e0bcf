"""Bounded regular expressions: patterns that could stall grading are rejected when the task loads, with
how to rewrite them; the patterns tasks really use are accepted and stay fast on replies built to be slow."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from pydantic import ValidationError

from coworkenv.synth.contract.matchers import Matcher
from coworkenv.synth.contract.regex_bounds import MAX_PATTERN, PatternError, check_pattern, pattern_problem
from coworkenv.synth.contract.said import REPLY_CAP
from coworkenv.synth.contract.task import Task
from tests.synth.conftest import base_task


def task_checking(check: dict[str, Any]) -> Task:
    data = base_task()
    data["completion_checks"] = [{"id": "c", "weight": 1.0, "description": "x", "check": check}]
    return Task.model_validate(data)


def test_a_catastrophic_pattern_is_rejected_when_the_task_loads() -> None:
    with pytest.raises(ValidationError, match="backtracks exponentially"):
        task_checking({"kind": "said_matches", "pattern": "(a+)+$"})


def test_a_catastrophic_matcher_regex_is_rejected_when_the_task_loads() -> None:
    where = {"subject": {"regex": "(.*)*x"}}
    with pytest.raises(ValidationError, match="regex: pattern"):
        task_checking({"kind": "record_exists", "service": "tickets", "table": "tickets", "where": where})
    with pytest.raises(ValidationError):
        Matcher.model_validate({"regex": "(\\w+)*"})


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("(a+)+", "repeat one level only"),
        ("(.+)*", "repeat one level only"),
        ("(.*)*", "can already match nothing"),
        ("(\\s*\\w+)+", "close each inner repeat"),
        ("(.*a){20}", "repeat one level only"),
        ("(a|a)*", "alternatives"),
        ("(a|ab)*", "alternatives"),
        ("(ab|\\wb)+", "alternatives"),
        ("(?:\\s*)?", "can already match nothing"),
        ("(?=.*x)", "anchor the pattern at the start"),
        ("(?s)(?=.*(?:Acme|Ann))(?=.*(?:Big|Bob)).*\\?", "anchor the pattern at the start"),
        ("(?m)^(?=[\\s\\S]*x)", "lookaround"),
        ("^x+(?=.*y)", "lookaround"),
        ("(a)\\1", "backreferences"),
        ("(?P<x>a)(?P=x)", "backreferences"),
        (".*a.*b", "bound the others"),
        ("\\w+\\s*\\w+x", "bound the others"),
        ("refund.*\\s*total", "bound the others"),
        ("(", "does not compile"),
        ("a" * (MAX_PATTERN + 1), "at most 500"),
    ],
)
def test_a_pattern_that_could_stall_grading_is_rejected_with_how_to_rewrite_it(pattern: str, why: str) -> None:
    with pytest.raises(PatternError, match=re.escape(why)):
        check_pattern(pattern)


ACCEPTED = [
    "invoice",
    "correct VAT",
    r"ending \d{4}",
    r"(?:\w+\s)+x",
    r"(?:yes|no)+",
    r"(?:\d{3},)*\d{3}",
    r"refunds?.*total",
    r"refund.*\$\d+ total",
    r"refund.{0,60}total.{0,60}\$",
    r"\w+ \w+",
    r"total:?\s*\$?[\d,.]+",
    r"(?i)\b(?:invoice|bill)\b",
    r"@brightwave\.io>?$",
    r"(?s).*\?",
    r"(?s)^(?=.*(?:Acme|Ann))(?=.*(?:Big|Bob)).*\?",
    r"^(?=[\s\S]*## Summary[^#]*?12,?100)(?=[\s\S]*## Budget[\s\S]*12,?100)",
    r"^(?![\s\S]*9,?900)[\s\S]*- Total requested: ",
    r"^Fwd: .*renewal",
]


@pytest.mark.parametrize("pattern", ACCEPTED)
def test_the_patterns_tasks_use_are_accepted(pattern: str) -> None:
    assert pattern_problem(pattern) is None


SLOW_TEXTS = ["a" * REPLY_CAP, "ab " * (REPLY_CAP // 3), "## Summary 12,100 " * 222 + "## Budget x " * 100]


@pytest.mark.parametrize("pattern", ACCEPTED)
def test_an_accepted_pattern_stays_fast_on_a_reply_built_to_be_slow(pattern: str) -> None:
    start = time.perf_counter()
    for text in SLOW_TEXTS:
        re.search(pattern + "(?!)", text, re.IGNORECASE)  # (?!) never matches: every way is tried
    assert time.perf_counter() - start < 3.0
