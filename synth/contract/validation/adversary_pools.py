"""What a blind adversary can find out before it calls anything, for :mod:`.adversary_args`: the task's records
(:class:`Pools`: every seed record by table, the most request-like first, and the addresses seen in them), and
what a tool's input JSON Schema says of each argument (its concrete schema, its example, which table's record
ids it takes, which argument names the record a call is on).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from coworkenv.servers.kit import ToolSpec
from coworkenv.servers.kit.changes import domain_of
from coworkenv.synth.contract.task import Task
from coworkenv.synth.contract.turns import keywords
from coworkenv.synth.contract.validation.lookup import services

Row = dict[str, Any]
_EXAMPLE = re.compile(r"Example: (.+)$", re.S)
_ADDRESS = re.compile(r"^[^@\s<>]+@[^@\s<>]+\.[A-Za-z]{2,}$")
_ID_PREFIX = re.compile(r"^([a-z]+_)")
_USER_ROLES = {"requester", "assignee", "author", "owner", "user", "users", "members", "to", "from_user"}
_ADDRESS_ARGS = {"to", "cc", "bcc", "email", "requested_by"}


@dataclass
class Pools:
    """What a blind agent finds in the task's services: every seed record by table, most request-like first."""

    rows: dict[tuple[str, str], list[Row]] = field(default_factory=dict)
    addresses: list[str] = field(default_factory=list)
    ranked: list[tuple[str, str, Row]] = field(default_factory=list)
    """Every record as (service, table, record), the ones holding most of the request's words first."""
    tables: dict[tuple[str, str, str], str | None] = field(default_factory=dict)
    """Memo of :func:`table_for`."""
    like: dict[tuple[str, str, str], list[str]] = field(default_factory=dict)
    """Memo of :meth:`ids_like`."""
    targets: dict[tuple[str, str], str | None] = field(default_factory=dict)
    """Memo of :func:`target_arg`."""
    id_lists: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    """Memo of :meth:`ids`."""
    optional: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    """Memo of the optional arguments a plausible call of a tool gives (:meth:`ArgBuilder.call`)."""

    def ids(self, service: str, table: str) -> list[str]:
        """The ids of a table's records (a list shared between calls: read only)."""
        key = (service, table)
        found = self.id_lists.get(key)
        if found is None:
            found = self.id_lists[key] = [
                str(r["id"]) for r in self.rows.get((service, table), []) if r.get("id") is not None
            ]
        return found

    def ids_like(self, service: str, table: str, word: str, strict: bool = False) -> list[str]:
        """The ids of the table; when the table's name does not say ``word``, the records whose values mention it
        (a ``draft_id`` takes a message labelled DRAFT): all of them if none does, or none when ``strict``. A
        table says the word in its plural too (``query_id`` names ``saved_queries``)."""
        ids = self.ids(service, table)
        if word in table or len(word) < 4 or (word.endswith("y") and word[:-1] + "ies" in table):
            return ids
        key = (service, table, word)
        if key not in self.like:
            rows = self.rows.get((service, table), [])
            self.like[key] = [str(r["id"]) for r in rows if any(word in s.casefold() for s in strings_in(r))]
        return self.like[key] or ([] if strict else ids)


def strings_in(value: Any) -> list[str]:
    """Every string in a JSON value (mappings and lists walked), in order."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in strings_in(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings_in(v)]
    return []


def build_pools(task: Task) -> Pools:
    """The task's records, ordered by how many of the request's words they hold (a workbench keeps them:
    :func:`~.adversary_args.pools`)."""
    words = keywords(task.request)
    out = Pools()
    seen: dict[str, None] = {}
    ranked: list[tuple[int, int, str, str, Row]] = []
    for service in task.services:
        for table, rows in task.seed(service).items():
            scored = [(-len(words & keywords(" ".join(map(str, r.values())))), i, r) for i, r in enumerate(rows)]
            out.rows[(service, table)] = [r for _, _, r in sorted(scored, key=lambda s: s[:2])]
            ranked += [(score, len(ranked) + i, service, table, r) for score, i, r in scored]
            for r in rows:
                for text in strings_in(r):
                    if _ADDRESS.match(text.strip()):
                        seen.setdefault(text.strip().lower())
    out.addresses = list(seen)
    out.ranked = [(service, table, r) for _, _, service, table, r in sorted(ranked, key=lambda s: s[:2])]
    return out


# ---------------------------------------------------------------------------------------------- schema reading
_SCHEMAS: dict[int, dict[str, Any]] = {}
_PROPERTIES: dict[int, dict[str, dict[str, Any]]] = {}


def properties(spec: ToolSpec) -> dict[str, dict[str, Any]]:
    """The tool's argument schemas by name, each made concrete (:func:`concrete`; computed once per tool)."""
    key = id(spec.args_model)
    if key not in _PROPERTIES:
        root = schema_of(spec)
        _PROPERTIES[key] = {arg: concrete(raw, root) for arg, raw in root.get("properties", {}).items()}
    return _PROPERTIES[key]


_REQUIRED: dict[int, frozenset[str]] = {}


def required_args(spec: ToolSpec) -> frozenset[str]:
    key = id(spec.args_model)
    if key not in _REQUIRED:
        _REQUIRED[key] = frozenset(schema_of(spec).get("required", []))
    return _REQUIRED[key]


def schema_of(spec: ToolSpec) -> dict[str, Any]:
    """The tool's input JSON Schema (computed once per tool: pydantic builds it anew on each call)."""
    key = id(spec.args_model)
    if key not in _SCHEMAS:
        _SCHEMAS[key] = spec.input_schema()
    return _SCHEMAS[key]


