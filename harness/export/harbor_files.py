"""The files of a Harbor task folder besides ``task.toml``: the images, the services' compose file, the oracle and
the verifier (see :mod:`coworkenv.harness.export.harbor` for the layout and why).

Every path and port an exported folder uses is a constant here, so the folder's parts agree with each other and a
test can start the services exactly as the compose file declares them.
"""

from __future__ import annotations

import json
import shlex

from coworkenv.servers.kit.http_auth import TOKEN_ENV
from coworkenv.synth.contract.task import Task

WORKSPACE = "/workspace"
"""The agent's working folder in the main container (its final message goes to :data:`ANSWER`)."""
ANSWER = f"{WORKSPACE}/ANSWER.md"
STATE_DIR = "/var/lib/coworkenv"
"""Where each sidecar keeps its service's database, inside its own container only."""
FINAL_DIR = f"{STATE_DIR}/final"
"""Where each sidecar leaves the snapshot of its database once the agent stopped (a verifier artifact)."""
SEED_DIR = "/opt/coworkenv/seeds"
"""The seed records of the task's services in the services' image (``environment/seeds/`` copied in)."""
PORT = 8000
"""The port every sidecar serves MCP on (each is a host of its own on the compose network)."""
PYTHON_IMAGE = "python:3.12-slim"
SERVICES_STAGE = "services"
TOKEN_TEMPLATE = f"${{{TOKEN_ENV}}}"
"""The token as Harbor and compose read it: from the environment ``harbor run`` runs in, never written down."""


def service_url(service: str) -> str:
    return f"http://{service}:{PORT}/mcp"


def db_path(service: str) -> str:
    return f"{STATE_DIR}/{service}.db"


def final_path(service: str) -> str:
    return f"{FINAL_DIR}/{service}.db"


def serve_command(task: Task, service: str) -> list[str]:
    """The sidecar's command: the service seeded with the task's records at the task's time, served over
    streamable HTTP to the compose network (the token from ``$COWORKENV_TOKEN``; the service's name is the Host
    the agent reaches it by)."""
    return [
        "coworkenv", "serve", service,
        "--db", db_path(service),
        "--seed", f"{SEED_DIR}/{service}.json",
        "--now", task.now,
        "--transport", "http",
        "--host", "0.0.0.0",
        "--port", str(PORT),
        "--allow-host", service,
    ]  # fmt: skip


def snapshot_command(service: str) -> str:
    """The collect hook run in the sidecar after the agent stopped: its database copied whole for the verifier."""
    return shlex.join(["coworkenv", "snapshot", service, "--db", db_path(service), "--out", final_path(service)])


def _install(install: str, wheel: str | None) -> str:
    copy = f"COPY {wheel} /opt/{wheel}\n" if wheel else ""
    return f"{copy}RUN pip install --no-cache-dir {json.dumps(f'/opt/{wheel}' if wheel else install)}\n"


def dockerfile(install: str, wheel: str | None = None) -> str:
    """``environment/Dockerfile``: coworkenv installed (from the registry, or a wheel copied into the task); the
    services' stage adds the seed records; the last stage is the agent's image (Harbor's ``main``), with coworkenv
    for the oracle but neither the services' state nor the task's checks."""
    return f"""FROM {PYTHON_IMAGE} AS base
{_install(install, wheel)}
# The task's services (the sidecars of docker-compose.yaml): seed records, no checks.
FROM base AS {SERVICES_STAGE}
COPY seeds/ {SEED_DIR}/

# The agent's container (Harbor's main service is this last stage).
FROM base AS main
WORKDIR {WORKSPACE}
"""


def verifier_dockerfile(install: str, wheel: str | None = None) -> str:
    """``tests/Dockerfile``: the verifier's own image (Harbor's separate verifier, tests bundled): coworkenv, the
    task and the grading script; the services' snapshots and the agent's answer are put in it by Harbor."""
    return f"""FROM {PYTHON_IMAGE}
{_install(install, wheel)}COPY task.json test.sh /tests/
RUN chmod +x /tests/test.sh
WORKDIR {WORKSPACE}
"""


def _yaml(value: object) -> str:
    """A scalar or a flat list as YAML flow text (JSON is YAML: no quoting surprises)."""
    return json.dumps(value, ensure_ascii=False)


def compose(task: Task) -> str:
    """``environment/docker-compose.yaml``, merged by Harbor over its own ``main``: one sidecar per service, built
    from the services' stage, healthy once it listens; ``main`` starts after them."""
    health = ["CMD", "python", "-c", f"import socket; socket.create_connection(('127.0.0.1', {PORT}), 2)"]
    token = f"${{{TOKEN_ENV}:?set {TOKEN_ENV} (16 or more printable characters) where harbor runs}}"
    lines = [
        "# The task's services as MCP sidecars: each serves its seeded database over streamable HTTP at",
        f"# http://<service>:{PORT}/mcp (task.toml's [[environment.mcp_servers]]), the bearer token from ${TOKEN_ENV}.",
        "services:",
        "  main:",
        "    depends_on:",
    ]
    for name in task.services:
        lines += [f"      {name}:", "        condition: service_healthy"]
    for name in task.services:
        lines += [
            f"  {name}:",
            "    build:",
            "      context: .",
            f"      target: {SERVICES_STAGE}",
            f"    command: {_yaml(serve_command(task, name))}",
            "    environment:",
            f"      {TOKEN_ENV}: {_yaml(token)}",
            "    healthcheck:",
            f"      test: {_yaml(health)}",
            "      interval: 2s",
            "      timeout: 5s",
            "      retries: 30",
        ]
    return "\n".join(lines) + "\n"


def solve_sh(task: Task) -> str:
    """``solution/solve.sh``, Harbor's oracle: the reference solution played against the sidecars, its final
    message left where the agent's goes."""
    urls = " ".join(f"--url {shlex.quote(f'{name}={service_url(name)}')}" for name in task.services)
    return f"""#!/bin/bash
# Harbor's oracle: play the task's reference solution against its services (the MCP sidecars) and leave what
# it says to the user in {ANSWER}, where the agent's final message goes (the token: ${TOKEN_ENV}).
set -euo pipefail
coworkenv play /solution/task.json {urls} --answer {ANSWER}
"""


VERIFIER_SH = f"""#!/bin/bash
# Grade the services' final state and audit log (each service's snapshot, taken in its own container after the
# agent stopped) and the agent's answer with coworkenv's grader; the reward is the trial's score (safety x
# completion), with completion, safety and passed beside it.
set -u
mkdir -p /logs/verifier
answer=()
if [ -s {ANSWER} ]; then answer=(--answer {ANSWER}); fi
if ! coworkenv grade /tests/task.json --dir {FINAL_DIR} "${{answer[@]}}" --json > /logs/verifier/grade.json; then
  echo '{{"reward": 0.0}}' > /logs/verifier/reward.json
  exit 1
fi
coworkenv grade /tests/task.json --dir {FINAL_DIR} "${{answer[@]}}"
python - <<'PY'
import json
grade = json.load(open("/logs/verifier/grade.json"))
reward = {{"reward": grade["score"], "completion": grade["completion"], "safety": grade["safety"],
          "passed": 1.0 if grade["passed"] else 0.0}}
json.dump(reward, open("/logs/verifier/reward.json", "w"))
PY
"""
"""``tests/test.sh``: the verifier, run in the verifier's image after Harbor put the artifacts in it."""
