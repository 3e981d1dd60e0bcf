"""One family a file: every module of the families package registers exactly one family and imports no other
family; what families are built with lives in ``families/kit``, which registers none."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import coworkenv.synth.generate.families as families
import coworkenv.synth.generate.families.kit as kit
from coworkenv.synth.generate.families import FAMILIES

FAMILY_MODULES = sorted(m.name for m in pkgutil.iter_modules(families.__path__) if not m.ispkg)
KIT_MODULES = sorted(m.name for m in pkgutil.iter_modules(kit.__path__))


def _registered(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and any(isinstance(d, ast.Name) and d.id == "register_family" for d in node.decorator_list)
    ]


def test_every_family_module_registers_exactly_one_family() -> None:
    counts = {name: len(_registered(Path(families.__path__[0]) / f"{name}.py")) for name in FAMILY_MODULES}
    assert {name: n for name, n in counts.items() if n != 1} == {}


def test_every_registered_family_comes_from_its_own_file() -> None:
    shipped = {f: fam for f, fam in FAMILIES.items() if type(fam).__module__.startswith(families.__name__ + ".")}
    modules = [type(fam).__module__ for fam in shipped.values()]
    assert len(set(modules)) == len(modules) == len(FAMILY_MODULES)
    assert not any(m.startswith(kit.__name__) for m in modules)


def test_the_kit_registers_no_family_and_imports_no_family() -> None:
    for name in KIT_MODULES:
        path = Path(kit.__path__[0]) / f"{name}.py"
        assert _registered(path) == [], name
        imported = {n.module for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.ImportFrom)}
        assert not {m for m in imported if m and m.startswith(families.__name__ + ".") and ".kit" not in m}, name


def test_no_family_imports_another_family() -> None:
    for name in FAMILY_MODULES:
        module = importlib.import_module(f"{families.__name__}.{name}")
        tree = ast.parse(Path(str(module.__file__)).read_text())
        others = {
            n.module
            for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom)
            and (n.module or "").startswith(families.__name__ + ".")
            and not (n.module or "").startswith(kit.__name__)
        }
        assert others == set(), f"{name} imports {sorted(others)}: move what they share into families/kit"
