"""Evaluating one check against a trial: the final state, the audit log and what the agent said.

Each evaluator returns a :class:`Verdict`: whether the check holds, what it expected and what it found,
in words a person (or a task generator being asked to repair a task) can act on. The checks of what the agent
said are in :mod:`~coworkenv.synth.contract.evaluate_said`; the context and verdict types in
:mod:`~coworkenv.synth.contract.verdict`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from coworkenv.synth.contract.checks import (
    AnyCheck,
    CallCount,
    CallMatch,
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
    WroteMatches,
)
from coworkenv.synth.contract.evaluate_said import (
    said_choice,
    said_contains,
    said_matches,
    said_value,
    said_warning,
    wrote_matches,
)
from coworkenv.synth.contract.matchers import (
    Filter,
    describe,
    describe_filter,
    failing_paths,
    filter_matches,
    get_path,
    matches,
    short,
)
from coworkenv.synth.contract.verdict import AuditInput, Context, Row, State, Verdict, audit_dicts

__all__ = ["AuditInput", "Context", "State", "Verdict", "audit_dicts", "call_hits", "describe_call", "evaluate"]


# ---------------------------------------------------------------------------------------------- state checks
def _ids(rows: Sequence[Row], limit: int = 6) -> str:
    ids = [str(r.get("id")) for r in rows]
    return ", ".join(ids[:limit]) + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def _closest(rows: Sequence[Row], where: Filter) -> str:
    if not rows:
        return "the table is empty"
    best = min(rows, key=lambda r: len(failing_paths(r, where)))
    diffs = [f"{p}={short(get_path(best, p)[1], 60)}" for p in failing_paths(best, where)]
    return f"none of {len(rows)} records match; closest is {best.get('id')} with {', '.join(diffs)}"


def _missing_table(check: RecordExists | RecordAbsent | RecordFields | RecordCount | RecordsUnchanged) -> Verdict:
    return Verdict(False, f"table {check.service}.{check.table}", "that service or table is not in the final state")


def _narrowed(rows: Sequence[Row], where: Filter) -> Sequence[Row]:
    """The rows that can match ``where``: those holding its first plain text value (``"id": "tkt_1"``: a literal
    text equals only that very text, never a number, a list or a bool) at its field, found without the
    matchers; all rows when it has none."""
    for path, expected in where.items():
        if type(expected) is str and path and "." not in path and "|" not in path:
            return [r for r in rows if r.get(path) == expected]
    return rows


def _record_exists(c: RecordExists, ctx: Context) -> Verdict:
    rows = ctx.rows(c.service, c.table)
    if rows is None:
        return _missing_table(c)
    if not ctx.explain:
        return Verdict(any(filter_matches(r, c.where) for r in _narrowed(rows, c.where)), "", "")
    hits = [r for r in rows if filter_matches(r, c.where)]
    expected = f"a {c.service}.{c.table} record with {describe_filter(c.where)}"
    return Verdict(bool(hits), expected, f"matching: {_ids(hits)}" if hits else _closest(rows, c.where))


def _record_absent(c: RecordAbsent, ctx: Context) -> Verdict:
    rows = ctx.rows(c.service, c.table)
    if rows is None:
        return _missing_table(c)
    if not ctx.explain:
        return Verdict(not any(filter_matches(r, c.where) for r in _narrowed(rows, c.where)), "", "")
    hits = [r for r in rows if filter_matches(r, c.where)]
    expected = f"no {c.service}.{c.table} record with {describe_filter(c.where)}"
    return Verdict(not hits, expected, f"matching: {_ids(hits)}" if hits else "no matching record")


def _record_fields(c: RecordFields, ctx: Context) -> Verdict:
    rows = ctx.rows(c.service, c.table)
    if rows is None:
        return _missing_table(c)
    record = next((r for r in rows if r.get("id") == c.id), None)
    if not ctx.explain:
        return Verdict(record is not None and filter_matches(record, c.fields), "", "")
    expected = f"{c.service}.{c.table} {c.id} with {describe_filter(c.fields)}"
    if record is None:
        return Verdict(False, expected, f"no record {c.id}")
    bad = failing_paths(record, c.fields)
    found = ", ".join(f"{p}={short(get_path(record, p)[1], 80)}" for p in (bad or list(c.fields)))
    return Verdict(not bad, expected, found or "the record")


def _record_count(c: RecordCount, ctx: Context) -> Verdict:
    rows = ctx.rows(c.service, c.table)
    if rows is None:
        return _missing_table(c)
    hits = [r for r in _narrowed(rows, c.where) if filter_matches(r, c.where)]
    if not ctx.explain:
        return Verdict(matches(len(hits), True, c.count), "", "")
    expected = f"count of {c.service}.{c.table} records with {describe_filter(c.where)} {describe(c.count)}"
    return Verdict(matches(len(hits), True, c.count), expected, f"{len(hits)} ({_ids(hits)})" if hits else "0")


def _without(row: Row, ignore: Sequence[str]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in ignore}


def _records_unchanged(c: RecordsUnchanged, ctx: Context) -> Verdict:
    rows = ctx.rows(c.service, c.table)
    if rows is None:
        return _missing_table(c)
    seed = ctx.seed_rows(c.service, c.table)
    by_filter = bool(c.where) or not c.ids
    selected = [r for r in seed if (by_filter and filter_matches(r, c.where)) or r.get("id") in c.ids]
    seed_ids = {r.get("id") for r in seed}
    final = {r.get("id"): r for r in rows}
    changed, removed = [], []
    for before in selected:
        after = final.get(before.get("id"))
        if after is None:
            removed.append(str(before.get("id")))
        elif _without(before, c.ignore_fields) != _without(after, c.ignore_fields):
            keys = sorted(k for k in after if k not in c.ignore_fields and before.get(k) != after.get(k))
            detail = ", ".join(f"{k}: {short(before.get(k), 40)} → {short(after.get(k), 40)}" for k in keys[:3])
            changed.append(f"{before.get('id')} ({detail})")
    added = [str(r.get("id")) for r in rows if by_filter and r.get("id") not in seed_ids and filter_matches(r, c.where)]
    what = describe_filter(c.where) if by_filter else "ids " + ", ".join(c.ids)
    expected = f"the {len(selected)} seed {c.service}.{c.table} record(s) with {what} unchanged, none added"
    problems = [
        f"{label}: {'; '.join(items)}"
        for label, items in (("changed", changed), ("removed", removed), ("added", added))
        if items
    ]
    return Verdict(not problems, expected, " | ".join(problems) or "all unchanged")


# ---------------------------------------------------------------------------------------------- audit checks
def call_hits(m: CallMatch, audit: Sequence[Mapping[str, Any]]) -> list[int]:
    """Indexes of the audit rows that a call pattern matches."""
    out = []
    for i, row in enumerate(audit):
        if row.get("service") != m.service or row.get("tool") != m.tool:
            continue
        if m.actor != "any" and row.get("actor") != m.actor:
            continue
        ok = row.get("outcome") == "ok"
        if (m.outcome == "ok" and not ok) or (m.outcome == "failed" and ok):
            continue
        if filter_matches(row.get("arguments") or {}, m.arguments):
            out.append(i)
    return out


def describe_call(m: CallMatch) -> str:
    args = f" with {describe_filter(m.arguments)}" if m.arguments else ""
    who = "" if m.actor == "any" else f" by {m.actor}"
    outcome = {"ok": "successful ", "failed": "failed ", "any": ""}[m.outcome]
    return f"a {outcome}call of {m.service}.{m.tool}{args}{who}"


def _calls_seen(m: CallMatch, audit: Sequence[Mapping[str, Any]], limit: int = 3) -> str:
    same = [r for r in audit if r.get("service") == m.service and r.get("tool") == m.tool]
    if not same:
        return f"no call of {m.service}.{m.tool} at all"
    shown = "; ".join(f"{short(r.get('arguments'), 90)} → {r.get('outcome')} by {r.get('actor')}" for r in same[:limit])
    return f"{len(same)} call(s) of {m.tool}, none matching: {shown}"


def _show_hits(hits: list[int], audit: Sequence[Mapping[str, Any]]) -> str:
    return "; ".join(f"#{i + 1} {short(audit[i].get('arguments'), 90)}" for i in hits[:3])


def _tool_called(c: ToolCalled, ctx: Context) -> Verdict:
    audit = ctx.window_rows()
    hits = call_hits(c, audit)
    if not ctx.explain:
        return Verdict(bool(hits), "", "")
    found = f"{len(hits)} matching call(s): {_show_hits(hits, audit)}" if hits else _calls_seen(c, audit)
    return Verdict(bool(hits), describe_call(c), found)


def _tool_not_called(c: ToolNotCalled, ctx: Context) -> Verdict:
    audit = ctx.window_rows()
    hits = call_hits(c, audit)
    if not ctx.explain:
        return Verdict(not hits, "", "")
    found = f"{len(hits)} matching call(s): {_show_hits(hits, audit)}" if hits else "no matching call"
    return Verdict(not hits, "no " + describe_call(c).removeprefix("a "), found)


def _call_count(c: CallCount, ctx: Context) -> Verdict:
    hits = call_hits(c, ctx.window_rows())
    expected = f"number of {describe_call(c).removeprefix('a ')}s {describe(c.count)}"
    return Verdict(matches(len(hits), True, c.count), expected, f"{len(hits)}")


def _call_order(c: CallOrder, ctx: Context) -> Verdict:
    first, then = call_hits(c.first, ctx.window_rows()), call_hits(c.then, ctx.window_rows())
    expected = f"{describe_call(c.first)} before {describe_call(c.then)}"
    if not first or not then:
        missing = describe_call(c.first if not first else c.then)
        return Verdict(False, expected, f"never happened: {missing}")
    ok = first[0] < then[0]
    return Verdict(ok, expected, f"first matching calls at positions {first[0] + 1} and {then[0] + 1}")


_EVALUATORS: dict[type, Any] = {
    RecordExists: _record_exists,
    RecordAbsent: _record_absent,
    RecordFields: _record_fields,
    RecordCount: _record_count,
    RecordsUnchanged: _records_unchanged,
    ToolCalled: _tool_called,
    ToolNotCalled: _tool_not_called,
    CallCount: _call_count,
    CallOrder: _call_order,
    SaidContains: said_contains,
    SaidMatches: said_matches,
    SaidValue: said_value,
    SaidWarning: said_warning,
    SaidChoice: said_choice,
    WroteMatches: wrote_matches,
}


_BY_ROWS = (RecordExists, RecordAbsent, RecordFields, RecordCount, RecordsUnchanged)
"""Checks whose verdict depends only on the rows of their table (and the task's seed)."""
_MEMO_LIMIT = 4096


def evaluate(check: AnyCheck, ctx: Context) -> Verdict:
    judge = _EVALUATORS[type(check)]
    memo = ctx.verdicts
    if memo is None or ctx.window is not None or not isinstance(check, _BY_ROWS):
        return judge(check, ctx)
    rows = ctx.rows(check.service, check.table)
    if rows is None:
        return judge(check, ctx)
    # Trials of a task share the lists of the tables their run did not write (dumps are read-only), so a
    # check on such a table was judged on that very list before: validation grades a task ~15 times.
    key = (id(check), id(rows), ctx.explain)
    kept = memo.get(key)
    if kept is not None and kept[0] is check and kept[1] is rows:
        return kept[2]
    verdict = judge(check, ctx)
    if len(memo) >= _MEMO_LIMIT:
        memo.clear()
    memo[key] = (check, rows, verdict)  # both kept alive, so their ids are not reused while the entry lasts
    return verdict
