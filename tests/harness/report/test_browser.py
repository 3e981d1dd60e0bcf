"""The HTML report in a real headless Chromium (Debian's `chromium`, which .ci/run installs), driven over the
DevTools protocol on a pipe (``--remote-debugging-pipe``: no extra package, no port): the page loads with no
console error, every task is in the table, a click on a row opens its trajectory, and a screenshot is saved under
the test's temporary folder (its path is printed). Skipped only when no Chromium is installed, saying so."""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from coworkenv.harness.agents.builtin import NoopAgent, ReplayAgent
from coworkenv.harness.report.build import build_report
from coworkenv.harness.run import RunOptions, load_task_set, run_tasks
from coworkenv.synth.contract.library import examples_dir

pytestmark = pytest.mark.slow


def until(condition: str) -> str:
    """A script that waits (in the page, polling every 20 ms) until ``condition`` holds, then gives its value."""
    return f"new Promise((done) => {{ const look = () => {{ const v = {condition}; v ? done(v) : setTimeout(look, 20); }}; look(); }})"


def chromium() -> str | None:
    return next((p for name in ("chromium", "chromium-browser", "google-chrome") if (p := shutil.which(name))), None)


def _high(fd: int) -> int:
    """``fd`` moved to a number of 10 or more (close-on-exec), so dup2 onto 3 and 4 clobbers none of ours."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return high


class Browser:
    """A headless Chromium spoken to over the DevTools protocol on fds 3 (commands) and 4 (answers)."""

    def __init__(self, executable: str, profile: Path) -> None:
        to_child, self._out = (_high(fd) for fd in os.pipe())
        self._in, from_child = (_high(fd) for fd in os.pipe())

        def fds() -> None:  # the child's 3 and 4; the originals sit above 10, so nothing is clobbered
            os.dup2(to_child, 3)
            os.dup2(from_child, 4)

        args = ["--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "--no-first-run"]
        args += [f"--user-data-dir={profile}", "--window-size=1400,1000", "--disable-extensions", "about:blank"]
        self.proc = subprocess.Popen(
            [executable, *args],
            preexec_fn=fds,
            close_fds=False,  # Python's own fds are close-on-exec; only 3 and 4 (made by dup2) go to Chromium
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_child)
        os.close(from_child)
        self._buffer = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None

    def _read(self, timeout: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._in], [], [], timeout)
            if not ready:
                raise TimeoutError(f"Chromium said nothing for {timeout} s")
            data = os.read(self._in, 1 << 20)
            if not data:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._buffer += data
        message, self._buffer = self._buffer.split(b"\0", 1)
        loaded: dict[str, Any] = json.loads(message)
        return loaded

    def send(self, method: str, timeout: float = 60, **params: Any) -> dict[str, Any]:
        self._id += 1
        message: dict[str, Any] = {"id": self._id, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            message["sessionId"] = self.session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._read(timeout)
            if answer.get("id") == self._id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer.get("result", {})
                return result
            self.events.append(answer)

    def evaluate(self, expression: str, timeout: float = 60) -> Any:
        out = self.send("Runtime.evaluate", timeout, expression=expression, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in out:
            raise RuntimeError(f"{expression[:80]}: {out['exceptionDetails']}")
        return out["result"].get("value")

    def open(self, url: str) -> float:
        """Open ``url`` in a new tab; the milliseconds from navigation until the page said it was ready."""
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            self.send(f"{domain}.enable")
        self.send("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired", timeout=120)
        return float(self.evaluate(until("+document.body?.dataset.ready"), timeout=120))

    def wait_event(self, method: str, timeout: float) -> dict[str, Any]:
        """The first event ``method`` (already received or still to come)."""
        while True:
            for event in self.events:
                if event.get("method") == method:
                    return event
            self.events.append(self._read(timeout))

    def click(self, selector: str) -> None:
        """A real mouse click in the middle of the element (pressed and released there)."""
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.scrollIntoView();"
            " const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1)

    def screenshot(self, path: Path) -> Path:
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", format="png")["data"]))
        return path

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and browser log errors seen so far."""
        out = []
        for e in self.events:
            method, params = e.get("method"), e.get("params", {})
            if method == "Runtime.exceptionThrown":
                out.append(json.dumps(params["exceptionDetails"])[:500])
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                out.append(json.dumps(params.get("args"))[:500])
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                out.append(params["entry"].get("text", "")[:500])
        return out

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)
        os.close(self._in)
        os.close(self._out)


@contextmanager
def browser(profile: Path) -> Iterator[Browser]:
    executable = chromium()
    if executable is None:
        pytest.skip("no Chromium is installed (apt-get install -y chromium), so the report is not opened in a browser")
    b = Browser(executable, profile)
    try:
        yield b
    finally:
        b.close()


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A report of two runs of the example tasks: the reference solutions (2 trials) and a no-op agent."""
    folder = tmp_path_factory.mktemp("report")
    tasks = load_task_set([examples_dir()])
    options = RunOptions(trials=2, progress=False)

    async def both() -> None:
        with anyio.fail_after(120):
            await run_tasks(tasks, ReplayAgent(), folder / "replay", agent_spec="replay", options=options)
            await run_tasks(tasks, NoopAgent(), folder / "noop", agent_spec="noop", options=RunOptions(progress=False))

    anyio.run(both)
    out = folder / "report.html"
    build_report([folder / "replay", folder / "noop"], out)
    return out, [t.id for t in tasks]


def test_the_report_loads_in_chromium_without_errors_lists_every_task_and_opens_a_trajectory(
    report: tuple[Path, list[str]], tmp_path: Path
) -> None:
    path, task_ids = report
    with browser(tmp_path / "profile") as b:
        b.open(path.as_uri())
        table = b.evaluate("document.querySelector('#table tbody').innerText")
        assert all(task_id in table for task_id in task_ids), table[:2000]
        assert b.evaluate("document.querySelectorAll('#table tbody tr').length") == 3 * len(task_ids)
        assert b.evaluate("document.querySelectorAll('#plots .plot').length") == 4
        b.click("#table tbody tr")
        title = b.evaluate(until("document.getElementById('v-title')?.textContent"))
        assert title.startswith(min(task_ids))  # the first row: tasks in id order
        viewer = b.evaluate("document.getElementById('viewer').innerText")
        assert "Checks" in viewer and "Conversation" in viewer and "Request" in viewer
        assert b.evaluate("document.querySelectorAll('#viewer .call').length") >= 1  # a tool call with its result
        shot = b.screenshot(tmp_path / "report-trajectory.png")
        assert b.errors() == []
    assert shot.stat().st_size > 10_000
    print(f"screenshot: {shot}")


def test_the_filters_narrow_the_table_and_a_link_opens_a_trajectory(
    report: tuple[Path, list[str]], tmp_path: Path
) -> None:
    path, task_ids = report
    with browser(tmp_path / "profile") as b:
        b.open(path.as_uri() + "#t=0")
        assert b.evaluate("document.getElementById('viewer').classList.contains('open')")
        noop = "[...document.getElementById('f-agent').options].find((o) => o.text === 'noop').value"
        b.evaluate(
            f"(() => {{ const s = document.getElementById('f-agent'); s.value = {noop};"
            " s.dispatchEvent(new Event('change')); })()"
        )
        assert b.evaluate("document.querySelectorAll('#table tbody tr').length") == len(task_ids)
        b.evaluate(
            "(() => { const s = document.getElementById('f-outcome'); s.value = 'passed';"
            " s.dispatchEvent(new Event('change')); })()"
        )
        assert b.evaluate("document.querySelectorAll('#table tbody tr').length") == 0
        assert b.errors() == []
