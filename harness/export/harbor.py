"""Export tasks as Harbor task directories (``coworkenv export-tasks --format harbor TASKS --out DIR``).

One directory per task, in Harbor's layout, with the task's services as MCP sidecars (Harbor's MCP server task
form: a compose file beside the Dockerfile, the servers declared in ``task.toml``)::

    <task-id>/
      instruction.md              the request, and where to leave the final answer
      task.toml                   metadata, timeouts; [[environment.mcp_servers]]: each service at
                                  http://<service>:8000/mcp (streamable HTTP, bearer ${COWORKENV_TOKEN}); the
                                  verifier in a container of its own, fed each service's snapshot
      environment/Dockerfile      coworkenv installed; a `services` stage with the seeds; the agent's stage last
      environment/docker-compose.yaml  one sidecar per service: `coworkenv serve <service> --db ... --seed ...
                                  --now ... --transport http`, healthy once it listens; main starts after them
      environment/seeds/<service>.json  the task's records of each service
      solution/solve.sh           Harbor's oracle: `coworkenv play` runs the reference against the sidecars
      solution/task.json          the task, for the oracle
      tests/Dockerfile            the verifier's image: coworkenv, test.sh and task.json in /tests
      tests/test.sh               `coworkenv grade` on the snapshots; writes /logs/verifier/reward.json
      tests/task.json             the task, for the grader

After the agent stops, Harbor stops ``main`` and runs each ``[[verifier.collect]]`` hook in its sidecar:
``coworkenv snapshot`` copies the service's database (state and audit log) whole; the copies and the agent's
``/workspace/ANSWER.md`` are the ``[[artifacts]]`` Harbor puts into the verifier's container. The databases never
live where the agent runs, so only the tools change them, and the checks reach no image but the verifier's.
The token is read from ``$COWORKENV_TOKEN`` where ``harbor run`` runs (never written into the folder).
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

from coworkenv.harness.export.harbor_files import (
    ANSWER,
    TOKEN_TEMPLATE,
    VERIFIER_SH,
    compose,
    dockerfile,
    final_path,
    service_url,
    snapshot_command,
    solve_sh,
    verifier_dockerfile,
)
from coworkenv.harness.filenames import NAME_BYTES, cut_bytes
from coworkenv.servers.kit.atomic import atomic_path, write_atomic
from coworkenv.servers.kit.http_auth import TOKEN_ENV
from coworkenv.synth.contract.task import Task
from coworkenv.synth.contract.taskfile import save_task

RESERVED_SERVICE_NAMES = ("main",)
"""Compose service names Harbor uses itself: a sidecar may not take them."""


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
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _table(name: str, values: dict[str, Any], array: bool = False) -> str:
    head = f"[[{name}]]" if array else f"[{name}]"
    return "\n".join([head, *(f"{k} = {_toml_value(v)}" for k, v in values.items() if v is not None)]) + "\n"


class HarborExportError(ValueError):
    """Tasks that cannot be exported as they are (two of them would share a folder, a service named as Harbor's
    own container); the message is one line."""


def folder_name(task: Task) -> str:
    """The task's folder: its id in the characters Harbor's package names allow, without leading or trailing
    '.' and '-', cut to :data:`NAME_BYTES` bytes."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", task.id).strip(".-") or "task"
    return cut_bytes(name, NAME_BYTES).rstrip(".-") or "task"


def package_name(task: Task) -> str:
    return f"coworkenv/{folder_name(task)}"


def check_tasks(tasks: Sequence[Task]) -> None:
    """Refuse, before anything is written, two tasks that would be written to one folder, and a service whose
    name Harbor's compose file takes for itself."""
    owner: dict[str, str] = {}
    for task in tasks:
        reserved = [s for s in task.services if s in RESERVED_SERVICE_NAMES]
        if reserved:
            raise HarborExportError(
                f"task {cut_bytes(task.id, 80)!r} uses a service named {reserved[0]!r}, the name of Harbor's own "
                "container; register the service under another name to export it"
            )
        name = folder_name(task)
        first = owner.setdefault(name, task.id)
        if first != task.id:
            raise HarborExportError(
                f"tasks {cut_bytes(first, 80)!r} and {cut_bytes(task.id, 80)!r} would both be written to the Harbor "
                f"folder {cut_bytes(name, 80)!r} (ids differ only in leading or trailing '.' or '-', or after "
                f"{NAME_BYTES} bytes); give one of them another id and export again"
            )


