"""Static checks about identifiers: the records a task points at exist; the request does not give away
what the agent must find; no call is both required and forbidden."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from coworkenv.servers.kit import Service
from coworkenv.synth.contract.amounts import numbers_in
from coworkenv.synth.contract.checks import (
    AnyCheck,
    CallCount,
    CallMatch,
    CallOrder,
    RecordFields,
    RecordsUnchanged,
    SaidChoice,
    SaidContains,
    SaidValue,
    ToolCalled,
)
from coworkenv.synth.contract.diagnostics import Diagnostic, json_path
from coworkenv.synth.contract.matchers import Filter, as_matcher, matches, values_equal
from coworkenv.synth.contract.said import normalise_text
from coworkenv.synth.contract.task import Task, ToolStep, is_ref

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


@dataclass
class SeedIndex:
    """Ids per service and table, id prefixes per service, and every value the seed holds."""

    ids: dict[str, dict[str, set[str]]] = field(default_factory=dict)
    prefixes: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    all_ids: set[str] = field(default_factory=set)
    text: str = ""
    numbers: set[float] = field(default_factory=set)

    @classmethod
    def build(cls, task: Task, services: Mapping[str, Service]) -> SeedIndex:
        index = cls()
        texts: list[str] = []
        for name, service in services.items():
            index.prefixes[name] = {}
            for table in service.tables:
                index.prefixes[name].setdefault(table.id_prefix, []).append(table.name)
            seed = task.seed(name)
            index.ids[name] = {
                t: {str(r.get("id")) for r in rows if isinstance(r, Mapping)} for t, rows in seed.items()
            }
            index.all_ids |= {i for ids in index.ids[name].values() for i in ids}
            for value in _leaves(seed):
                if isinstance(value, str):
                    texts.append(value.casefold())
                elif isinstance(value, int | float) and not isinstance(value, bool):
                    index.numbers.add(float(value))
        index.text = "\n".join(texts)
        return index

    def tables_for(self, service: str, value: str) -> list[str]:
        """The tables of a service whose id prefix the value carries."""
        return [
            t for prefix, tables in self.prefixes.get(service, {}).items() if value.startswith(prefix) for t in tables
        ]

    def has_id(self, service: str, tables: list[str], value: str) -> bool:
        return any(value in self.ids.get(service, {}).get(t, set()) for t in tables)


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _leaves(value: Any) -> list[Any]:
    """Every value inside mappings and lists, in document order (walked without recursion: seeds are big)."""
    out: list[Any] = []
    stack = [value]
    while stack:
        v = stack.pop()
        t = type(v)
        if t in _SCALARS:  # most values: no isinstance walk
            out.append(v)
        elif t is dict or (t is not list and isinstance(v, Mapping)):
            stack.extend(reversed(list(v.values())))
        elif t is list or isinstance(v, list):
            stack.extend(reversed(v))
        else:
            out.append(v)
    return out


def check_identifiers(task: Task, index: SeedIndex) -> list[Diagnostic]:
    """Records the checks and steps point at exist; the request leaks no answer; no call both required and
    forbidden (``index``: the task's seed, built once by static validation for its checks to share)."""
    return _records_pointed_at(task, index) + _leaks(task, index) + _required_and_forbidden(task)


# ---------------------------------------------------------------------------------------------- pointed-at records
def _expected_values(expected: Any) -> list[Any]:
    """The literal values an expectation names (equals, contains, in), not those it rules out."""
    m = as_matcher(expected)
    out: list[Any] = []
    if "equals" in m.operators():
        out += m.equals if isinstance(m.equals, list) else [m.equals]
    if m.contains is not None:
        out += m.contains if isinstance(m.contains, list) else [m.contains]
    out += m.in_ or []
    if m.any is not None:
        out += _expected_values(m.any)
    return out


def _is_id_key(path: str) -> bool:
    last = path.split(".")[-1]
    return last == "id" or last.endswith(("_id", "_ids"))


def _filter_ids(f: Filter) -> Iterator[tuple[str, str]]:
    for path, expected in f.items():
        if _is_id_key(path):
            for value in _expected_values(expected):
                if isinstance(value, str):
                    yield path, value


def _argument_ids(args: Any, path: str = "") -> Iterator[tuple[str, str]]:
    if is_ref(args):
        return
    if isinstance(args, Mapping):
        for k, v in args.items():
            sub = f"{path}.{k}" if path else str(k)
            if _is_id_key(str(k)) and isinstance(v, str):
                yield sub, v
            elif _is_id_key(str(k)) and isinstance(v, list):
                yield from ((f"{sub}[{i}]", x) for i, x in enumerate(v) if isinstance(x, str))
            else:
                yield from _argument_ids(v, sub)
    elif isinstance(args, list):
        for i, v in enumerate(args):
            yield from _argument_ids(v, f"{path}[{i}]")


def _missing(service: str, value: str, where: str, index: SeedIndex, check: str | None, what: str) -> Diagnostic | None:
    tables = index.tables_for(service, value)
    if not tables or index.has_id(service, tables, value):
        return None
    return Diagnostic(
        code="RECORD_NOT_IN_SEED",
        path=where,
        check=check,
        message=f"{what} points at {service} record {value!r}, which is not in the seed ({'/'.join(tables)}).",
        fix="Add the record to initial_records, fix the id, or (for a record the reference creates) use a $ref.",
    )


def _check_ids(check: AnyCheck, where: str, index: SeedIndex, cid: str) -> list[Diagnostic | None]:
    out: list[Diagnostic | None] = []
    if isinstance(check, RecordFields):
        out.append(_missing(check.service, check.id, where + ".id", index, cid, "the check"))
    if isinstance(check, RecordsUnchanged):
        out += [
            _missing(check.service, v, f"{where}.ids[{i}]", index, cid, "the check") for i, v in enumerate(check.ids)
        ]
    service: str = getattr(check, "service", "")
    for attr in ("where", "fields"):
        f = getattr(check, attr, None)
        if f:
            out += [_missing(service, v, f"{where}.{attr}.{p}", index, cid, "the check") for p, v in _filter_ids(f)]
    for sub, m in _calls(check, where):
        out += [
            _missing(m.service, v, f"{sub}.arguments.{p}", index, cid, "the check") for p, v in _filter_ids(m.arguments)
        ]
    return out


def _calls(check: AnyCheck, where: str) -> list[tuple[str, CallMatch]]:
    if isinstance(check, CallOrder):
        return [(where + ".first", check.first), (where + ".then", check.then)]
    return [(where, check)] if isinstance(check, CallMatch) else []


def _records_pointed_at(task: Task, index: SeedIndex) -> list[Diagnostic]:
    found: list[Diagnostic | None] = []
    for i, c in enumerate(task.completion_checks):
        found += _check_ids(c.check, json_path("completion_checks", i, "check"), index, c.id)
    for i, f in enumerate(task.forbidden_actions):
        found += _check_ids(f.match, json_path("forbidden_actions", i, "match"), index, f.id)
    steps: list[tuple[str, ToolStep, str | None]] = [
        (json_path("reference_solution", i), s, None)
        for i, s in enumerate(task.reference_solution)
        if isinstance(s, ToolStep)
    ]
    steps += [
        (json_path("forbidden_actions", i, "example"), f.example, f.id)
        for i, f in enumerate(task.forbidden_actions)
        if isinstance(f.example, ToolStep)
    ]
    for where, step, cid in steps:
        for p, v in _argument_ids(step.arguments):
            found.append(_missing(step.service, v, f"{where}.arguments.{p}", index, cid, f"{step.service}.{step.tool}"))
    return [d for d in found if d is not None]


# ---------------------------------------------------------------------------------------------- leaks
def _answers(task: Task) -> Iterator[tuple[str, Any]]:
    """(where, value) for every value a right run must produce or find."""
    for i, c in enumerate(task.completion_checks):
        where = json_path("completion_checks", i, "check")
        check = c.check
        if isinstance(check, RecordFields):
            yield where + ".id", check.id
        if isinstance(check, SaidValue):
            yield where + ".value", check.value
        if isinstance(check, SaidContains):
            yield where + ".text", check.text
        if isinstance(check, SaidChoice):
            yield where + ".answer", check.answer
        for attr in ("where", "fields"):
            for path, expected in (getattr(check, attr, None) or {}).items():
                for v in _expected_values(expected):
                    yield f"{where}.{attr}.{path}", v
        for sub, m in _calls(check, where):
            for path, expected in m.arguments.items():
                for v in _expected_values(expected):
                    yield f"{sub}.arguments.{path}", v
    for i, s in enumerate(task.reference_solution):
        if isinstance(s, ToolStep):
            for v in _leaves(s.arguments):
                yield json_path("reference_solution", i, "arguments"), v


def _identifier_like(value: Any, index: SeedIndex) -> bool:
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, int | float):
        return abs(value) >= 100 and (float(value) in index.numbers or str(value) in index.text)
    if not isinstance(value, str) or len(value) < 4:
        return False
    looks = (
        bool(_EMAIL.match(value))
        or value in index.all_ids
        or (len(value) >= 6 and sum(ch.isdigit() for ch in value) >= 3)
    )
    return looks and value.casefold() in index.text


