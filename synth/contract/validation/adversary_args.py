"""Arguments for adversarial agents: valid, plausible tool calls built from a tool's input JSON Schema and
what a blind agent can find in the task's services (every seed record — as listing everything would show).

An argument that names a record (``ticket_id``, ``charge``, ``channel``, ``label_ids``) takes the id of a
record of the table it names (``tickets``, ``charges``, ...; by name, else by the id prefix of the schema's
example); an address takes an address seen in the records; anything else takes the schema's example, an
enum value, or a value within the schema's bounds. Every argument set is checked against the tool's own
arguments model before it is used, so adversaries make valid calls (business errors aside).
"""

from __future__ import annotations

import ast
import copy
import functools
import hashlib
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ValidationError

from coworkenv.servers.kit import ToolSpec
from coworkenv.servers.registry import SERVICES
from coworkenv.synth.contract.task import Task
from coworkenv.synth.contract.turns import keywords

Row = dict[str, Any]
Mode = Literal["plausible", "random"]
_EXAMPLE = re.compile(r"Example: (.+)$", re.S)
_ADDRESS = re.compile(r"^[^@\s<>]+@[^@\s<>]+\.[A-Za-z]{2,}$")
_ID_PREFIX = re.compile(r"^([a-z]+_)")
_USER_ROLES = {"requester", "assignee", "author", "owner", "user", "users", "members", "to", "from_user"}
_ADDRESS_ARGS = {"to", "cc", "bcc", "email", "requested_by"}
_SKIP_OPTIONAL = {"as_user", "user_id", "page_token", "base_revision", "cc", "bcc", "reply_to_message_id"}
_MONEY = re.compile(r"refund|payout|bank|payment|transfer|charge")
_TEXT = "Following up on this as requested."


def seed_of(*parts: object) -> int:
    """A stable 64-bit seed from any parts (the same across processes, unlike ``hash``)."""
    return int.from_bytes(hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:8], "big")


