"""Typed references between reference steps: ``{"$ref": "step_id.path.to.field"}`` in a later step's arguments
stands for the value at that path of an earlier step's result. A reference is resolved by looking the path up,
never by evaluating anything. (:mod:`coworkenv.synth.contract.task` hands these names on too.)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from coworkenv.synth.contract.matchers import get_path


class RefError(ValueError):
    """A ``$ref`` that names no earlier step, or a path that step's result does not have."""


_REF_HEAD = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)(?:\.(.+))?$")


def is_ref(value: Any) -> bool:
    return isinstance(value, Mapping) and set(value) == {"$ref"} and isinstance(value["$ref"], str)


def split_ref(ref: str) -> tuple[str, str]:
    """``"find.items.0.id"`` → ``("find", "items.0.id")``; raises RefError when malformed."""
    m = _REF_HEAD.match(ref)
    if not m:
        raise RefError(f"$ref {ref!r} must look like 'step_id.path.to.field'")
    return m.group(1), m.group(2) or ""


def find_refs(value: Any, path: str = "") -> list[tuple[str, str]]:
    """Every ``$ref`` inside a value, as (json path relative to the value, ref text)."""
    if is_ref(value):
        return [(path, value["$ref"])]
    if isinstance(value, Mapping):
        return [hit for k, v in value.items() for hit in find_refs(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [hit for i, v in enumerate(value) for hit in find_refs(v, f"{path}[{i}]")]
    return []


_SCALARS = frozenset({str, int, float, bool, type(None)})


def resolve_refs(value: Any, results: Mapping[str, Any]) -> Any:
    """Replace every ``{"$ref": "step.path"}`` by the value at that path of that step's result."""
    if type(value) is dict and "$ref" not in value:
        flat = _flat_copy(value)
        if flat is not None:
            return flat
    if is_ref(value):
        step, path = split_ref(value["$ref"])
        if step not in results:
            raise RefError(f"$ref {value['$ref']!r}: no earlier step {step!r} with a result")
        present, found = get_path(results[step], path)
        if not present:
            raise RefError(f"$ref {value['$ref']!r}: the result of step {step!r} has no {path!r}")
        return found
    if isinstance(value, Mapping):
        return {k: resolve_refs(v, results) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve_refs(v, results) for v in value]
    return value


def _flat_copy(value: dict[str, Any]) -> dict[str, Any] | None:
    """What :func:`resolve_refs` makes of an object of plain values and lists of them (most arguments: nothing to
    resolve, lists copied), or None for anything deeper."""
    out: dict[str, Any] = {}
    for k, v in value.items():
        kind = type(v)
        if kind in _SCALARS:
            out[k] = v
        elif kind is list and all(type(x) in _SCALARS for x in v):
            out[k] = list(v)
        else:
            return None
    return out
