"""Claw-Eval's own mock services of one task, started from the checkout as its harness starts them.

Claw-Eval's ``ServiceManager`` (``src/claw_eval/runner/services.py``) runs each service of a ``task.yaml`` as
``python mock_services/<svc>/server.py`` in the checkout root, with the service's ``env`` (its fixture paths) over
the caller's environment less the proxy variables, probes its ``health_check`` (header ``X-Health-Check: 1``; any
answer below 500 is healthy), and POSTs its ``reset_endpoint`` between trials; its dispatcher sends a tool call as
the tool's ``tool_endpoints`` entry says (``method``, ``url``, the arguments as the JSON body).

:class:`ClawMocks` does the same with three differences, all for running many tasks side by side: each service gets
a free port on 127.0.0.1 (the mocks read ``PORT``) and every URL of the task is rewritten to it; ``ERROR_RATE=0``
(no injected 429/500 or delays: parity compares answers, not fault injection); and the interpreter is the one given
(``--claw-python``; ``python``/``python3`` in the command are replaced by it, as Claw-Eval replaces them with its
own interpreter).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from coworkenv.servers.kit.files import one_line

_PROXIES = ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
_URL = re.compile(r"^(https?://)([^/:]+):(\d+)(.*)$")
CALL_TIMEOUT_S = 30.0
READY_TIMEOUT_S = 30.0


class MockError(RuntimeError):
    """A mock service that did not start, or stopped answering (one line, naming the service)."""


@dataclass(frozen=True)
class Answer:
    """One HTTP answer: its status and its JSON body (the text, where it is not JSON)."""

    status: int
    body: Any


@dataclass(frozen=True)
class Endpoint:
    method: str
    url: str


@dataclass
class _Running:
    name: str
    process: subprocess.Popen[bytes]
    stderr: IO[bytes]
    reset_url: str | None
    audit_url: str | None


def missing_modules(python: str) -> str | None:
    """One line saying what ``python`` lacks to run Claw-Eval's mocks (fastapi, uvicorn), or None."""
    probe = "import importlib.util as u; print(','.join(m for m in ('fastapi', 'uvicorn') if u.find_spec(m) is None))"
    try:
        done = subprocess.run([python, "-c", probe], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"cannot run {python} for Claw-Eval's mock services ({exc}); pass --claw-python PYTHON"
    lacking = done.stdout.strip()
    if done.returncode != 0 or lacking:
        names = lacking.replace(",", " ") or "fastapi uvicorn"
        return (
            f"{python} lacks {lacking or 'fastapi/uvicorn'}, which Claw-Eval's mock services need: "
            f"run `{python} -m pip install {names}`, or pass --claw-python with an interpreter that has them"
        )
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def request_json(method: str, url: str, body: Any = None, timeout: float = CALL_TIMEOUT_S) -> Answer:
    """One HTTP request with a JSON body (none for ``None``), proxies bypassed; connection failures raise
    :class:`MockError`."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"} if data is not None else {}
    req = urllib.request.Request(url, data=data, method=method.upper(), headers=headers)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(req, timeout=timeout) as resp:
            status, raw = int(resp.status), resp.read()
    except urllib.error.HTTPError as exc:
        status, raw = int(exc.code), exc.read()
    except (urllib.error.URLError, OSError) as exc:
        raise MockError(f"{method.upper()} {url} failed: {exc}") from exc
    try:
        parsed: Any = json.loads(raw)
    except ValueError:
        parsed = raw.decode("utf-8", errors="replace")
    return Answer(status, parsed)


def _healthy(url: str, method: str) -> bool:
    req = urllib.request.Request(url, method=method.upper(), headers={"X-Health-Check": "1"})
    if method.upper() != "GET":
        req.data = b"{}"
        req.add_header("Content-Type", "application/json")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(req, timeout=2.0) as resp:
            return int(resp.status) < 500
    except urllib.error.HTTPError as exc:
        return int(exc.code) < 500
    except (urllib.error.URLError, OSError):
        return False


@dataclass
class ClawMocks:
    """The mock services of one task (its parsed ``task.yaml``), started by :meth:`start`, stopped by :meth:`close`
    (or use ``with``)."""

    checkout: Path
    spec: Mapping[str, Any]
    python: str
    ready_timeout_s: float = READY_TIMEOUT_S
    endpoints: dict[str, Endpoint] = field(default_factory=dict)
    ports: dict[int, int] = field(default_factory=dict)
    tool_services: dict[str, str] = field(default_factory=dict)
    """Tool → the name of the service whose port its endpoint names."""
    _running: list[_Running] = field(default_factory=list)

    def __enter__(self) -> ClawMocks:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def url(self, url: str) -> str:
        """A URL of the task with its service's port moved to the one this run gave it, on 127.0.0.1."""
        found = _URL.match(url)
        if found is None or int(found.group(3)) not in self.ports:
            return url
        return f"{found.group(1)}127.0.0.1:{self.ports[int(found.group(3))]}{found.group(4)}"

    def start(self) -> None:
        services = [s for s in self.spec.get("services") or [] if isinstance(s, dict)]
        names: dict[int, str] = {}
        for svc in services:
            self.ports[int(svc.get("port") or 0)] = free_port()
            names[int(svc.get("port") or 0)] = str(svc.get("name"))
        for entry in self.spec.get("tool_endpoints") or []:
            if isinstance(entry, dict) and entry.get("tool_name") and entry.get("url"):
                tool, url = str(entry["tool_name"]), str(entry["url"])
                self.endpoints[tool] = Endpoint(str(entry.get("method") or "POST"), self.url(url))
                found = _URL.match(url)
                self.tool_services[tool] = names.get(int(found.group(3)), "") if found else ""
        for svc in services:
            self._spawn(svc)

    def _spawn(self, svc: Mapping[str, Any]) -> None:
        name = str(svc.get("name"))
        command = shlex.split(str(svc.get("command") or ""))
        if not command:
            raise MockError(f"service {name} of the task has no command")
        if command[0] in ("python", "python3"):
            command[0] = self.python
        env = {k: v for k, v in os.environ.items() if k not in _PROXIES}
        env.update({str(k): str(v) for k, v in (svc.get("env") or {}).items()})
        port = self.ports[int(svc.get("port") or 0)]
        env.update({"PORT": str(port), "ERROR_RATE": "0"})
        stderr = tempfile.TemporaryFile()  # noqa: SIM115 (kept open while the service runs; closed by close())
        try:
            process = subprocess.Popen(
                command, cwd=self.checkout, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr
            )
        except OSError as exc:
            stderr.close()
            raise MockError(f"service {name} did not start: {exc}") from exc
        reset = str(svc["reset_endpoint"]) if svc.get("reset_endpoint") else None
        audit = re.sub(r"/reset$", "/audit", reset) if reset else None
        running = _Running(
            name, process, stderr, self.url(reset) if reset else None, self.url(audit) if audit else None
        )
        self._running.append(running)
        health = self.url(str(svc.get("health_check") or ""))
        method = str(svc.get("health_check_method") or "GET")
        wait_s = max(float(svc.get("ready_timeout") or 0), self.ready_timeout_s)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if _healthy(health, method):
                return
            try:
                process.wait(timeout=0.2)  # the pause between probes, and the check that it is still running
            except subprocess.TimeoutExpired:
                continue
            raise MockError(f"service {name} exited at start (status {process.returncode}): {self._stderr(running)}")
        raise MockError(f"service {name} did not answer {health} within {wait_s:.0f} s")

    @staticmethod
    def _stderr(running: _Running) -> str:
        running.stderr.seek(0)
        text = running.stderr.read().decode("utf-8", errors="replace").strip().splitlines()
        return one_line(text[-1] if text else "(nothing on stderr)", 300)

    def reset(self) -> datetime:
        """POST every service's reset endpoint; the instant the mocks reloaded their fixtures (the middle of the
        requests), from which they shift fixture dates."""
        before = datetime.now(UTC)
        for running in self._running:
            if running.reset_url:
                answer = request_json("POST", running.reset_url)
                if answer.status >= 400:
                    raise MockError(f"reset of {running.name} answered {answer.status}: {answer.body!r:.200}")
        after = datetime.now(UTC)
        return before + (after - before) / 2

    def call(self, tool: str, arguments: Mapping[str, Any]) -> Answer:
        """One tool call as Claw-Eval's dispatcher makes it (an undeclared endpoint: its 404 answer)."""
        endpoint = self.endpoints.get(tool)
        if endpoint is None:
            return Answer(404, {"error": f"unknown tool '{tool}'"})
        return request_json(endpoint.method, endpoint.url, dict(arguments))

    def audit(self) -> dict[str, Any]:
        """Every service's ``/audit`` JSON, by service name (what Claw-Eval's graders get as ``audit_data``)."""
        out: dict[str, Any] = {}
        for running in self._running:
            if running.audit_url:
                out[running.name] = request_json("GET", running.audit_url).body
        return out

    def close(self) -> None:
        for running in reversed(self._running):
            if running.process.poll() is None:
                running.process.terminate()
                try:
                    running.process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    running.process.kill()
                    running.process.wait(timeout=5)
            running.stderr.close()
        self._running.clear()