def is_money_tool(name: str) -> bool:
    """Tools that move money or change where it goes (refunds, payouts, bank details)."""
    return _MONEY.search(name) is not None


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
        (a ``draft_id`` takes a message labelled DRAFT): all of them if none does, or none when ``strict``."""
        ids = self.ids(service, table)
        if word in table or len(word) < 4:
            return ids
        key = (service, table, word)
        if key not in self.like:
            rows = self.rows.get((service, table), [])
            self.like[key] = [str(r["id"]) for r in rows if any(word in s.casefold() for s in _strings(r))]
        return self.like[key] or ([] if strict else ids)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def pools(task: Task) -> Pools:
    """The task's records, ordered by how many of the request's words they hold (cached on the task)."""
    cached = task._cache.get("adversary_pools")
    if isinstance(cached, Pools):
        return cached
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
                for text in _strings(r):
                    if _ADDRESS.match(text.strip()):
                        seen.setdefault(text.strip().lower())
    out.addresses = list(seen)
    out.ranked = [(service, table, r) for _, _, service, table, r in sorted(ranked, key=lambda s: s[:2])]
    task._cache["adversary_pools"] = out
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


def _required(spec: ToolSpec) -> frozenset[str]:
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
    names = [t.name for t in SERVICES[service].tables]
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


def _is_address_arg(arg: str, prop: Mapping[str, Any]) -> bool:
    ex = example(prop)
    ex = ex[0] if isinstance(ex, list) and ex else ex
    return arg in _ADDRESS_ARGS or (isinstance(ex, str) and _ADDRESS.match(ex) is not None)


# ---------------------------------------------------------------------------------------------- building calls
@dataclass
class ArgBuilder:
    """Builds one tool call's arguments. ``plausible``: examples, enum values in turn, the target record;
    ``random``: random tools' random arguments within the schema (ids from the records, numbers in bounds)."""

    task_pools: Pools
    rng: random.Random
    mode: Mode = "plausible"
    turn: int = 0
    address: str | None = None
    last_first: bool = False
    """Plausible mode: take enum values from the end (terminal states — closed, lost — are listed last)."""

    def pick(self, items: Sequence[Any]) -> Any:
        seq = items if isinstance(items, list | tuple) else list(items)
        if self.mode == "random":
            return self.rng.choice(seq)
        k = self.turn % len(seq)
        return seq[-1 - k if self.last_first else k]

    def call(self, service: str, spec: ToolSpec, target: str | None = None) -> dict[str, Any] | None:
        """Valid arguments for the tool (on ``target`` for its first record argument), or None if none found."""
        root = schema_of(spec)
        required = _required(spec)
        on = target_arg(service, spec, self.task_pools)
        props = properties(spec)
        if self.mode == "plausible":  # what it wants then depends on the tool and the records only: worked out once
            key = (service, spec.name)
            wanted = self.task_pools.optional.get(key)
            if wanted is None:
                wanted = self.task_pools.optional[key] = [
                    a for a, prop in props.items() if a not in required and self._wants_optional(service, a, prop)
                ]
            optional = list(wanted)
        else:
            optional = [a for a, prop in props.items() if a not in required and self._wants_optional(service, a, prop)]
        if self.mode == "plausible" and on is not None and optional:
            # one change per call on a record, in turn (several at once are mostly refused together); with
            # last_first, the first status-like field (an enum), its values in turn from the last
            enums = [a for a in optional if "enum" in props[a]] if self.last_first else []
            turned = enums[:1] or [optional[self.turn % len(optional)]]
            optional = [a for a in optional if a == "page_size"] or turned
        full: dict[str, Any] = {}
        for arg, prop in props.items():
            if arg not in required and arg not in optional:
                continue
            value = self.value(service, arg, prop, root, target if arg == on else None)
            if value is not None:
                full[arg] = value
        for args in (full, {k: v for k, v in full.items() if k in required}):
            try:
                spec.args_model.model_validate(args)
            except ValidationError:
                continue
            return args
        return None

    def _wants_optional(self, service: str, arg: str, prop: Mapping[str, Any]) -> bool:
        if arg in _SKIP_OPTIONAL:
            return False
        if self.mode == "random":
            return arg != "page_size" and self.rng.random() < 0.5
        if arg == "page_size":
            return True
        if _is_address_arg(arg, prop):
            return False  # an address that must be unique would mostly be refused
        if table_for(service, arg, prop, self.task_pools) is not None:
            return prop.get("type") == "array"  # labels to add, members to invite; not another record
        return example(prop) is not None or "enum" in prop or prop.get("type") == "boolean"

    def value(
        self, service: str, arg: str, prop: Mapping[str, Any], root: Mapping[str, Any], target: str | None = None
    ) -> Any:
        kind = prop.get("type")
        if kind == "string" or (kind == "array" and concrete(prop.get("items", {}), root).get("type") == "string"):
            found = self._record_or_address(service, arg, prop, target)
            if found is not None:
                return [found] if kind == "array" else found
        if "enum" in prop:
            return self.pick(prop["enum"])
        if kind == "string":
            return self._text(prop)
        if kind in ("integer", "number"):
            return self._number(arg, prop, kind == "integer")
        if kind == "boolean":
            ex = example(prop)
            return self.rng.random() < 0.5 if self.mode == "random" else (ex if isinstance(ex, bool) else True)
        if kind == "array":
            item = self.value(service, arg, concrete(prop.get("items", {}), root), root)
            ex = example(prop)
            if self.mode == "plausible" and isinstance(ex, list) and ex:
                return copy.deepcopy(ex[:1])
            return [] if item is None else [item]
        if kind == "object":
            return self._object(service, prop, root)
        return None

    def _record_or_address(self, service: str, arg: str, prop: Mapping[str, Any], target: str | None) -> str | None:
        if target is not None:
            return target
        table = table_for(service, arg, prop, self.task_pools)
        ids = self.task_pools.ids_like(service, table, re.sub(r"_ids?$", "", arg).split("_")[-1]) if table else []
        if ids:
            return str(self.pick(ids))
        if _is_address_arg(arg, prop):
            if self.address is not None:
                return self.address
            if self.task_pools.addresses:
                return str(self.pick(self.task_pools.addresses))
        return None

    def _text(self, prop: Mapping[str, Any]) -> str:
        ex = example(prop)
        text = ex if isinstance(ex, str) and ex else _TEXT
        if self.mode == "random" and not isinstance(ex, str):
            text = f"{_TEXT} #{self.rng.randrange(1000)}"
        pattern = prop.get("pattern")
        if pattern and not re.search(pattern, text) and isinstance(ex, str):
            text = ex
        return text[: int(prop.get("maxLength", len(text)))] or "x"

    def _number(self, arg: str, prop: Mapping[str, Any], integer: bool) -> int | float:
        low = prop.get("minimum", prop["exclusiveMinimum"] + 1 if "exclusiveMinimum" in prop else 1)
        high = prop.get("maximum", prop["exclusiveMaximum"] - 1 if "exclusiveMaximum" in prop else None)
        ex = example(prop)
        if self.mode == "random":
            top = (
                high
                if high is not None
                else max(int(low) * 10, int(ex) * 2 if isinstance(ex, int | float) else 0, 10_000)
            )
            value: int | float = self.rng.randint(int(low), int(top))
        else:
            value = ex if isinstance(ex, int | float) and not isinstance(ex, bool) else low
            if arg == "page_size" and high is not None:
                value = high
        value = max(low, value if high is None else min(high, value))
        return int(value) if integer else float(value)

    def _object(self, service: str, prop: Mapping[str, Any], root: Mapping[str, Any]) -> dict[str, Any]:
        props = prop.get("properties")
        if not props:
            ex = example(prop)
            return copy.deepcopy(ex) if isinstance(ex, dict) and self.mode == "plausible" else {}
        out = {}
        for name, sub in props.items():
            sub = concrete(sub, root)
            if name in prop.get("required", []) or example(sub) is not None:
                value = self.value(service, name, sub, root)
                if value is not None:
                    out[name] = value
        return out


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
