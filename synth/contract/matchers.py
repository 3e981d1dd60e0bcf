"""Matchers: how a check says what a field must hold, and the one place they are evaluated.

A filter maps a field path to an expectation. A plain value means "equals"; an object is a
:class:`Matcher` whose operators must all hold::

    {"status": "open", "to": {"contains": "am@brightwave.io"}, "amount": {"gte": 10000},
     "owner.email": {"regex": "@brightwave\\.io$"}, "closed_at": {"exists": false}}

Paths are dotted: ``owner.email`` reads a nested object, ``items.0.id`` indexes a list, and a name
applied to a list (``items.id``) gathers that field from every element. Nothing here runs code from a
task: regular expressions are the only "language", they only match text, and they are checked when the task
loads so that none can backtrack badly (:mod:`coworkenv.synth.contract.regex_bounds`).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator

from coworkenv.servers.kit.text import regex
from coworkenv.synth.contract.regex_bounds import pattern_problem

OPERATORS = ("equals", "contains", "regex", "in", "gt", "gte", "lt", "lte", "exists", "any", "not")
_MISSING = object()
_ACCEPTED_KEYS = frozenset({*OPERATORS, "case_insensitive", "in_", "not_"})


def unknown_operator_message(key: object) -> str:
    """``unknown matcher operator 'contians' (did you mean 'contains'?); the operators are: …``."""
    shown = str(key) if len(str(key)) <= 60 else str(key)[:59] + "…"
    close = difflib.get_close_matches(str(key), [*OPERATORS, "case_insensitive"], n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return (
        f"unknown matcher operator {shown!r}{hint}; the operators are: {', '.join(OPERATORS)} "
        "(plus case_insensitive: true)"
    )


class Matcher(BaseModel):
    """What a value must satisfy; every operator given must hold (they combine with AND)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    equals: Any = Field(default=None, description="Equal to this value (JSON equality; 1 == 1.0, true != 1).")
    contains: Any = Field(
        default=None, description="Text: has this substring. List: has this element (a list: has all of them)."
    )
    regex: str | None = Field(
        default=None,
        description="Text where this regular expression matches (search). Checked when the task loads: no "
        "nested repeats, backreferences or unbounded lookarounds, at most 500 characters (synth/regex_bounds.py).",
    )
    in_: list[Any] | None = Field(default=None, alias="in", description="One of these values.")
    gt: float | str | None = Field(default=None, description="Greater than (numbers; or ISO times compared as text).")
    gte: float | str | None = Field(default=None, description="Greater than or equal.")
    lt: float | str | None = Field(default=None, description="Less than.")
    lte: float | str | None = Field(default=None, description="Less than or equal.")
    exists: bool | None = Field(default=None, description="true: present and not null; false: absent or null.")
    any: Matcher | None = Field(default=None, description="A list with at least one element matching this.")
    not_: Matcher | None = Field(default=None, alias="not", description="Does not match this.")
    case_insensitive: bool = Field(
        default=False, description="Compare text ignoring case (equals, contains, regex, in)."
    )

    @model_validator(mode="before")
    @classmethod
    def _known_operators(cls, data: Any) -> Any:
        """An unknown key is named in plain words, with the closest operator and the list of them all."""
        if isinstance(data, Mapping):
            for key in data:
                if key not in _ACCEPTED_KEYS:
                    raise ValueError(unknown_operator_message(key))
        return data

    @model_validator(mode="after")
    def _one_operator(self) -> Matcher:
        if not self.operators():
            raise ValueError(f"a matcher needs at least one operator of: {', '.join(OPERATORS)}")
        if self.regex is not None:
            problem = pattern_problem(self.regex)
            if problem is not None:
                raise ValueError(f"regex: {problem}")
        return self

    @model_serializer(mode="plain")
    def _only_operators(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for op in self.operators():
            value = _op_value(self, op)
            out[op] = value.model_dump() if isinstance(value, Matcher) else value
        if self.case_insensitive:
            out["case_insensitive"] = True
        return out

    def operators(self) -> tuple[str, ...]:
        """The operators this matcher uses, in a fixed order."""
        return self._operators

    @cached_property
    def _operators(self) -> tuple[str, ...]:
        given = self.model_fields_set
        return tuple(
            op for op in OPERATORS if _field_name(op) in given and (op == "equals" or _op_value(self, op) is not None)
        )


FieldValue = Matcher | str | int | float | bool | None | list[Any]
"""A literal (meaning "equals") or a :class:`Matcher`."""

Filter = dict[str, FieldValue]
"""Field path → expectation; a record (or argument object) matches when every entry holds."""


def _field_name(op: str) -> str:
    return {"in": "in_", "not": "not_"}.get(op, op)


def _op_value(m: Matcher, op: str) -> Any:
    return getattr(m, _field_name(op))


def as_matcher(expected: Any) -> Matcher:
    """A matcher from a filter value: a Matcher, an operator object, or a literal (meaning equals)."""
    if isinstance(expected, Matcher):
        return expected
    if isinstance(expected, Mapping) and expected and set(expected) <= {*OPERATORS, "case_insensitive"}:
        return Matcher.model_validate(expected)
    return Matcher(equals=expected)


# ---------------------------------------------------------------------------------------------- paths
def get_path(obj: Any, path: str) -> tuple[bool, Any]:
    """Read a dotted path; returns (present, value). A name applied to a list gathers from each element.

    Paths joined by ``|`` (``"subject|body"``) read the text of each present one, a line each: a regex on
    it holds when any of those fields says it (where what is said may go in either, e.g. an activity's summary
    or its details)."""
    if "|" in path:
        found = [value for present, value in (get_path(obj, p) for p in path.split("|")) if present]
        if not found:
            return False, None
        return True, "\n".join("" if v is None else v if isinstance(v, str) else json.dumps(v) for v in found)
    if path == "":
        return True, obj
    current: Any = obj
    for part in path.split("."):
        if isinstance(current, Mapping):
            if part not in current:
                return False, None
            current = current[part]
        elif isinstance(current, list):
            if part.lstrip("-").isdigit():
                index = int(part)
                if not -len(current) <= index < len(current):
                    return False, None
                current = current[index]
            else:
                gathered = [get_path(item, part) for item in current]
                current = [value for present, value in gathered if present]
        else:
            return False, None
    return True, current


# ---------------------------------------------------------------------------------------------- matching
def _fold(value: Any, ci: bool) -> Any:
    return value.casefold() if ci and isinstance(value, str) else value


def values_equal(a: Any, b: Any, ci: bool = False) -> bool:
    """JSON equality: booleans are not numbers, 1 equals 1.0, text optionally ignoring case."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(values_equal(x, y, ci) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(values_equal(a[k], b[k], ci) for k in a)
    return bool(_fold(a, ci) == _fold(b, ci))


def _contains(actual: Any, needle: Any, ci: bool) -> bool:
    if isinstance(actual, str):
        if isinstance(needle, list):
            return all(_contains(actual, n, ci) for n in needle)
        return str(_fold(needle, ci)) in str(_fold(actual, ci)) if isinstance(needle, str | int | float) else False
    if isinstance(actual, list):
        needles = needle if isinstance(needle, list) else [needle]
        return all(any(values_equal(item, n, ci) for item in actual) for n in needles)
    if isinstance(actual, Mapping):
        return isinstance(needle, str) and needle in actual
    return False


def _compare(actual: Any, bound: float | str, op: str) -> bool:
    if isinstance(actual, bool):
        return False
    if isinstance(bound, str):
        if not isinstance(actual, str):
            return False
        a, b = actual, bound
        return {"gt": a > b, "gte": a >= b, "lt": a < b, "lte": a <= b}[op]
    if not isinstance(actual, int | float):
        return False
    x, y = float(actual), float(bound)
    return {"gt": x > y, "gte": x >= y, "lt": x < y, "lte": x <= y}[op]


def matches(actual: Any, present: bool, expected: FieldValue) -> bool:
    """Does a value (``present`` False when the field is missing) satisfy the expectation?"""
    if not isinstance(expected, Matcher | Mapping):  # a literal: equals
        return present and values_equal(actual, expected)
    m = as_matcher(expected)
    ci = m.case_insensitive
    for op in m.operators():
        want = _op_value(m, op)
        if op == "exists":
            ok = (present and actual is not None) == want
        elif op == "not":
            ok = not matches(actual, present, want)
        elif not present:
            ok = False
        elif op == "equals":
            ok = values_equal(actual, want, ci)
        elif op == "contains":
            ok = _contains(actual, want, ci)
        elif op == "regex":
            flags = re.IGNORECASE if ci else 0
            ok = isinstance(actual, str | int | float) and regex(want, flags).search(str(actual)) is not None
        elif op == "in":
            ok = any(values_equal(actual, option, ci) for option in want)
        elif op == "any":
            ok = isinstance(actual, list) and any(matches(item, True, want) for item in actual)
        else:
            ok = _compare(actual, want, op)
        if not ok:
            return False
    return True


def filter_matches(obj: Any, where: Mapping[str, FieldValue]) -> bool:
    """True when every path of the filter holds on ``obj``."""
    for path, expected in where.items():
        present, value = get_path(obj, path)
        if not matches(value, present, expected):
            return False
    return True


def failing_paths(obj: Any, where: Mapping[str, FieldValue]) -> list[str]:
    """The paths of a filter that do not hold on ``obj`` (for explanations)."""
    out = []
    for path, expected in where.items():
        present, value = get_path(obj, path)
        if not matches(value, present, expected):
            out.append(path)
    return out


# ---------------------------------------------------------------------------------------------- describing
_SHORT = json.JSONEncoder(ensure_ascii=False, sort_keys=True, default=str).encode
"""``json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)`` with one encoder made once."""


def short(value: Any, limit: int = 120) -> str:
    text = _SHORT(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe(expected: FieldValue) -> str:
    """A matcher in words: ``contains "x" (any case) and exists``."""
    m = as_matcher(expected)
    parts = []
    for op in m.operators():
        want = _op_value(m, op)
        if op in ("any", "not"):
            parts.append(f"{'some element' if op == 'any' else 'not'} ({describe(want)})")
        elif op == "exists":
            parts.append("is present" if want else "is absent or null")
        else:
            parts.append(f"{op} {short(want)}")
    text = " and ".join(parts)
    return text + (" (any case)" if m.case_insensitive else "")


def describe_filter(where: Mapping[str, FieldValue]) -> str:
    if not where:
        return "any record"
    return ", ".join(f"{path} {describe(expected)}" for path, expected in where.items())
