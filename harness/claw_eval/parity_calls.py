"""The call sequences parity plays on both sides: one scripted, and N drawn from a seeded random generator.

Arguments come from the tool's ``input_schema`` as the task declares it, and their values from the task's fixtures
(:class:`Pools`: every value the fixture files hold, by the key that holds it), so an id argument names a record
that exists:

- the **scripted** sequence calls each declared tool once, with its required arguments and any optional id
  argument, values taken in fixture order; tools that delete, remove or cancel come last, so the others still find
  their records;
- each **random** sequence is 2 to 6 calls of tools drawn at random (writes included), each optional argument given
  half of the time, values drawn from the fixtures; one id argument in eight names a record that does not exist
  (``todo_999`` for ``todo_001``), to exercise the not-found answers.

A value with no fixture of its key comes from the schema: its ``enum``, the options a description lists in
parentheses (``Filter by status (pending/completed/all)``), its ``default``, or a made-up value of its type.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

MISSING_ID_RATE = 1 / 8
OPTIONAL_RATE = 0.5
_LAST = ("delete", "remove", "cancel", "archive")
_OPTIONS = re.compile(r"\(([^()]*?/[^()]*?)\)")
_ID_KEY = re.compile(r"(^id$|_id$)")


@dataclass(frozen=True)
class Call:
    tool: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Play:
    """One sequence of calls, played on both sides."""

    name: str
    """``scripted`` or ``random-<n>``."""
    calls: tuple[Call, ...]


def id_key(key: str) -> bool:
    """Whether a field or argument of this name holds a record id (``id``, ``message_id``)."""
    return bool(_ID_KEY.search(key))


@dataclass
class Pools:
    """Every scalar the fixtures hold, by the key that holds it (lists of scalars are flattened under their key),
    in the order first seen."""

    by_key: dict[str, list[Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, documents: Iterable[Any]) -> Pools:
        pools = cls()
        for document in documents:
            for key, value in _scalars(document, ""):
                held = pools.by_key.setdefault(key, [])
                if value not in held:
                    held.append(value)
        return pools

    def ids(self) -> set[str]:
        """Every string the fixtures hold under an id key: the ids both sides start from."""
        return {v for k, vs in self.by_key.items() if id_key(k) for v in vs if isinstance(v, str)}

    def strings(self) -> set[str]:
        return {v for vs in self.by_key.values() for v in vs if isinstance(v, str)}

    def id_values(self, key: str) -> list[str]:
        """Ids for an argument named ``key``: the fixtures' values of that key (``ticket_ids`` → ``ticket_id``), else
        of its ``<record>_id`` cousins, else every id."""
        singular = key[:-1] if key.endswith("_ids") else key
        own = [v for v in self.by_key.get(singular, []) if isinstance(v, str)]
        if own:
            return own
        base = singular.removesuffix("_id").split("_")[-1]
        cousins = [v for k, vs in self.by_key.items() if id_key(k) and base in k for v in vs if isinstance(v, str)]
        return cousins or sorted(self.ids())


def _scalars(value: Any, key: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _scalars(v, str(k))
    elif isinstance(value, list):
        for item in value:
            yield from _scalars(item, key)
    elif key and value is not None:
        yield key, value


def missing_id(known: str, ids: set[str]) -> str:
    """An id shaped like ``known`` that no record has: its digits turned to nines (``todo_999``)."""
    candidate = re.sub(r"\d", "9", known) if re.search(r"\d", known) else known + "_missing"
    while candidate in ids:
        candidate += "9"
    return candidate


class Drawer:
    """Arguments for the declared tools, from the fixtures (``rng`` None: the scripted, first-value choice)."""

    def __init__(self, pools: Pools, rng: random.Random | None) -> None:
        self.pools = pools
        self.rng = rng
        self.ids = pools.ids()

    def pick(self, options: list[Any]) -> Any:
        return options[0] if self.rng is None else self.rng.choice(options)

    def arguments(self, tool: Mapping[str, Any]) -> dict[str, Any]:
        schema = tool.get("input_schema") or {}
        props: dict[str, Any] = schema.get("properties") or {}
        required = set(schema.get("required") or [])
        out: dict[str, Any] = {}
        for name, prop in props.items():
            if name in required:
                wanted = True
            elif self.rng is None:
                wanted = id_key(name) or name.endswith("_ids")
            else:
                wanted = self.rng.random() < OPTIONAL_RATE
            if wanted:
                out[name] = self.value(name, prop if isinstance(prop, dict) else {})
        return out

    def value(self, name: str, prop: Mapping[str, Any]) -> Any:
        kind = prop.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "string")
        if prop.get("enum"):
            return self.pick(list(prop["enum"]))
        if kind == "array":
            item = prop.get("items") if isinstance(prop.get("items"), dict) else {}
            count = 1 if self.rng is None else self.rng.randint(1, 2)
            singular = name[:-1] if name.endswith("s") else name
            return [self.value(singular if name.endswith("_ids") else name, item or {}) for _ in range(count)]
        if id_key(name) and kind in (None, "string"):
            known = self.pools.id_values(name)
            if not known:
                return f"{name}_1"
            chosen = str(self.pick(known))
            if self.rng is not None and self.rng.random() < MISSING_ID_RATE:
                return missing_id(chosen, self.ids)
            return chosen
        if kind == "boolean":
            return bool(self.pick([True, False])) if self.rng is not None else bool(prop.get("default", True))
        if kind == "integer":
            return self._number(name, prop, int)
        if kind == "number":
            return self._number(name, prop, float)
        if kind == "object":
            held = [v for v in self.pools.by_key.get(name, []) if isinstance(v, dict)]
            return self.pick(held) if held else {}
        return self._text(name, prop)

    def _number(self, name: str, prop: Mapping[str, Any], kind: type) -> Any:
        held = [v for v in self.pools.by_key.get(name, []) if isinstance(v, int | float) and not isinstance(v, bool)]
        if self.rng is None and "default" in prop:
            return prop["default"]
        if held:
            return kind(self.pick(held))
        low = prop.get("minimum", 1)
        high = prop.get("maximum", max(low, 10))
        if self.rng is None:
            return kind(low)
        return self.rng.randint(int(low), int(high)) if kind is int else round(self.rng.uniform(low, high), 2)

    def _text(self, name: str, prop: Mapping[str, Any]) -> str:
        held = [v for v in self.pools.by_key.get(name, []) if isinstance(v, str)]
        if held:
            return str(self.pick(held))
        listed = _OPTIONS.search(str(prop.get("description") or ""))
        if listed:
            options = [o.strip() for o in re.split(r"[/|]", listed.group(1)) if o.strip()]
            if options and all(re.fullmatch(r"[\w.-]{1,30}", o) for o in options):
                return str(self.pick(options))
        if isinstance(prop.get("default"), str):
            return str(prop["default"])
        if "date" in name:
            return "2026-03-10"
        if name.endswith(("_at", "time")):
            return "2026-03-10T10:00:00Z"
        if name in ("to", "email", "recipient") or name.endswith("email"):
            mails = sorted(v for v in self.pools.strings() if re.fullmatch(r"[^@\s]+@[^@\s]+\.\w+", v))
            return str(self.pick(mails)) if mails else "someone@example.com"
        suffix = "" if self.rng is None else f" {self.rng.randint(1, 999)}"
        return f"Parity check {name}{suffix}"


def scripted_sequence(tools: Sequence[Mapping[str, Any]], pools: Pools) -> Play:
    """Each declared tool once, with valid arguments from the fixtures; destructive tools last."""
    ordered = sorted(tools, key=lambda t: any(word in str(t.get("name")) for word in _LAST))
    drawer = Drawer(pools, None)
    return Play("scripted", tuple(Call(str(t["name"]), drawer.arguments(t)) for t in ordered))


def random_sequences(tools: Sequence[Mapping[str, Any]], pools: Pools, count: int, seed: int) -> list[Play]:
    """``count`` sequences of 2-6 calls, drawn from ``random.Random(seed)``."""
    if not tools:
        return []
    rng = random.Random(seed)
    drawer = Drawer(pools, rng)
    out = []
    for n in range(1, count + 1):
        calls = []
        for _ in range(rng.randint(2, 6)):
            tool = rng.choice(tools)
            calls.append(Call(str(tool["name"]), drawer.arguments(tool)))
        out.append(Play(f"random-{n}", tuple(calls)))
    return out
