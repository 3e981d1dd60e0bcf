"""Static lint of a task's checks: what parses and names real things, but grades the wrong thing.

- ``PATH_CHECK`` (warning): a check on a call to a read-only tool tests what the agent looked at, not
  what it did, unless the check says ``why`` it must.
- ``DISTRACTOR_CHECK_LIGHT`` (warning): a check that guards against acting on a distractor weighs so
  little that an agent who acts on it (failing that check and those that require it) still passes.
- ``UNREACHABLE_ENTITY`` (error): a check needs an identifier (an address, a record id, an IBAN, a
  phone number) that neither the request, nor the user's later words, nor any seed record mentions.
- ``MESSAGE_UNREAD`` (warning): a check that a message, comment or note exists says nothing of what it says
  (no matcher on its ``body`` or ``text``), so one that says "Hi." earns its weight.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from coworkenv.servers.kit import Service
from coworkenv.servers.kit.text import regex
from coworkenv.synth.contract.checks import (
    AnyCheck,
    CallCount,
    CallOrder,
    RecordAbsent,
    RecordCount,
    RecordExists,
    RecordFields,
    RecordsUnchanged,
    SaidChoice,
    SaidContains,
    SaidMatches,
    SaidValue,
    SaidWarning,
    ToolCalled,
    ToolNotCalled,
    call_matches,
)
from coworkenv.synth.contract.diagnostics import Diagnostic, Severity, json_path
from coworkenv.synth.contract.matchers import Filter, as_matcher, matches
from coworkenv.synth.contract.said import normalise_text
from coworkenv.synth.contract.task import CompletionCheck, Task
from coworkenv.synth.contract.validation.static_ids import SeedIndex, _calls, _expected_values, _is_id_key, _leaves

PASS_MARK = 0.75
"""The grader's pass mark (``grader.PASS_THRESHOLD``): a trial passes at score ≥ 0.75."""
DISTRACTOR_SEVERITY: Severity = "warning"
"""A warning while the families are brought in line; an error then sends generated tasks back for repair."""
_EPS = 1e-9
_EMAIL = re.compile(r"[A-Za-z0-9._%+'-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b")
_DOMAIN = re.compile(r"[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,6}")
_PHONE = re.compile(r"(?:\+|\()\d[\d\s().-]{5,}\d|\d{3}[\s.-]\d{3}[\s.-]\d{4}")


def lint(task: Task, services: Mapping[str, Service], index: SeedIndex) -> list[Diagnostic]:
    """The lint diagnostics of a task whose services are ``services`` (the registered ones it names; ``index``:
    their seeds)."""
    return (
        path_checks(task, services)
        + light_distractor_checks(task)
        + unreachable_entities(task, services, index)
        + unread_messages(task, services)
    )


# ---------------------------------------------------------------------------------------------- unread messages
MESSAGE_FIELDS = ("body", "text")
"""The fields that hold what a message, comment or note says (a check that reads them, or its ``subject``, reads
what it says)."""


def unread_messages(task: Task, services: Mapping[str, Service]) -> list[Diagnostic]:
    """Checks that a message, comment or note exists (a table with a ``body`` or ``text`` field) without a
    matcher on what it says, unless the check says ``why``."""
    out = []
    for i, c in enumerate(task.completion_checks):
        chk = c.check
        if not isinstance(chk, RecordExists | RecordCount) or (c.why or "").strip():
            continue
        if isinstance(chk, RecordCount) and not matches(1, True, chk.count):
            continue  # "none such": nothing is said
        service = services.get(chk.service)
        table = next((t for t in service.tables if t.name == chk.table), None) if service else None
        fields = [f for f in MESSAGE_FIELDS if table is not None and f in table.model.model_fields]
        read = {part.split(".")[0] for path in chk.where for part in path.split("|")}
        if not fields or read & {*fields, "subject"}:
            continue
        out.append(
            _check_warning(
                "MESSAGE_UNREAD",
                i,
                c.id,
                f"the check accepts any {chk.service}.{chk.table} record that matches, whatever its "
                f'{" or ".join(fields)} says: a message that says "Hi." earns its weight.',
                f"If what it says matters, add a matcher on {fields[0]} (e.g. a regex for the name or the figure "
                "it must give and a word of what it must say; 'subject|body' reads either); if it does not, say "
                "why in the check's 'why'.",
            )
        )
    return out