def example(prop: Mapping[str, Any]) -> Any:
    """The value after 'Example:' in a property's description, parsed as a Python literal (None if absent).
    Shared between calls: copy it before handing it out."""
    return _example(str(prop.get("description", "")))


@functools.lru_cache(maxsize=4096)
def _example(description: str) -> Any:
    m = _EXAMPLE.search(description)
    if not m:
        return None
    text = m.group(1).strip()
    for candidate in (text, re.split(r"\s+\(", text)[0], text.split(" ")[0]):
        try:
            return ast.literal_eval(candidate)
        except (ValueError, SyntaxError):
            continue
    return None


def concrete(prop: Mapping[str, Any], root: Mapping[str, Any]) -> dict[str, Any]:
    """The property's schema without its ``null`` branch and with a ``$ref`` resolved (description kept)."""
    out = dict(prop)
    branches = [b for b in prop.get("anyOf", []) if b.get("type") != "null"]
    if branches:
        out = {**branches[0], **{k: v for k, v in prop.items() if k != "anyOf"}}
    ref = out.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        out = {**root.get("$defs", {}).get(ref.split("/")[-1], {}), **{k: v for k, v in out.items() if k != "$ref"}}
    return out


def table_for(service: str, arg: str, prop: Mapping[str, Any], task_pools: Pools) -> str | None:
    """The table whose record ids the argument takes, or None when it names no record."""
    key = (service, arg, str(prop.get("description", "")))
    if key not in task_pools.tables:
        task_pools.tables[key] = _table_for(service, arg, prop, task_pools)
    return task_pools.tables[key]


def _table_for(service: str, arg: str, prop: Mapping[str, Any], task_pools: Pools) -> str | None:
    names = [t.name for t in services()[service].tables]
    stem = re.sub(r"_ids?$", "", arg)
    for s in dict.fromkeys((stem, stem.split("_")[-1])):
        plurals = (s + "s", s + "es", s[:-1] + "ies" if s.endswith("y") else s + "s", s)
        for p in plurals:
            hit = next((n for n in names if n == p or n.endswith("_" + p)), None)
            if hit is not None:
                return hit
    if (stem in _USER_ROLES or stem.endswith("_user")) and "users" in names:
        return "users"
    ex = example(prop)
    ex = ex[0] if isinstance(ex, list) and ex else ex
    m = _ID_PREFIX.match(ex) if isinstance(ex, str) else None
    if m:
        for n in names:
            if any(i.startswith(m.group(1)) for i in task_pools.ids(service, n)):
                return n
    return None


def is_address_arg(arg: str, prop: Mapping[str, Any]) -> bool:
    ex = example(prop)
    ex = ex[0] if isinstance(ex, list) and ex else ex
    return arg in _ADDRESS_ARGS or (isinstance(ex, str) and _ADDRESS.match(ex) is not None)


def target_arg(service: str, spec: ToolSpec, task_pools: Pools) -> str | None:
    """The tool's first required argument that names a record of the task (the record the call is 'on')."""
    key = (service, spec.name)
    if key not in task_pools.targets:
        task_pools.targets[key] = _target_arg(service, spec, task_pools)
    return task_pools.targets[key]


def _target_arg(service: str, spec: ToolSpec, task_pools: Pools) -> str | None:
    root = schema_of(spec)
    for arg in root.get("required", []):
        prop = concrete(root["properties"][arg], root)
        if prop.get("type") != "string":
            continue
        table = table_for(service, arg, prop, task_pools)
        if table is not None and task_pools.ids(service, table):
            return arg
    return None


def target_table(service: str, spec: ToolSpec, task_pools: Pools) -> str | None:
    arg = target_arg(service, spec, task_pools)
    if arg is None:
        return None
    root = schema_of(spec)
    return table_for(service, arg, concrete(root["properties"][arg], root), task_pools)


def target_ids(service: str, spec: ToolSpec, task_pools: Pools) -> list[str] | None:
    """The records the tool can be called on (None for a tool that is not called on a record; empty when none
    fits, e.g. ``send_draft`` where no message is a draft)."""
    arg = target_arg(service, spec, task_pools)
    table = target_table(service, spec, task_pools)
    if arg is None or table is None:
        return None
    return task_pools.ids_like(service, table, re.sub(r"_ids?$", "", arg).split("_")[-1], strict=True)


MAX_COLLEAGUES = 20


def colleagues(task: Task) -> dict[str, list[str]]:
    """The user's colleagues by service: the addresses in the service's ``users`` and ``mailboxes`` at the user's
    own domain (the primary user's or mailbox's), the user left out; a service with none of its own gets everyone
    the others have (mail reaches anyone). At most :data:`MAX_COLLEAGUES` each."""
    people = {
        name: [(str(r.get("email") or r.get("address") or "").lower(), bool(r.get("is_primary"))) for r in rows]
        for name, records in task.initial_records.items()
        for rows in [[*records.get("users", []), *records.get("mailboxes", [])]]
    }
    user = {a for found in people.values() for a, primary in found if primary and domain_of(a)}
    ours = {domain_of(a) for a in user}
    found_by = {
        name: sorted({a for a, _ in found if a not in user and domain_of(a) in ours}) for name, found in people.items()
    }
    anyone = sorted({a for found in found_by.values() for a in found})
    return {name: (found_by.get(name) or anyone)[:MAX_COLLEAGUES] for name in task.services}
