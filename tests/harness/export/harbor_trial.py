"""A Harbor trial of an exported task folder, played without Docker: what each container would run, run here with
the container paths mapped onto folders of a temporary directory.

- the sidecars: each ``environment/docker-compose.yaml`` service's ``command``, as written, on 127.0.0.1 and a free
  port instead of 0.0.0.0:8000, healthy when its own ``healthcheck`` command passes;
- the agent: ``solution/solve.sh`` (the oracle), or nothing (the no-op agent), with the service URLs of
  ``task.toml``'s ``[[environment.mcp_servers]]`` pointing at those ports;
- after the agent: each ``[[verifier.collect]]`` command, then ``tests/test.sh`` with every ``[[artifacts]]``
  source where Harbor puts it (its own path, mapped here like every other);
- the reward: ``/logs/verifier/reward.json``.

``coworkenv`` and ``python`` are shims onto this interpreter, as the images have them.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import yaml

from tests.harness.openenv.plays import stop

START_TIMEOUT_S = 60.0
SEEDS_COPY = re.compile(r"^COPY seeds/ (\S+?)/?$", re.MULTILINE)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def localize(text: str, mapping: Mapping[str, str]) -> str:
    """Every container path (or URL) of ``mapping`` in ``text`` replaced by its local one, in one pass (longest
    first, so a replacement is never replaced again)."""
    keys = sorted(mapping, key=len, reverse=True)
    return re.sub("|".join(re.escape(k) for k in keys), lambda m: mapping[m.group(0)], text)


def shim_env(tmp: Path) -> dict[str, str]:
    """An environment with ``coworkenv`` and ``python`` on PATH as the images have them, and a fresh token."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "coworkenv").write_text(f'#!/bin/sh\nexec {sys.executable} -m coworkenv.train.cli "$@"\n')
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    for shim in bin_dir.iterdir():
        shim.chmod(0o755)
    path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    return {**os.environ, "PATH": path, "COWORKENV_TOKEN": secrets.token_urlsafe(24)}


def _local_command(command: list[str], port: int, mapping: Mapping[str, str]) -> list[str]:
    out = [localize(arg, mapping) for arg in command]
    for flag, value in (("--host", "127.0.0.1"), ("--port", str(port))):
        out[out.index(flag) + 1] = value
    return out


def _wait_healthy(
    name: str, spec: dict[str, Any], port: int, process: subprocess.Popen[str], env: dict[str, str]
) -> None:
    test = spec["healthcheck"]["test"]
    assert test[0] == "CMD", test
    check = [arg.replace("8000", str(port)) for arg in test[1:]]
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        assert process.poll() is None, f"sidecar {name} exited: {process.communicate()[1][-2000:]}"
        if subprocess.run(check, env=env, capture_output=True, timeout=30).returncode == 0:
            return
        time.sleep(0.1)
    raise AssertionError(f"sidecar {name} was not healthy within {START_TIMEOUT_S:g} s")


@contextmanager
def sidecars(folder: Path, mapping: dict[str, str], env: dict[str, str]) -> Iterator[dict[str, str]]:
    """Start the compose file's sidecars as written (paths mapped, 127.0.0.1 and a free port each); yields their
    ports by service; stops them on exit."""
    compose = yaml.safe_load((folder / "environment" / "docker-compose.yaml").read_text())
    services = {name: spec for name, spec in compose["services"].items() if name != "main"}
    ports = {name: free_port() for name in services}
    with ExitStack() as stack:
        started: list[tuple[str, dict[str, Any], subprocess.Popen[str]]] = []
        for name, spec in services.items():
            command = _local_command(spec["command"], ports[name], mapping)
            process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            stack.callback(stop, process)
            started.append((name, spec, process))
        for name, spec, process in started:
            _wait_healthy(name, spec, ports[name], process, env)
        yield {name: str(port) for name, port in ports.items()}


def _bash(script: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120, env=env)


def run_trial(folder: Path, tmp: Path, oracle: bool) -> tuple[dict[str, Any], str]:
    """Play one trial of the task folder (the oracle, or nothing); the reward file's content and the verifier's
    output."""
    env = shim_env(tmp)
    config = tomllib.loads((folder / "task.toml").read_text())
    seeds = SEEDS_COPY.search((folder / "environment" / "Dockerfile").read_text())
    assert seeds is not None, "the services' stage copies environment/seeds/ into the image"
    state, workspace, logs = tmp / "state", tmp / "workspace", tmp / "logs"
    workspace.mkdir()
    mapping = {
        "/var/lib/coworkenv": str(state),
        seeds.group(1): str(folder / "environment" / "seeds"),
        "/workspace": str(workspace),
        "/solution": str(folder / "solution"),
        "/tests": str(folder / "tests"),
        "/logs": str(logs),
    }
    with sidecars(folder, mapping, env) as ports:
        for server in config["environment"]["mcp_servers"]:
            mapping[server["url"]] = server["url"].replace(
                f"{server['name']}:8000", f"127.0.0.1:{ports[server['name']]}"
            )
        if oracle:
            played = _bash(localize((folder / "solution" / "solve.sh").read_text(), mapping), env)
            assert played.returncode == 0, played.stderr[-3000:]
        for hook in config["verifier"]["collect"]:
            collected = _bash(localize(hook["command"], mapping), env)
            assert collected.returncode == 0, collected.stderr[-3000:]
    for artifact in config["artifacts"]:
        if artifact.get("service", "main") != "main":  # a sidecar's artifact must be there; the agent's may not
            assert Path(localize(artifact["source"], mapping)).is_file(), artifact
    verified = _bash(localize((folder / "tests" / "test.sh").read_text(), mapping), env)
    assert verified.returncode == 0, verified.stderr[-3000:]
    reward: dict[str, Any] = json.loads((logs / "verifier" / "reward.json").read_text())
    return reward, verified.stdout
