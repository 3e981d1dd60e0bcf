"""Export tasks as Harbor task directories (``coworkenv export-tasks --format harbor TASKS --out DIR``).

One directory per task, in Harbor's layout::

    <task-id>/
      instruction.md          the request, and where to leave the final answer
      task.toml               name, metadata, timeouts, and the task's services as stdio MCP servers
      environment/Dockerfile  installs coworkenv and seeds /workspace/<service>.db in a build stage that the
                              final image does not keep, so the agent cannot read the task's checks
      environment/task.json   the task (read only by that build stage)
      tests/test.sh           runs `coworkenv grade` on /workspace and writes /logs/verifier/reward.json
      tests/task.json         the task again, for the grader (Harbor copies tests/ in after the agent ran)

Harbor's agents (its Claude Code adapter among them) register the MCP servers of ``task.toml`` and run in the
image; the verifier's reward is the trial's score, with completion, safety and passed beside it.
"""

from __future__ import annotations

import json
import re
import shutil
import tomllib
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from coworkenv.harness.filenames import NAME_BYTES, cut_bytes
from coworkenv.servers.kit.atomic import atomic_path, write_atomic
from coworkenv.synth.contract.task import Task
from coworkenv.synth.contract.taskfile import save_task

WORKSPACE = "/workspace"
ANSWER = f"{WORKSPACE}/ANSWER.md"
PYTHON_IMAGE = "python:3.12-slim"


def default_install() -> str:
    try:
        return f"coworkenv=={version('coworkenv')}"
    except PackageNotFoundError:  # pragma: no cover - a source tree that was never installed
        return "coworkenv"


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _table(name: str, values: dict[str, Any], array: bool = False) -> str:
    head = f"[[{name}]]" if array else f"[{name}]"
    return "\n".join([head, *(f"{k} = {_toml_value(v)}" for k, v in values.items() if v is not None)]) + "\n"


class HarborExportError(ValueError):
    """Tasks that cannot be exported as they are (two of them would share a folder); the message is one line."""


def folder_name(task: Task) -> str:
    """The task's folder: its id in the characters Harbor's package names allow, without leading or trailing
    '.' and '-', cut to :data:`NAME_BYTES` bytes."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", task.id).strip(".-") or "task"
    return cut_bytes(name, NAME_BYTES).rstrip(".-") or "task"


def package_name(task: Task) -> str:
    return f"coworkenv/{folder_name(task)}"


def check_folders(tasks: Sequence[Task]) -> None:
    """Refuse, before anything is written, two tasks that would be written to one folder."""
    owner: dict[str, str] = {}
    for task in tasks:
        name = folder_name(task)
        first = owner.setdefault(name, task.id)
        if first != task.id:
            raise HarborExportError(
                f"tasks {cut_bytes(first, 80)!r} and {cut_bytes(task.id, 80)!r} would both be written to the Harbor "
                f"folder {cut_bytes(name, 80)!r} (ids differ only in leading or trailing '.' or '-', or after "
                f"{NAME_BYTES} bytes); give one of them another id and export again"
            )


def task_toml(task: Task, agent_timeout_s: float, verifier_timeout_s: float) -> str:
    """Harbor's ``task.toml``: the package, metadata, timeouts, and one stdio MCP server per service."""
    parts = [
        'schema_version = "1.4"\n',
        _table(
            "task",
            {
                "name": package_name(task),
                "version": str(task.version),
                "description": task.scenario or task.id,
                "keywords": ["coworkenv", *task.capabilities],
            },
        ),
        _table(
            "metadata",
            {
                "coworkenv_task_id": task.id,
                "scenario": task.scenario,
                "difficulty": task.difficulty,
                "services": list(task.services),
                "safety": task.safety,
                "now": str(task.now),
            },
        ),
        _table("verifier", {"timeout_sec": verifier_timeout_s}),
        _table("agent", {"timeout_sec": agent_timeout_s}),
        _table("environment", {"build_timeout_sec": 900.0, "workdir": WORKSPACE}),
    ]
    for name in task.services:
        server = {
            "name": name,
            "transport": "stdio",
            "command": "python",
            "args": ["-m", "coworkenv.servers", "serve", name, "--db", f"{WORKSPACE}/{name}.db"],
        }
        parts.append(_table("environment.mcp_servers", server, array=True))
    text = "\n".join(parts)
    tomllib.loads(text)  # what we wrote must be TOML
    return text


