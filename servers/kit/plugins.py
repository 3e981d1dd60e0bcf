"""Open registries: what other packages add through entry points.

An installed package adds a service, a family or an agent backend by naming it in an entry-point group of its
``pyproject.toml``::

    [project.entry-points."coworkenv.services"]
    notes = "my_package.notes:SERVICE"

Each registry reads its group once, when it is first imported, with :func:`load_entry_points`. A plugin that
cannot be loaded costs one line on stderr naming it and what to do; it never stops the rest of coworkenv.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Callable, Collection, Iterator
from importlib.metadata import EntryPoint, entry_points
from typing import Any

SERVICES_GROUP = "coworkenv.services"
FAMILIES_GROUP = "coworkenv.families"
AGENTS_GROUP = "coworkenv.agents"


def _origin(ep: EntryPoint) -> str:
    dist = ep.dist.name if ep.dist is not None else "an unknown package"
    return f"entry point {ep.name!r} ({ep.value}) of {dist}"


def skip(ep: EntryPoint, why: str) -> None:
    """Say once, on one line, that a plugin was left out and what to do about it."""
    print(f"coworkenv: skipped the {ep.group} {_origin(ep)}: {why}; fix or uninstall that package", file=sys.stderr)


def load_entry_points(group: str) -> Iterator[tuple[EntryPoint, Any]]:
    """Each entry point of ``group`` with the object it names; one that fails to import is skipped (see
    :func:`skip`)."""
    for ep in entry_points(group=group):
        try:
            loaded = ep.load()
        except Exception as exc:
            skip(ep, f"{type(exc).__name__}: {' '.join(str(exc).split())}")
            continue
        yield ep, loaded


def register_entry_points(group: str, register: Callable[[Any], Any]) -> None:
    """Hand each plugin of ``group`` to ``register``; one it refuses (a ``ValueError`` or ``TypeError``: not the
    right kind of object, a name already taken) is skipped with its reason."""
    for ep, loaded in load_entry_points(group):
        try:
            register(loaded)
        except (ValueError, TypeError) as exc:
            skip(ep, str(exc))


def unknown_name(what: str, name: str, known: Collection[str], listed: str = "available") -> str:
    """``"unknown service 'tickts'; did you mean tickets? available: chat, crm, ..."``: a registry's answer to a
    name it does not hold."""
    close = difflib.get_close_matches(name, list(known), n=2, cutoff=0.6)
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    return f"unknown {what} {name!r}; {hint}{listed}: {', '.join(sorted(known))}"
