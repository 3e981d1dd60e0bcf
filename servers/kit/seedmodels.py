"""Seed validation without a Python call per time: the same record models with each ``Timestamp`` checked by a
pattern inside pydantic-core instead of by :func:`records._normalise_time`.

``Timestamp`` normalises any ISO 8601 time to the canonical ``2026-03-02T09:00:00Z`` in Python, one call per time:
a seed of 13,000 tickets makes 26,000 of them. Seeds almost always hold canonical times already, which the
normaliser returns unchanged; :func:`fast_model` is the model with those fields accepting exactly the canonical
text (a Rust pattern, the same ``\\d`` as the normaliser's). A seed it accepts validates to the very values the
real model gives; one it refuses (another time format, or any other error) is validated again by the real
model, which normalises it or says what is wrong in its own words.
"""

from __future__ import annotations

import functools
import types
import typing
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, StringConstraints, create_model

from coworkenv.servers.kit.records import _CANONICAL, _normalise_time

_CANONICAL_TEXT = Annotated[str, StringConstraints(pattern=f"^{_CANONICAL.pattern}$")]


def _normalises(meta: Any) -> bool:
    return isinstance(meta, BeforeValidator) and meta.func is _normalise_time


def _fast(tp: Any) -> Any:
    """``tp`` with every ``Timestamp`` in it (at any depth of unions, lists and nested models) made a canonical-text
    pattern; ``tp`` itself when it holds none."""
    origin = typing.get_origin(tp)
    if origin is Annotated:
        base, *meta = typing.get_args(tp)
        if any(_normalises(m) for m in meta) and base is str:
            rest = [m for m in meta if not _normalises(m)]
            return Annotated[(_CANONICAL_TEXT, *rest)] if rest else _CANONICAL_TEXT
        inner = _fast(base)
        return tp if inner is base else Annotated[(inner, *meta)]
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        new = tuple(_fast(a) for a in args)
        return tp if all(a is b for a, b in zip(args, new, strict=True)) else typing.Union[new]  # noqa: UP007
    if origin is list:
        (item,) = typing.get_args(tp)
        new_item = _fast(item)
        return tp if new_item is item else list[new_item]  # type: ignore[valid-type]
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return fast_model(tp) or tp
    return tp


@functools.cache
def fast_model(model: type[BaseModel]) -> type[BaseModel] | None:
    """``model`` with its times checked as canonical text (see the module), or None when it has no ``Timestamp``
    (or one this rewriting does not reach: the real model is used then)."""
    overrides: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        metadata = list(info.metadata)
        whole = Annotated[(info.annotation, *metadata)] if metadata else info.annotation
        fast = _fast(whole)
        if fast is whole:
            continue
        kept = info._copy()  # default, alias, description... as they were; the constraints come with ``fast``
        kept.metadata = []
        kept.annotation = None
        overrides[name] = (fast, kept)
    if not overrides:
        return None
    made = create_model(f"{model.__name__}Seed", __base__=model, **overrides)
    if tuple(made.model_fields) != tuple(model.model_fields):  # the stored column order must not move
        return None
    return made
