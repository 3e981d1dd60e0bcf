"""Layering is one way: servers ← synth ← harness ← train. A lower layer never imports a higher one."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
ORDER = ["servers", "synth", "harness", "train"]


def imported_layers(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if len(parts) > 1 and parts[0] == "coworkenv" and parts[1] in ORDER:
                found.add(parts[1])
    return found


@pytest.mark.parametrize("layer", ORDER[:-1])
def test_a_layer_imports_nothing_above_it(layer: str) -> None:
    above = set(ORDER[ORDER.index(layer) + 1 :])
    offenders = {
        str(path.relative_to(ROOT)): sorted(imported_layers(path) & above)
        for path in (ROOT / layer).rglob("*.py")
        if imported_layers(path) & above
    }
    assert offenders == {}
