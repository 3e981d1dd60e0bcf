"""Helpers of the OpenEnv server's tests: a served task folder (a real ``coworkenv openenv serve`` process on a free
port of 127.0.0.1, stopped afterwards), the reference solutions as OpenEnv actions, and OpenEnv's own clients in
venvs of their own under ``.tools/`` (built once from the registry, reused after)."""

from __future__ import annotations

import fcntl
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from coworkenv.harness.agents.registry import make_agent
from coworkenv.harness.episode import run_episode
from coworkenv.synth.contract.task import Task

ROOT = Path(__file__).parents[3]
EXAMPLES = ROOT / "synth" / "examples"
TOOLS = ROOT / ".tools"
PLAY = Path(__file__).with_name("openenv_play.py")
START_TIMEOUT_S = 60.0


def reference_actions(task: Task) -> list[dict[str, Any]]:
    """The task's replayed reference solution as ``call_tool`` actions, in the order the harness played them: each
    tool call, and each thing said as ``reply``."""

    async def go() -> Any:
        with anyio.fail_after(30):
            return await run_episode(task, make_agent("replay"))

    episode = anyio.run(go)
    assert episode.grade is not None and episode.grade.score == 1.0, episode.error
    actions = []
    for message in episode.messages:
        if message.role != "assistant":
            continue
        actions += [{"tool_name": c.name, "arguments": dict(c.arguments)} for c in message.tool_calls]
        if not message.tool_calls:
            actions.append({"tool_name": "reply", "arguments": {"text": message.content}})
    return actions


@contextmanager
def served(tasks: Path, *extra: str) -> Iterator[str]:
    """``coworkenv openenv serve --tasks TASKS --port 0`` running; yields its base URL; stopped on exit."""
    command = [sys.executable, "-m", "coworkenv.train.cli", "openenv", "serve", "--tasks", str(tasks), "--port", "0"]
    with running([*command, *extra]) as url:
        yield url


@contextmanager
def running(command: list[str], env: dict[str, str] | None = None) -> Iterator[str]:
    """A server command running that says ``on http://...`` on stderr once it listens; yields that URL; stopped
    on exit."""
    process = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env)
    found: list[str] = []
    lines: list[str] = []

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)
            match = re.search(r"on (http://\S+)", line)
            if match and not found:
                found.append(match.group(1))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not found and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert found, f"the server did not start: {''.join(lines)[-2000:]}"
        yield found[0]
    finally:
        stop(process)


def stop(process: subprocess.Popen[str]) -> None:
    """Terminate a child, killing it if it does not stop within 10 s."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


def client_venv(name: str, requirement: str, base: str = sys.executable) -> Path:
    """The python of ``.tools/<name>``, a venv of ``base`` with ``requirement`` installed from the registry (built on
    first use, under a lock: two test runs at once build it once). Skips, saying why, when pip cannot reach the
    registry."""
    venv = TOOLS / name
    python = venv / "bin" / "python"
    marker = venv / ".installed"
    TOOLS.mkdir(exist_ok=True)
    with open(TOOLS / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.is_file() and marker.read_text() == requirement and python.is_file():
            return python
        subprocess.run([base, "-m", "venv", "--clear", str(venv)], check=True, timeout=120)
        env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        try:
            done = subprocess.run(
                [str(python), "-m", "pip", "install", "-q", requirement],
                capture_output=True,
                text=True,
                timeout=900,
                env=env,
            )
        except subprocess.TimeoutExpired:
            pytest.skip(f"pip could not install {requirement} within 15 minutes (registry unreachable?)")
        if done.returncode != 0:
            said = (done.stderr or done.stdout).strip()
            unreachable = ("No matching distribution", "Could not find a version", "NewConnectionError", "Network")
            if any(s in said for s in unreachable):
                pytest.skip(f"pip could not install {requirement} (registry unreachable?): {said[-300:]}")
            raise AssertionError(f"pip install {requirement} failed:\n{said[-3000:]}")
        marker.write_text(requirement)
        return python


def play(python: Path, base_url: str, episodes: list[dict[str, Any]], tmp: Path) -> list[dict[str, Any]]:
    """Run :file:`openenv_play.py` in the client's venv against the server; what it reports, one entry an episode."""
    plan = tmp / "plan.json"
    plan.write_text(json.dumps({"base_url": base_url, "episodes": episodes}), encoding="utf-8")
    done = subprocess.run([str(python), str(PLAY), str(plan)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    out: list[dict[str, Any]] = json.loads(done.stdout)
    return out
