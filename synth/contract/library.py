"""The example tasks shipped with the package (``coworkenv/synth/examples/*.json``)."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from coworkenv.synth.contract.task import Task
from coworkenv.synth.contract.taskfile import load_task


def examples_dir() -> Path:
    return Path(str(files("coworkenv.synth").joinpath("examples")))


def example_paths() -> list[Path]:
    return sorted(examples_dir().glob("*.json"))


def example_ids() -> list[str]:
    return [p.stem for p in example_paths()]


def load_examples() -> list[Task]:
    return [load_task(p) for p in example_paths()]


def load_example(task_id: str) -> Task:
    path = examples_dir() / f"{task_id}.json"
    if not path.exists():
        raise KeyError(f"no shipped example {task_id!r}; examples: {', '.join(example_ids())}")
    return load_task(path)