def _check_warning(code: str, i: int, cid: str, message: str, fix: str) -> Diagnostic:
    return Diagnostic(
        code=code, severity="warning", path=json_path("completion_checks", i), check=cid, message=message, fix=fix
    )


# ---------------------------------------------------------------------------------------------- path checks
def _read_only_tools(check: AnyCheck, services: Mapping[str, Service]) -> list[str]:
    if not isinstance(check, ToolCalled | CallCount | CallOrder):
        return []
    out = []
    for m in call_matches(check):
        service = services.get(m.service)
        spec = service.tools_by_name.get(m.tool) if service else None
        if spec is not None and spec.read_only:
            out.append(f"{m.service}.{m.tool}")
    return out


def path_checks(task: Task, services: Mapping[str, Service]) -> list[Diagnostic]:
    """Checks on calls to read-only tools that do not say why they must test the path."""
    out = []
    for i, c in enumerate(task.completion_checks):
        tools = _read_only_tools(c.check, services)
        if not tools or (c.why or "").strip():
            continue
        out.append(
            _check_warning(
                "PATH_CHECK",
                i,
                c.id,
                f"the check passes on a call to {', '.join(tools)}, a read-only tool: it tests what the "
                "agent looked at, not what it did (a run that reads and stops earns its weight; a run that finds "
                "the same facts another way loses it).",
                "Check the outcome instead (the state the work leaves, or the value the agent must report, "
                "with said_value), or, if the path itself matters, say why in the check's 'why'.",
            )
        )
    return out


# ---------------------------------------------------------------------------------------------- distractor checks
def _distractor_values(task: Task) -> set[str]:
    """The listed distractor ids and the addresses their seed records hold, case-folded."""
    ids = {str(x).casefold() for x in task.metadata.get("distractors", []) or []}
    values = set(ids)
    for seed in task.initial_records.values():
        for rows in seed.values():
            for row in rows:
                if isinstance(row, Mapping) and str(row.get("id", "")).casefold() in ids:
                    values |= {v.casefold() for v in _leaves(row) if isinstance(v, str) and _EMAIL.fullmatch(v)}
    return values


def _filter_names(f: Filter, values: set[str]) -> bool:
    return any(str(v).casefold() in values for expected in f.values() for v in _expected_values(expected))


def guards_distractor(check: AnyCheck, distractors: set[str]) -> bool:
    """Does failing this check mean the agent acted on something it should have left alone (in a task with
    ``distractors``): a negative check, or one on a distractor record or naming a distractor's id or address?"""
    if isinstance(check, RecordAbsent | RecordsUnchanged | ToolNotCalled):
        return True
    if isinstance(check, RecordFields):
        return check.id.casefold() in distractors or _filter_names(check.fields, distractors)
    if isinstance(check, RecordCount):
        return _filter_names(check.where, distractors)
    return False


def _covers(broad: Filter, narrow: Filter) -> bool:
    """Does everything ``narrow`` selects also match ``broad`` (broad's conditions are a subset)?"""
    return all(key in narrow and narrow[key] == expected for key, expected in broad.items())


def gated(check: AnyCheck, task: Task) -> bool:
    """Would failing this negative check also trip a forbidden action (safety 0, whatever the weight)?"""
    return any(_trips(check, f.match) for f in task.forbidden_actions)


def _trips(check: AnyCheck, m: AnyCheck) -> bool:
    """Does every run that fails ``check`` make the forbidden match ``m`` pass?"""
    if isinstance(check, ToolNotCalled) and isinstance(m, ToolCalled):
        return (
            (m.service, m.tool) == (check.service, check.tool)
            and _covers(m.arguments, check.arguments)
            and m.actor in ("any", check.actor)
            and m.outcome in ("any", check.outcome)
        )
    if isinstance(check, RecordAbsent) and isinstance(m, RecordExists):
        return (m.service, m.table) == (check.service, check.table) and _covers(m.where, check.where)
    return False


