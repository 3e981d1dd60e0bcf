"""Run inside a venv that has Harbor installed with its dependencies (Python >= 3.12): load each task folder given
with Harbor's own task model and lint it with Harbor's own linter (its default rules), and print what it found as
JSON, one entry per folder. Compose files are linted by ``docker compose config``; without Docker's compose plugin
that part is left out and the entry says so (``compose_linted``). ``$COWORKENV_TOKEN`` must be set, as where
``harbor run`` runs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import harbor.lint.task as harbor_lint
from harbor.lint.models import DEFAULT_RULES
from harbor.models.task.task import Task


def compose_available() -> bool:
    docker = shutil.which("docker")
    if docker is None:
        return False
    return subprocess.run([docker, "compose", "version"], capture_output=True, timeout=30).returncode == 0


def check(folder: Path, compose_linted: bool) -> dict[str, Any]:
    task = Task(folder)
    config = task.config
    if not compose_linted:
        harbor_lint.lint_compose = lambda *args, **kwargs: []  # needs the Docker CLI; the rest of the linter does not
    findings = harbor_lint.lint_task(folder, selected_rules=set(DEFAULT_RULES))
    return {
        "folder": folder.name,
        "valid_dir": Task.is_valid_dir(folder),
        "name": task.name,
        "verifier_mode": None if config.verifier.environment_mode is None else config.verifier.environment_mode.value,
        "mcp_servers": [s.model_dump(mode="json") for s in config.environment.mcp_servers],
        "collect": [{"service": h.service, "command": h.command} for h in config.verifier.collect],
        "artifacts": [a if isinstance(a, str) else a.model_dump(mode="json") for a in config.artifacts],
        "findings": [f"{f.rule.value}: {f.message}" for f in findings],
        "compose_linted": compose_linted,
    }


if __name__ == "__main__":
    compose = compose_available()
    json.dump([check(Path(arg), compose) for arg in sys.argv[1:]], sys.stdout)
