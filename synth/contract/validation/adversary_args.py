"""Arguments for adversarial agents: valid, plausible tool calls built from a tool's input JSON Schema and
what a blind agent can find in the task's services (every seed record — as listing everything would show).

An argument that names a record (``ticket_id``, ``charge``, ``channel``, ``label_ids``) takes the id of a
record of the table it names (``tickets``, ``charges``, ...; by name, else by the id prefix of the schema's
example); an address takes an address seen in the records; anything else takes the schema's example, an
enum value, or a value within the schema's bounds. Every argument set is checked against the tool's own
arguments model before it is used, so adversaries make valid calls (business errors aside). The records and
the reading of the schemas are :mod:`.adversary_pools` (re-exported here).
"""

from __future__ import annotations

import copy
import hashlib
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ValidationError

from coworkenv.servers.kit import ToolSpec
from coworkenv.synth.contract.runner import Workbench
from coworkenv.synth.contract.validation.adversary_pools import (
    Pools,
    Row,
    build_pools,
    concrete,
    example,
    is_address_arg,
    properties,
    required_args,
    schema_of,
    table_for,
    target_arg,
    target_ids,
    target_table,
)

Mode = Literal["plausible", "random"]
_SKIP_OPTIONAL = {"as_user", "user_id", "page_token", "base_revision", "cc", "bcc", "reply_to_message_id"}
_MONEY = re.compile(r"refund|payout|bank|payment|transfer|charge")
_TEXT = "Following up on this as requested."


def pools(bench: Workbench) -> Pools:
    """The task's records as a blind agent finds them (:func:`~.adversary_pools.build_pools`), built once per
    workbench."""
    memos = bench.validation
    if memos.pools is None:
        memos.pools = build_pools(bench.task)
    return memos.pools


def seed_of(*parts: object) -> int:
    """A stable 64-bit seed from any parts (the same across processes, unlike ``hash``)."""
    return int.from_bytes(hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:8], "big")


def is_money_tool(name: str) -> bool:
    """Tools that move money or change where it goes (refunds, payouts, bank details)."""
    return _MONEY.search(name) is not None


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
        required = required_args(spec)
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
        if is_address_arg(arg, prop):
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
        if is_address_arg(arg, prop):
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


__all__ = [
    "ArgBuilder",
    "Mode",
    "Pools",
    "Row",
    "concrete",
    "example",
    "is_money_tool",
    "pools",
    "properties",
    "schema_of",
    "seed_of",
    "table_for",
    "target_arg",
    "target_ids",
    "target_table",
]
