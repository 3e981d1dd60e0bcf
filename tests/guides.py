"""Helpers for the tests of the extension guides: run a guide's code block as a module, and install a package
the way pip would (a module plus a ``.dist-info`` with its entry points) into a folder put on ``sys.path``."""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).parents[1]


def python_blocks(guide: str) -> list[str]:
    """The ```python blocks of a guide (a path from the repository root), in order."""
    return re.findall(r"```python\n(.+?)\n```", (ROOT / guide).read_text(encoding="utf-8"), flags=re.S)


@contextmanager
def guide_module(folder: Path, name: str, code: str) -> Iterator[ModuleType]:
    """``code`` written to ``folder/name.py`` and imported (as a reader who copied it would), removed after."""
    (folder / f"{name}.py").write_text(code + "\n", encoding="utf-8")
    sys.path.insert(0, str(folder))
    importlib.invalidate_caches()
    try:
        yield importlib.import_module(name)
    finally:
        sys.modules.pop(name, None)
        sys.path.remove(str(folder))


def install_dist(folder: Path, dist: str, entry_points: Mapping[str, Mapping[str, str]]) -> None:
    """A ``dist-0.1.dist-info`` in ``folder`` naming ``{group: {name: "module:attr"}}``; with ``folder`` on
    ``sys.path`` (or ``PYTHONPATH``), ``importlib.metadata.entry_points`` finds them as it finds pip's."""
    info = folder / f"{dist}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n", encoding="utf-8")
    lines = [f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) for group, eps in entry_points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines), encoding="utf-8")
