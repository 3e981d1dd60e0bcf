"""Claude Code run headless against the task's services over stdio (``claude-code``).

The contract with the episode (:mod:`coworkenv.harness.episode`): the agent says ``transport = "stdio"``,
so the episode seeds the services in SQLite files in a temporary folder and hands over an
:class:`~coworkenv.harness.session.EpisodeSession` whose ``mcp_config`` serves them over stdio (one
``coworkenv.servers serve`` per service). The agent writes that config to a file and runs::

    claude -p --mcp-config FILE --strict-mcp-config --output-format stream-json --verbose
           --permission-mode bypassPermissions --tools "" [--resume SESSION_ID] [--model M]
           [--append-system-prompt SYSTEM] -- REQUEST

(``--tools ""`` leaves Claude Code only the services' tools; ``IS_SANDBOX=1`` is set when running as root,
``DISABLE_TELEMETRY=1``, ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1``, ``MCP_CONNECTION_NONBLOCKING=0`` and
``MCP_TIMEOUT=60000`` always: in ``-p`` mode Claude Code otherwise connects to its MCP servers in the background,
and its first model request may go out before their tools are there, so the agent ends without a tool call.)

The servers' tools must be there before the model's first turn. The episode has already started each server of
the config once and listed its tools (the door's readiness check), and the agent reads the stream's ``init``
event: any server of the config whose status is not ``connected`` (``pending`` on a busy machine, ``failed``)
makes the run an infrastructure error (:class:`McpServersNotConnected`, retryable) that names the servers and
their statuses; Claude Code is killed at once, and a run retries the trial from a fresh environment under
``--retries``, so a model that never had its tools is never scored 0.

The executable is ``claude`` on PATH, or the path in ``COWORKENV_CLAUDE`` (e.g. a project-local npm install).
After each run Claude Code's whole process group (the MCP servers it started included) is killed and waited
for, so the episode's folder can be removed.

Claude Code then calls the MCP servers itself, so their state changes and audit rows land in those files,
where the episode reads them back for grading (its ``Environment`` is open on the same files). The stream
is parsed into the trajectory through the session: assistant turns (``record_turn``; ``mcp__<server>__<tool>``
becomes ``<server>__<tool>``), tool results (``record_tool_result``), and at the end of each run the final
text goes to the user simulator (``finish_turn``); a reply resumes the same Claude Code session.
The agent's ``usage``/``cost_usd`` totals add up the result events (Claude Code reports its own cost).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
from collections import deque
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream

from coworkenv.harness.agents.base import EpisodeIO, InfrastructureError, LimitReached
from coworkenv.harness.agents.claude_stream import RunResult, StreamParser, unconnected, unprefixed

__all__ = [
    "CLAUDE_CODE_VERSION",
    "EXECUTABLE_ENV",
    "ClaudeCodeAgent",
    "McpServersNotConnected",
    "RunResult",
    "StreamParser",
    "from_spec",
    "unprefixed",
]
from coworkenv.harness.messages import Usage
from coworkenv.synth.model_io import ProviderConfigError
from coworkenv.synth.providers import scrub

CLAUDE_CODE_VERSION = "2.1.332"
"""The Claude Code release this agent is tested against (``.ci/run`` installs exactly this one)."""
INSTALL = f"npm install -g @anthropic-ai/claude-code@{CLAUDE_CODE_VERSION}"
MIN_CLAUDE_CODE = (2, 1, 197)
"""The oldest Claude Code release this agent is tested with (the newest npm installs on Node 20)."""
EXECUTABLE_ENV = "COWORKENV_CLAUDE"
WAIT_FOR_MCP = {"MCP_CONNECTION_NONBLOCKING": "0", "MCP_TIMEOUT": "60000"}
"""Connect to the MCP servers before the first model request, waiting up to 60 s for each (milliseconds)."""

_API_FAILURE = ("api error", "overloaded", "rate limit", "rate_limit", "credit balance", "connection error")


class McpServersNotConnected(InfrastructureError):
    """Claude Code's init event reports a server of the config that is not ``connected``: no tools for the model."""