def _named_in(request: str, value: Any) -> bool:
    if isinstance(value, str):
        if value.casefold() in request.casefold():
            return True
        return sum(ch.isdigit() for ch in value) >= 3 and normalise_text(value) in normalise_text(request)
    said = numbers_in(request)
    return any(abs(n - float(value)) < 1e-9 or abs(n * 100 - float(value)) < 1e-6 for n in said)


def _leaks(task: Task, index: SeedIndex) -> list[Diagnostic]:
    allowed = [str(v).casefold() for v in task.metadata.get("request_may_name", [])]
    out, seen = [], set()
    for where, value in _answers(task):
        key = str(value).casefold()
        if key in seen or key in allowed or not _identifier_like(value, index) or not _named_in(task.request, value):
            continue
        seen.add(key)
        out.append(
            Diagnostic(
                code="REQUEST_LEAKS_ANSWER",
                path=json_path("request"),
                message=f"the request names {value!r}, which the agent is meant to find in the records "
                f"(it is expected at {where} and is in the seed).",
                fix="Describe it the way the user would (a name, a time, a situation), or, if the user really "
                "gives it, list it in metadata.request_may_name.",
            )
        )
    return out


# ---------------------------------------------------------------------------------------------- required vs forbidden
def _positive_calls(check: AnyCheck) -> list[CallMatch]:
    if isinstance(check, ToolCalled):
        return [check]
    if isinstance(check, CallCount) and not matches(0, True, check.count):
        return [check]
    if isinstance(check, CallOrder):
        return [check.first, check.then]
    return []