def task_toml(task: Task, agent_timeout_s: float, verifier_timeout_s: float) -> str:
    """Harbor's ``task.toml``: the package, metadata, timeouts; the services as streamable-HTTP MCP servers (the
    sidecars); a separate verifier fed each service's snapshot and the agent's answer."""
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
        _table("verifier", {"timeout_sec": verifier_timeout_s, "environment_mode": "separate"}),
    ]
    for name in task.services:
        parts.append(_table("verifier.collect", {"service": name, "command": snapshot_command(name)}, array=True))
    parts += [
        _table("agent", {"timeout_sec": agent_timeout_s}),
        _table("environment", {"build_timeout_sec": 900.0, "env": {TOKEN_ENV: TOKEN_TEMPLATE}}),
    ]
    for name in task.services:
        server = {
            "name": name,
            "transport": "streamable-http",
            "url": service_url(name),
            "headers": {"Authorization": f"Bearer {TOKEN_TEMPLATE}"},
        }
        parts.append(_table("environment.mcp_servers", server, array=True))
    for name in task.services:
        parts.append(_table("artifacts", {"source": final_path(name), "service": name}, array=True))
    parts.append(_table("artifacts", {"source": ANSWER}, array=True))
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


def _copy(source: Path, target: Path) -> None:
    with atomic_path(target) as tmp:
        shutil.copy2(source, tmp)


def write_task(
    task: Task,
    out: Path,
    install: str | None = None,
    agent_timeout_s: float = 1800.0,
    verifier_timeout_s: float = 300.0,
) -> Path:
    """Write ``task`` as a Harbor task directory under ``out``; its path. ``install`` is what the images
    pip-install (default: this coworkenv version); a path to a wheel is copied into the task and installed."""
    folder = out / folder_name(task)
    env, seeds, solution, tests = (folder / p for p in ("environment", "environment/seeds", "solution", "tests"))
    for part in (seeds, solution, tests):
        part.mkdir(parents=True, exist_ok=True)
    spec = install or default_install()
    wheel = Path(spec) if spec.endswith(".whl") and Path(spec).is_file() else None
    if wheel is not None:
        _copy(wheel, env / wheel.name)
        _copy(wheel, tests / wheel.name)
    wheel_name = wheel.name if wheel else None
    write_atomic(folder / "instruction.md", instruction(task))
    write_atomic(folder / "task.toml", task_toml(task, agent_timeout_s, verifier_timeout_s))
    write_atomic(env / "Dockerfile", dockerfile(spec, wheel_name))
    write_atomic(env / "docker-compose.yaml", compose(task))
    for name in task.services:
        write_atomic(seeds / f"{name}.json", json.dumps(task.seed(name), indent=2, ensure_ascii=False) + "\n")
    save_task(task, solution / "task.json")
    write_atomic(solution / "solve.sh", solve_sh(task), mode=0o755)
    write_atomic(tests / "Dockerfile", verifier_dockerfile(spec, wheel_name))
    save_task(task, tests / "task.json")
    write_atomic(tests / "test.sh", VERIFIER_SH, mode=0o755)
    return folder


def export_harbor(tasks: Sequence[Task], out: Path, install: str | None = None) -> list[Path]:
    """Write every task as a Harbor task directory under ``out``; their paths. Tasks that cannot be exported as
    they are raise :class:`HarborExportError` before anything is written."""
    check_tasks(tasks)
    out.mkdir(parents=True, exist_ok=True)
    return [write_task(task, out, install) for task in tasks]
