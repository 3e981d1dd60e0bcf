"""The procedural scenario families, by name. Each one is code that builds tasks of one work situation.

Every module of this package is imported here, so a family is one file: a class marked ``@register_family``
(see ``README.md`` in this folder). What families are built with (the builder, the registry, names, seeds, texts,
phrasing) is the sub-package :mod:`~coworkenv.synth.generate.families.kit`. Families of other packages come from
the ``coworkenv.families`` entry-point group."""

from __future__ import annotations

import importlib
import pkgutil

from coworkenv.servers.kit.plugins import FAMILIES_GROUP, register_entry_points
from coworkenv.synth.generate.families.kit.base import CAPABILITIES, LEVELS, Family, TaskBuilder
from coworkenv.synth.generate.families.kit.registry import (
    FAMILIES,
    add_family,
    get_family,
    register_family,
    shipped_families,
    unregister_family,
)

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.ispkg):
    importlib.import_module(f"{__name__}.{_module}")
register_entry_points(FAMILIES_GROUP, add_family)

__all__ = [
    "CAPABILITIES",
    "FAMILIES",
    "LEVELS",
    "Family",
    "TaskBuilder",
    "add_family",
    "get_family",
    "register_family",
    "shipped_families",
    "unregister_family",
]
