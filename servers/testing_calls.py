"""Arguments drawn from a tool's input schema: plausible ones for required fields (:func:`filler`) and random, often
hostile, ones for the fuzz check (:func:`random_call`); every call is drawn from a ``random.Random``, so it repeats."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from coworkenv.servers.kit import Service

TRICKY: tuple[Any, ...] = (
    "'",
    "%",
    "_",
    '"',
    ";",
    "'; DROP TABLE x; --",
    "Ünïcødé ✓",
    "",
    " ",
    "\x00",
    "a" * 500,
    "2026-03-01T00:00:00Z",
    -1,
    0,
    2**63,
    -(2**63) - 1,
    1.5,
    float("nan"),
    True,
    None,
    [],
    {},
)
"""Values the fuzz check throws at every argument, beside the seed's ids and the schema's own enum values."""


def filler(prop: Mapping[str, Any], root: Mapping[str, Any]) -> Any:
    """A plausible value for a required argument: its example, first enum value, or a value of its type."""
    prop = resolved(prop, root)
    for key in ("default", "const"):
        if key in prop:
            return prop[key]
    if prop.get("enum"):
        return prop["enum"][0]
    for branch in prop.get("anyOf", []):
        if resolved(branch, root).get("type") != "null":
            return filler(branch, root)
    kind = prop.get("type")
    return {"integer": 1, "number": 1, "boolean": False, "array": [], "object": {}}.get(str(kind), "x")


def resolved(prop: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = prop.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target: Mapping[str, Any] = root.get("$defs", {}).get(ref.removeprefix("#/$defs/"), {})
        return target
    return prop


def random_call(service: Service, draw: random.Random, ids: Sequence[str]) -> tuple[str, dict[str, Any]]:
    spec = draw.choice(service.tools)
    schema = spec.input_schema()
    props = list(schema.get("properties", {}))
    enums = enum_values(schema)

    def scalar() -> Any:
        pick = draw.randrange(5)
        if pick == 0 and ids:
            return draw.choice(ids)
        if pick == 1 and enums:
            return draw.choice(enums)
        if pick == 2:
            return "".join(draw.choice("ab_-@. 0é✓'") for _ in range(draw.randint(0, 12)))
        if pick == 3:
            return draw.randint(-(2**40), 2**40)
        return draw.choice(TRICKY)

    def value() -> Any:
        shape = draw.randrange(6)
        if shape == 0:
            return [scalar() for _ in range(draw.randint(0, 3))]
        if shape == 1:
            return {draw.choice(["a", "id", "x"]): scalar() for _ in range(draw.randint(0, 2))}
        return scalar()

    args: dict[str, Any] = {}
    for _ in range(draw.randint(0, len(props) + 1)):
        key = draw.choice(props) if props and draw.random() < 0.9 else draw.choice(["unexpected", "", "id"])
        args[key] = value()
    if draw.random() < 0.5:  # often a call that is nearly right: every required argument present
        for name in schema.get("required", []):
            args.setdefault(name, draw.choice(ids) if name.endswith("_id") and ids else scalar())
    return spec.name, args


def enum_values(schema: Any) -> list[Any]:
    """Every ``enum`` and ``const`` value a JSON schema names, anywhere in it (what random arguments draw from)."""
    found: list[Any] = []
    if isinstance(schema, dict):
        found += schema.get("enum", [])
        if "const" in schema:
            found.append(schema["const"])
        for value in schema.values():
            found += enum_values(value)
    elif isinstance(schema, list):
        for item in schema:
            found += enum_values(item)
    return found