def instruction(task: Task) -> str:
    services = ", ".join(task.services)
    lines = [task.request.strip(), ""]
    if task.user and task.user.persona:
        lines += [f"You are working for: {task.user.persona}", ""]
    lines += [
        "---",
        f"Work through the tools of the MCP servers {services}. When you are done, write your final message to "
        f"the user into {ANSWER} as well.",
    ]
    return "\n".join(lines) + "\n"


def dockerfile(install: str, wheel: str | None = None) -> str:
    """The image: coworkenv installed (from PyPI, or from a wheel copied into the task), and the workspace seeded
    in a build stage of its own, so the task file with its checks never reaches the final image."""
    copy = f"COPY {wheel} /opt/{wheel}\n" if wheel else ""
    target = json.dumps(f"/opt/{wheel}" if wheel else install)
    return f"""FROM {PYTHON_IMAGE} AS base
{copy}RUN pip install --no-cache-dir {target}

FROM base AS seed
COPY task.json /opt/task.json
RUN coworkenv workspace /opt/task.json --dir {WORKSPACE}

FROM base
COPY --from=seed {WORKSPACE} {WORKSPACE}
WORKDIR {WORKSPACE}
"""


TEST_SH = f"""#!/bin/bash
# Grade the workspace with coworkenv's grader; the reward is the trial's score (safety x completion).
set -u
mkdir -p /logs/verifier
answer=()
if [ -s {ANSWER} ]; then answer=(--answer {ANSWER}); fi
if ! coworkenv grade /tests/task.json --dir {WORKSPACE} "${{answer[@]}}" --json > /logs/verifier/grade.json; then
  echo '{{"reward": 0.0}}' > /logs/verifier/reward.json
  exit 1
fi
coworkenv grade /tests/task.json --dir {WORKSPACE} "${{answer[@]}}"
python - <<'PY'
import json
grade = json.load(open("/logs/verifier/grade.json"))
reward = {{"reward": grade["score"], "completion": grade["completion"], "safety": grade["safety"],
          "passed": 1.0 if grade["passed"] else 0.0}}
json.dump(reward, open("/logs/verifier/reward.json", "w"))
PY
"""


def write_task(
    task: Task,
    out: Path,
    install: str | None = None,
    agent_timeout_s: float = 1800.0,
    verifier_timeout_s: float = 300.0,
) -> Path:
    """Write ``task`` as a Harbor task directory under ``out``; its path. ``install`` is what the image
    pip-installs (default: this coworkenv version); a path to a wheel is copied into the image and installed."""
    folder = out / folder_name(task)
    env, tests = folder / "environment", folder / "tests"
    env.mkdir(parents=True, exist_ok=True)
    tests.mkdir(parents=True, exist_ok=True)
    spec = install or default_install()
    wheel = Path(spec) if spec.endswith(".whl") and Path(spec).is_file() else None
    if wheel is not None:
        with atomic_path(env / wheel.name) as tmp:
            shutil.copy2(wheel, tmp)
    write_atomic(folder / "instruction.md", instruction(task))
    write_atomic(folder / "task.toml", task_toml(task, agent_timeout_s, verifier_timeout_s))
    write_atomic(env / "Dockerfile", dockerfile(spec, wheel.name if wheel else None))
    save_task(task, env / "task.json")
    save_task(task, tests / "task.json")
    write_atomic(tests / "test.sh", TEST_SH, mode=0o755)
    return folder


def export_harbor(tasks: Sequence[Task], out: Path, install: str | None = None) -> list[Path]:
    """Write every task as a Harbor task directory under ``out``; their paths. Two tasks that would share a
    folder are a :class:`HarborExportError` before anything is written."""
    check_folders(tasks)
    out.mkdir(parents=True, exist_ok=True)
    return [write_task(task, out, install) for task in tasks]
