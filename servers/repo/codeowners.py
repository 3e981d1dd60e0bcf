"""CODEOWNERS matching, as GitHub reads the file: of the rules whose pattern matches a path, the last one wins.

A pattern starting with '/' is anchored at the repository root; one ending with '/' matches a folder and
everything under it; one with no '/' but a trailing one matches a name (file or folder) anywhere; '*' matches
within a name, '**' across folders.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any


@lru_cache(maxsize=512)
def _regex(pattern: str) -> re.Pattern[str]:
    anchored = pattern.startswith("/") or "/" in pattern.rstrip("/")
    body = pattern.strip("/")
    folder = pattern.endswith("/")
    out = ""
    i = 0
    while i < len(body):
        if body.startswith("**", i):
            out += ".*"
            i += 2
        elif body[i] == "*":
            out += "[^/]*"
            i += 1
        elif body[i] == "?":
            out += "[^/]"
            i += 1
        else:
            out += re.escape(body[i])
            i += 1
    prefix = "" if anchored else "(?:.*/)?"
    suffix = "/.*" if folder else "(?:/.*)?"
    return re.compile(f"^{prefix}{out}{suffix}$")


def matches(pattern: str, path: str) -> bool:
    """Whether a CODEOWNERS pattern covers ``path`` (a path from the root, no leading '/')."""
    if pattern.strip() == "*":
        return True
    return _regex(pattern.strip()).match(path.lstrip("/")) is not None


def owners_of(rules: Sequence[Mapping[str, Any]], path: str) -> list[str]:
    """The owners of ``path``: those of the last rule (by ``line``) that matches it, '@' removed ([] if none)."""
    found: list[str] = []
    for rule in sorted(rules, key=lambda r: int(r["line"])):
        if matches(str(rule["pattern"]), path):
            found = [str(o).removeprefix("@") for o in rule["owners"]]
    return found
