"""The distribution ships every package and data file of the four folders, under the coworkenv.* names."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[1]
TOP = ("servers", "synth", "harness", "train")


def test_every_python_package_folder_is_listed_in_pyproject() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    on_disk = {
        "coworkenv." + ".".join(init.parent.relative_to(ROOT).parts)
        for top in TOP
        for init in (ROOT / top).rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert on_disk - listed == set(), "add these to [tool.setuptools] packages"
    assert listed - on_disk == set(), "these listed packages have no folder"


def _owning_package(path: Path) -> Path:
    folder = path.parent
    while not (folder / "__init__.py").exists():
        folder = folder.parent
    return folder


def test_every_data_file_is_shipped_as_package_data() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    data = config["tool"]["setuptools"]["package-data"]
    for top in TOP:
        for path in (ROOT / top).rglob("*"):
            if path.suffix not in (".json", ".yaml", ".yml") or "__pycache__" in path.parts:
                continue
            package_dir = _owning_package(path)
            package = "coworkenv." + ".".join(package_dir.relative_to(ROOT).parts)
            rel = path.relative_to(package_dir).as_posix()
            patterns = data.get(package, [])
            assert any(Path(rel).match(p) for p in patterns), f"{rel} is not in package-data of {package}"