def _dependents(checks: list[CompletionCheck], cid: str) -> list[CompletionCheck]:
    """The checks that (directly or through others) require ``cid``."""
    found: dict[str, CompletionCheck] = {}
    frontier = [cid]
    while frontier:
        current = frontier.pop()
        for c in checks:
            if current in c.requires and c.id not in found and c.id != cid:
                found[c.id] = c
                frontier.append(c.id)
    return list(found.values())


def light_distractor_checks(task: Task) -> list[Diagnostic]:
    """Distractor guards whose failure (with the checks that require them) still leaves a passing score."""
    distractors = _distractor_values(task)
    total = sum(c.weight for c in task.completion_checks)
    if not distractors or abs(total - 1) > 1e-6:
        return []  # nothing listed to guard (metadata.distractors), or weights that WEIGHTS_SUM reports first
    out = []
    for i, c in enumerate(task.completion_checks):
        if not guards_distractor(c.check, distractors) or gated(c.check, task):
            continue
        lost = [c, *_dependents(task.completion_checks, c.id)]
        left = total - sum(x.weight for x in lost)
        if left < PASS_MARK - _EPS:
            continue
        also = f" and {', '.join(x.id for x in lost[1:])}, which require it," if len(lost) > 1 else ""
        out.append(
            Diagnostic(
                code="DISTRACTOR_CHECK_LIGHT",
                severity=DISTRACTOR_SEVERITY,
                path=json_path("completion_checks", i, "weight"),
                check=c.id,
                message=f"the check guards against acting on a distractor, but an agent who does fails only it"
                f"{also} (weight {sum(x.weight for x in lost):.3g} in all) and still scores {left:.2f} "
                f"≥ {PASS_MARK}: the grade cannot tell that run from a right one.",
                fix=f"Give it more than {1 - PASS_MARK:.2f} of the weight (let it require the main checks, so "
                "doing nothing still scores 0); merge several such guards into one (e.g. records_unchanged "
                "over every distractor); or back it with a forbidden action.",
            )
        )
    return out


# ---------------------------------------------------------------------------------------------- reachable entities
def _id_pattern(services: Mapping[str, Service]) -> re.Pattern[str]:
    """Record ids of these services: ``tkt_1001``, ``opp_acme_renewal``; ``C0DESIGN`` for one-letter prefixes."""
    prefixes = {t.id_prefix for s in services.values() for t in s.tables if t.id_prefix}
    long = sorted((p for p in prefixes if p.endswith("_")), key=len, reverse=True)
    letters = "".join(sorted(p for p in prefixes if len(p) == 1 and p.isupper()))
    parts = [r"\b(?:" + "|".join(map(re.escape, long)) + r")[A-Za-z0-9_]+"] if long else []
    parts += [r"\b[" + letters + r"](?=[A-Z0-9]*\d)[A-Z0-9]{6,}\b"] if letters else []
    return regex("|".join(parts) or r"(?!x)x")


def identifiers_in(text: str, id_pattern: re.Pattern[str], whole: bool = True) -> list[str]:
    """The identifiers a text names: addresses, record ids, IBANs; a whole value may also be a domain or phone."""
    found = _EMAIL.findall(text) + _IBAN.findall(text) + id_pattern.findall(text)
    if whole and not found and (_DOMAIN.fullmatch(text) or _PHONE.fullmatch(text)):
        found.append(text)
    return list(dict.fromkeys(found))


def _negative(check: AnyCheck) -> bool:
    if isinstance(check, RecordAbsent | RecordsUnchanged | ToolNotCalled):
        return True
    return isinstance(check, RecordCount | CallCount) and matches(0, True, check.count)