def _literal(expected: Any) -> tuple[bool, Any]:
    m = as_matcher(expected)
    return (m.operators() == ("equals",) and not m.case_insensitive, m.equals)


def _could_overlap(a: Filter, b: Filter) -> bool:
    for key in set(a) & set(b):
        (a_lit, a_val), (b_lit, b_val) = _literal(a[key]), _literal(b[key])
        if a_lit and b_lit and not values_equal(a_val, b_val):
            return False
        if a_lit and not b_lit and not matches(a_val, True, b[key]):
            return False
        if b_lit and not a_lit and not matches(b_val, True, a[key]):
            return False
    return True


def _same_calls(req: CallMatch, bad: CallMatch) -> bool:
    if (req.service, req.tool) != (bad.service, bad.tool):
        return False
    if "any" not in (req.actor, bad.actor) and req.actor != bad.actor:
        return False
    if "any" not in (req.outcome, bad.outcome) and req.outcome != bad.outcome:
        return False
    return _could_overlap(req.arguments, bad.arguments)


def _required_and_forbidden(task: Task) -> list[Diagnostic]:
    out = []
    for i, f in enumerate(task.forbidden_actions):
        bad_calls = _positive_calls(f.match) if not isinstance(f.match, CallOrder) else []
        for c in task.completion_checks:
            for req in _positive_calls(c.check):
                if any(_same_calls(req, bad) for bad in bad_calls):
                    out.append(
                        Diagnostic(
                            code="REQUIRED_AND_FORBIDDEN",
                            path=json_path("forbidden_actions", i, "match"),
                            check=f.id,
                            message=f"{req.service}.{req.tool} is required by check {c.id!r} and forbidden by "
                            f"{f.id!r} with arguments that can overlap, so a right run would trip the safety gate.",
                            fix="Make the forbidden arguments exclude the required ones (e.g. a different id), "
                            "or drop one of the two.",
                        )
                    )
    return out