async def lines(stream: ByteReceiveStream) -> AsyncIterator[str]:
    """Lines of a byte stream (no length limit: a tool result can be large)."""
    buffer = b""
    async for chunk in stream:
        buffer += chunk
        *complete, buffer = buffer.split(b"\n")
        for line in complete:
            yield line.decode("utf-8", errors="replace")
    if buffer:
        yield buffer.decode("utf-8", errors="replace")


def check_limits(io: Any) -> None:
    """The episode's turn and tool-call limits, checked as the stream comes in (Claude Code runs free)."""
    turns, steps = getattr(io, "turns", None), getattr(io, "steps", None)
    max_turns, max_calls = getattr(io, "max_turns", None), getattr(io, "max_tool_calls", None)
    reason = None
    if isinstance(turns, list) and isinstance(max_turns, int) and len(turns) > max_turns:
        reason = f"max_turns ({max_turns})"
    elif isinstance(steps, list) and isinstance(max_calls, int) and len(steps) > max_calls:
        reason = f"max_tool_calls ({max_calls})"
    if reason is not None:
        raise LimitReached(reason)


def kill_group(pid: int) -> None:
    """Kill Claude Code and the MCP servers it started (it runs in its own process group)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def group_alive(pgid: int) -> bool:
    """Whether a live (not zombie) process of the group is left; zombies hold no files and are not waited for."""
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True
    for stat_file in proc.glob("[0-9]*/stat"):
        try:
            fields = stat_file.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
            return True
    return False


async def end_group(pid: int, wait_s: float = 5.0) -> None:
    """Kill the process group of ``pid`` and wait (bounded) until no process of it is left.

    The MCP servers Claude Code started outlive it when it exits on its own; until they are gone they may
    still write to the episode's folder."""
    kill_group(pid)
    with anyio.move_on_after(wait_s):
        while group_alive(pid):
            await anyio.sleep(0.02)


def installed_version(exe: str) -> tuple[int, ...]:
    """The release of the Claude Code at ``exe`` (``claude --version``: "2.1.332 (Claude Code)");
    :class:`ProviderConfigError` when it does not run, does not say, or is older than :data:`MIN_CLAUDE_CODE`."""
    oldest = ".".join(map(str, MIN_CLAUDE_CODE))
    try:
        done = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ProviderConfigError(f"`{exe} --version` did not answer ({exc}); reinstall it with `{INSTALL}`") from exc
    said = (done.stdout or done.stderr).strip()
    found = re.search(r"(\d+)\.(\d+)\.(\d+)", done.stdout or "")
    if done.returncode != 0 or found is None:
        last = said.splitlines()[-1] if said else f"exit status {done.returncode}"
        raise ProviderConfigError(
            f"`{exe} --version` failed ({scrub(last)[:200]}); Claude Code needs Node >= 18 (>= 22 for releases "
            f"after {oldest}); install it with `{INSTALL}`"
        )
    version = tuple(int(part) for part in found.groups())
    if version < MIN_CLAUDE_CODE:
        raise ProviderConfigError(
            f"Claude Code {'.'.join(map(str, version))} at {exe} is older than {oldest}, the oldest release the "
            f"claude-code agent works with; install `{INSTALL}` (Node >= 22), or on Node 20 "
            f"`npm install -g @anthropic-ai/claude-code@{oldest}`"
        )
    return version


