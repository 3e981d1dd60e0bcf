"""What the reply adversaries say (:mod:`.adversaries`): every field of every record, and every number a careless
agent could compute from them (sums per table and group, subset sums, counts), cut to a size."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator, Sequence
from itertools import combinations
from typing import Any

from coworkenv.synth.contract.runner import Workbench
from coworkenv.synth.contract.validation.adversary_args import Pools, Row, pools

MAX_REPLY_CHARS = 16_000
MAX_FIELD_CHARS = 300
MAX_NUMBER_LINES = 200

_FIELD_JSON = json.JSONEncoder(ensure_ascii=False, default=str).encode


def _field(value: Any) -> str:
    text = value if isinstance(value, str) else _FIELD_JSON(value)
    text = " ".join(text.split())
    return text if len(text) <= MAX_FIELD_CHARS else text[: MAX_FIELD_CHARS - 1] + "…"


def records_text(bench: Workbench, limit: int = MAX_REPLY_CHARS) -> str:
    """Every field of every record, the records nearest the request first, cut at ``limit`` characters (once per
    workbench and limit)."""
    kept = bench.validation.records_text
    if limit not in kept:
        kept[limit] = _records_text(pools(bench), limit)
    return kept[limit]


def _records_text(p: Pools, limit: int) -> str:
    lines: list[str] = []
    size = 0
    for service, table, row in p.ranked:
        line = f"- {service}.{table} {row.get('id')}: " + "; ".join(f"{k}={_field(v)}" for k, v in row.items())
        size += len(line) + 1
        if size > limit:
            break
        lines.append(line)
    # the nearest records last: a reply is read from its end when it is long
    return "\n".join(["Here is everything I found:", *reversed(lines)])


def _number(value: float) -> str:
    n = int(value) if float(value).is_integer() else value
    return f"{n} (= ${value / 100:,.2f})" if isinstance(n, int) and abs(n) >= 100 else f"{n}"


def _numeric_fields(rows: Sequence[Row]) -> list[str]:
    names = {k for r in rows for k, v in r.items() if isinstance(v, int | float) and not isinstance(v, bool)}
    return sorted(names)


def _group_fields(rows: Sequence[Row]) -> list[str]:
    """String fields whose values repeat (a customer, a status, an owner): the groups worth summing."""
    out = []
    for k in sorted({k for r in rows for k, v in r.items() if isinstance(v, str) and k != "id"}):
        values = [r.get(k) for r in rows if isinstance(r.get(k), str)]
        if len(values) > 1 and len(set(values)) < len(values) and len(set(values)) <= 20:
            out.append(k)
    return out


def _groups(rows: Sequence[Row]) -> Iterator[tuple[str, str, list[Row]]]:
    for g in _group_fields(rows):
        groups: dict[str, list[Row]] = defaultdict(list)
        for r in rows:
            if isinstance(r.get(g), str):
                groups[r[g]].append(r)
        for value, members in groups.items():
            yield g, value, members


def _table_numbers(table: str, rows: Sequence[Row]) -> dict[str, list[str]]:
    """The figures of one table by section: differences, subset sums, group sums and counts, totals."""
    numeric = _numeric_fields(rows)
    out: dict[str, list[str]] = defaultdict(list)
    out["totals"] += [f"{len(rows)} {table}"]
    out["totals"] += [f"total {table} {f}: {_number(sum(r.get(f) or 0 for r in rows))}" for f in numeric]
    for g, value, members in _groups(rows):
        out["groups"].append(f"{len(members)} {table} with {g} {value}")
        for f in numeric:
            amounts = [m.get(f) or 0 for m in members]
            out["groups"].append(f"{table} {f} for {g} {value}: {_number(sum(amounts))}")
            for size in range(2, len(amounts) if len(amounts) <= 5 else 0):
                out["subsets"] += [
                    f"subset sum of {table} {f} for {g} {value}: {_number(sum(c))}" for c in combinations(amounts, size)
                ]
    for r in rows:
        for a, b in combinations([f for f in numeric if isinstance(r.get(f), int | float)], 2):
            if r[a] != r[b]:
                out["differences"].append(f"{table} {r.get('id')} {a} minus {b}: {_number(abs(r[a] - r[b]))}")
    return out


def numbers_text(bench: Workbench, limit: int = MAX_NUMBER_LINES) -> str:
    """Differences, subset sums, group sums and counts, totals of every numeric field (each section at most
    ``limit`` lines, the tables nearest the request first), then every number seen: the likeliest answers last,
    where a long reply is read."""
    p, seen = pools(bench), set()
    sections: dict[str, list[str]] = defaultdict(list)
    for key in dict.fromkeys((service, table) for service, table, _ in p.ranked):
        rows = p.rows[key]
        seen |= {v for r in rows for v in r.values() if isinstance(v, int | float) and not isinstance(v, bool)}
        for name, lines in _table_numbers(key[1], rows).items():
            sections[name] += lines
    out = ["Figures:"]
    for name in ("differences", "subsets", "groups", "totals"):
        out += sections[name][:limit]
    out.append("Every number: " + ", ".join(_number(v) for v in sorted(seen)[:500]))
    return "\n".join(out)