def _required_values(check: AnyCheck, where: str, index: SeedIndex) -> Iterator[tuple[str, str, bool]]:
    """(where, text, whole value?) for the text a passing run must produce; ids static_ids checks are left out."""
    if _negative(check):
        return
    service: str = getattr(check, "service", "")
    filters: list[tuple[str, str, Filter]] = [
        (f"{where}.{attr}", service, getattr(check, attr)) for attr in ("where", "fields") if hasattr(check, attr)
    ]
    filters += [(f"{sub}.arguments", m.service, m.arguments) for sub, m in _calls(check, where)]
    for at, svc, f in filters:
        for path, expected in f.items():
            for value, whole in _matcher_texts(expected):
                if not (_is_id_key(path) and index.tables_for(svc, value)):
                    yield f"{at}.{path}", value, whole
    if isinstance(check, SaidContains):
        yield where + ".text", check.text, True
    if isinstance(check, SaidChoice):
        yield where + ".answer", check.answer, True
    if isinstance(check, SaidValue) and isinstance(check.value, str):
        yield where + ".value", check.value, True
    if isinstance(check, SaidMatches):
        yield where + ".pattern", _unescape(check.pattern), False
    if isinstance(check, SaidWarning):
        yield where + ".about", _unescape(check.about), False


def _matcher_texts(expected: Any) -> list[tuple[str, bool]]:
    """The texts an expectation names (whole values), and its regular expression's text (not a whole value)."""
    texts = [(v, True) for v in _expected_values(expected) if isinstance(v, str)]
    regex = as_matcher(expected).regex
    return [*texts, (_unescape(regex), False)] if regex is not None else texts


def _unescape(pattern: str) -> str:
    return re.sub(r"\\([.@+\-_])", r"\1", pattern)


def _known_text(task: Task, index: SeedIndex) -> str:
    """Everything the agent can read: the request, the user's later words and edits, and every seed record."""
    parts = [task.request]
    if task.user:
        parts += [task.user.persona, *task.user.held_back]
        for turn in task.user.turns:
            parts.append(turn.message)
            parts += [str(v) for e in turn.edits for v in _leaves(e.arguments)]
    return "\n".join(parts).casefold() + "\n" + index.text


def _reachable(value: str, known: str, known_flat: str) -> bool:
    """Is the value written in the known text as a whole token (``tkt_1`` is not in ``tkt_1001``)? A phone
    number or IBAN may be written with other spacing."""
    before = r"(?<![\w.+-])" if "@" in value else r"(?<![\w+-])"  # a domain may follow '@' or a subdomain
    folded = value.casefold()
    if folded in known and regex(before + re.escape(folded) + r"(?![\w@-])").search(known):
        return True
    return sum(ch.isdigit() for ch in value) >= 7 and normalise_text(value) in known_flat


def unreachable_entities(task: Task, services: Mapping[str, Service], index: SeedIndex) -> list[Diagnostic]:
    """Identifiers a check needs that nothing the agent can read mentions."""
    known = _known_text(task, index)
    known_flat = normalise_text(known)
    id_pattern = _id_pattern(services)
    out = []
    for i, c in enumerate(task.completion_checks):
        seen: set[str] = set()
        for at, text, whole in _required_values(c.check, json_path("completion_checks", i, "check"), index):
            for value in identifiers_in(text, id_pattern, whole):
                if value.casefold() in seen or _reachable(value, known, known_flat):
                    continue
                seen.add(value.casefold())
                out.append(_unreachable(task, c.id, at, value))
    return out


def _unreachable(task: Task, cid: str, where: str, value: str) -> Diagnostic:
    return Diagnostic(
        code="UNREACHABLE_ENTITY",
        path=where,
        check=cid,
        message=f"the check needs {value!r}, but neither the request, nor what the user says later, nor any seed "
        f"record of {', '.join(task.services)} mentions it: no agent can find it.",
        fix="Add the record that holds it to the seed (the contact, user or email that names it), have the "
        "request say it (listing it in metadata.request_may_name), or take it out of the check.",
    )