# ---------------------------------------------------------------------------------------------- the agent
class ClaudeCodeAgent:
    """``claude-code``: an :class:`~coworkenv.harness.agents.base.EpisodeAgent` that drives the whole episode."""

    transport = "stdio"

    def __init__(
        self,
        model: str | None = None,
        *,
        executable: str | None = None,
        builtin_tools: str | None = "",
        append_system_prompt: bool = True,
        max_user_turns: int = 10,
        extra_args: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
    ) -> None:
        self.model = model
        self.name = "claude-code" + (f":{model}" if model else "")
        self.executable = executable or os.environ.get(EXECUTABLE_ENV) or "claude"
        self.builtin_tools = builtin_tools
        """Passed as ``--tools`` ("" turns Claude Code's own tools off, leaving only the services'); None omits it."""
        self.append_system_prompt = append_system_prompt
        self.max_user_turns = max_user_turns
        self.extra_args = tuple(extra_args)
        self.env = dict(env or {})
        self.usage = Usage()
        self.cost_usd = 0.0
        self.version: tuple[int, ...] | None = None
        """The release ``check_ready`` found."""
        self._checked: str | None = None

    def check_ready(self) -> str:
        """The path of the ``claude`` executable, once it answered ``--version`` with a release this agent works
        with; :class:`ProviderConfigError` says which release was found and what to install."""
        exe = shutil.which(self.executable)
        if exe is None:
            raise ProviderConfigError(
                f"the {self.executable!r} executable is not on PATH; install it with `{INSTALL}` "
                f"(or set {EXECUTABLE_ENV} to its path)"
            )
        if self._checked != exe:
            self.version = installed_version(exe)
            self._checked = exe
        return exe

    def command(self, prompt: str, config_file: Path, session_id: str | None, io: Any) -> list[str]:
        exe = self.check_ready()
        cmd = [exe, "-p", "--mcp-config", str(config_file), "--strict-mcp-config"]
        cmd += ["--output-format", "stream-json", "--verbose", "--permission-mode", "bypassPermissions"]
        if session_id:
            cmd += ["--resume", session_id]
        if self.model:
            cmd += ["--model", self.model]
        if self.builtin_tools is not None:
            cmd += ["--tools", self.builtin_tools]
        system_prompt = getattr(io, "system_prompt", None)
        if self.append_system_prompt and system_prompt:
            cmd += ["--append-system-prompt", system_prompt]
        # The prompt last, after "--": some options take several values, and a reply may start with "-".
        return [*cmd, *self.extra_args, "--", prompt]

    def environment(self) -> dict[str, str]:
        quiet = {"DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
        env = {**os.environ, **quiet, **WAIT_FOR_MCP, **self.env}
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            env["IS_SANDBOX"] = "1"  # bypassPermissions is refused as root outside a declared sandbox
        return env

    async def run_episode(self, io: EpisodeIO) -> None:
        config = getattr(io, "mcp_config", None)
        if not config:
            raise InfrastructureError(
                "claude-code needs the task's services over stdio: run it through the harness episode "
                "(this agent's transport is 'stdio', so the episode provides mcp_config)"
            )
        with tempfile.TemporaryDirectory(prefix="coworkenv-claude-", ignore_cleanup_errors=True) as tmp:
            config_file = Path(tmp) / "mcp.json"
            config_file.write_text(json.dumps(config, indent=2))
            workdir = Path(tmp) / "work"
            workdir.mkdir()
            prompt = io.request
            session_id: str | None = None
            servers = sorted(config.get("mcpServers") or {})
            for _ in range(self.max_user_turns):
                result = await self.run_once(prompt, config_file, session_id, workdir, io, servers)
                session_id = result.session_id or session_id
                reply = await self._hand_to_user(io, result)
                if reply is None:
                    return
                prompt = reply

    async def _hand_to_user(self, io: EpisodeIO, result: RunResult) -> str | None:
        finish: Callable[[str], Any] | None = getattr(io, "finish_turn", None)
        if finish is not None:
            reply = await finish(result.text)
            return None if reply is None else str(reply)
        return await io.say(result.text)

    async def run_once(
        self,
        prompt: str,
        config_file: Path,
        session_id: str | None,
        workdir: Path,
        io: Any,
        servers: list[str] | None = None,
    ) -> RunResult:
        """One ``claude -p`` run (a new session, or ``--resume``), its stream parsed into ``io``; ``servers`` (the
        config's) must all be ``connected`` in the init event, or :class:`McpServersNotConnected` ends the run."""
        cmd = self.command(prompt, config_file, session_id, io)
        parser = StreamParser(io)
        stderr: deque[str] = deque(maxlen=40)
        bad_lines = 0
        process = await anyio.open_process(
            cmd, stdin=subprocess.DEVNULL, cwd=workdir, env=self.environment(), start_new_session=True
        )
        stop: Exception | None = None  # raised once the task group is closed (raised inside, it comes out grouped)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._drain, process.stderr, stderr)
                assert process.stdout is not None
                async for line in lines(process.stdout):
                    if not line.strip():
                        continue
                    try:
                        event = json.loads(line)
                    except (json.JSONDecodeError, RecursionError):  # not JSON, or nested too deep to read
                        bad_lines += 1
                        stderr.append(line)
                        continue
                    if isinstance(event, dict):
                        stop = self._feed(parser, event, servers or [], io)
                        if stop is not None:
                            tg.cancel_scope.cancel()
                            break
            code = None if stop is not None else await process.wait()
        finally:
            with anyio.CancelScope(shield=True):
                if process.returncode is None:
                    kill_group(process.pid)
                await process.aclose()  # closes its pipes and reaps it
                await end_group(process.pid)  # the MCP servers it started, which may outlive it
        if stop is not None:
            raise stop
        assert code is not None
        parser.flush()
        self._check(parser.result, code, stderr)
        self.usage = self.usage.add(parser.result.usage)
        self.cost_usd = round(self.cost_usd + parser.result.cost_usd, 6)
        return parser.result

    @staticmethod
    async def _drain(stream: ByteReceiveStream | None, keep: deque[str]) -> None:
        if stream is None:
            return
        async for line in lines(stream):
            keep.append(line)

    def _feed(self, parser: StreamParser, event: dict[str, Any], servers: list[str], io: Any) -> Exception | None:
        """Parse one event; the reason to stop Claude Code now (servers not connected, a limit), or None."""
        parser.feed(event)
        try:
            if event.get("type") == "system" and event.get("subtype") == "init":
                self._check_servers(parser.result, servers)
            check_limits(io)
        except (McpServersNotConnected, LimitReached) as exc:
            return exc
        return None

    @staticmethod
    def _check_servers(result: RunResult, servers: list[str]) -> None:
        """Before the model's first turn: every server of the config connected (a CLI that does not report
        ``mcp_servers`` is not checked)."""
        if result.mcp_servers is None:
            return
        missing = unconnected(result.mcp_servers, servers)
        if missing:
            raise McpServersNotConnected(
                f"Claude Code started without its MCP servers connected ({', '.join(missing)}): the model would "
                "have had none of their tools, so the trial is an infrastructure error and is retried"
            )

    def _check(self, result: RunResult, code: int, stderr: deque[str]) -> None:
        tail = scrub("\n".join(stderr))[-2000:]
        if result.subtype is None:  # no result event: Claude Code itself failed
            raise InfrastructureError(f"claude exited with code {code} without a result; stderr: {tail or '(empty)'}")
        api_failed = result.api_error_status is not None or any(w in result.text.lower() for w in _API_FAILURE)
        if result.is_error and api_failed:
            raise InfrastructureError(f"Claude Code could not reach its model: {scrub(result.text)[:500]}")
        if result.subtype == "error_max_turns":
            raise LimitReached(f"Claude Code's --max-turns ({result.num_turns})")
        if result.subtype == "error_during_execution":
            raise InfrastructureError(f"Claude Code failed during the run: {scrub(result.text)[:500] or tail}")


def from_spec(arg: str) -> ClaudeCodeAgent:
    """``claude-code`` or ``claude-code:MODEL``."""
    return ClaudeCodeAgent(arg or None)
