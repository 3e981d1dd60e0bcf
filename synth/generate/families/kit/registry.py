"""The scenario families, by name: every module of :mod:`coworkenv.synth.generate.families` that marks a family with
:func:`register_family`, and those other packages add in the ``coworkenv.families`` entry-point group (see
``synth/generate/families/README.md``)."""

from __future__ import annotations

from typing import TypeVar

from coworkenv.servers.kit.plugins import unknown_name
from coworkenv.synth.generate.families.kit.base import Family

FAMILIES: dict[str, Family] = {}
F = TypeVar("F", bound=type[Family])


def add_family(family: Family | type[Family]) -> Family:
    """Add a family (a :class:`Family` instance, or a subclass made with no arguments) under its ``name``."""
    if isinstance(family, type) and issubclass(family, Family):
        family = family()
    if not isinstance(family, Family):
        raise TypeError(f"a family must be a coworkenv Family (subclass or instance), not {type(family).__name__}")
    name = getattr(family, "name", "")
    if not isinstance(name, str) or not name:
        raise ValueError(f"family {type(family).__name__} has no name; set the class attribute name = '...'")
    known = FAMILIES.get(name)
    if known is not None and type(known) is not type(family):
        raise ValueError(f"a family named {name!r} is already registered; give yours another name")
    FAMILIES[name] = family
    return family


def register_family(cls: F) -> F:
    """Class decorator: ``@register_family`` above ``class MyFamily(Family)`` makes it a family of the registry."""
    add_family(cls)
    return cls


def unregister_family(name: str) -> None:
    """Take a family out of the registry (tests that add one put things back with it)."""
    FAMILIES.pop(name, None)


SHIPPED_PACKAGE = "coworkenv.synth.generate.families"


def shipped_families() -> dict[str, Family]:
    """The families that ship with coworkenv (a module of :mod:`coworkenv.synth.generate.families`), without the
    registered ones and the plugins': what a check of the shipped families iterates over, so that a family installed
    beside them changes nothing there (a plugin family is checked by its own tests: ``coworkenv.synth.testing``)."""
    return {name: f for name, f in FAMILIES.items() if type(f).__module__.startswith(SHIPPED_PACKAGE + ".")}


def get_family(name: str) -> Family:
    try:
        return FAMILIES[name]
    except KeyError:
        raise KeyError(unknown_name("family", name, FAMILIES, listed="known")) from None
