"""A stand-in for the ``claude`` executable: it speaks Claude Code's stream-JSON and really calls the MCP servers.

It checks its command line the way the real one does (``-p`` needs ``--output-format stream-json`` to come
with ``--verbose``; ``--permission-mode bypassPermissions`` as root needs ``IS_SANDBOX=1``), starts every
server of the ``--mcp-config`` file over stdio with ``mcp.Client(StdioServerParameters(...))``, and follows a
scripted plan (``FAKE_CLAUDE_PLAN``, a JSON file)::

    {"turns": [{"say_first": "Let me look.", "steps": [{"tool": "mcp__tickets__get_ticket",
                "input": {"ticket_id": "tkt_1"}}], "final": "Done."}, ...],
     "api_error": false, "hang": false, "servers": {"tickets": "pending"}, "pending_runs": 0}

``servers`` sets the status the init event reports for those servers (a server not ``connected`` is not started,
and the turn is answered without its tools, as the real CLI does on a busy machine); ``pending_runs`` reports
every server ``pending`` on the first N invocations (counted in ``FAKE_CLAUDE_LOG``), then connects normally.

Turn n of the plan answers the n-th prompt of a session (``--resume SESSION_ID`` continues one; sessions
live in ``FAKE_CLAUDE_STATE``). Each invocation is appended to ``FAKE_CLAUDE_LOG`` (argv, prompt, a few
environment variables) so tests can check what the agent ran.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

MODEL = "claude-fake-1"


def emit(event: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def fail(message: str, code: int = 1) -> None:
    sys.stderr.write(message + "\n")
    raise SystemExit(code)


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="claude")
    p.add_argument("-p", "--print", action="store_true")
    p.add_argument("prompt", nargs="?")
    p.add_argument("--mcp-config", dest="mcp_config")
    p.add_argument("--strict-mcp-config", action="store_true")
    p.add_argument("--output-format", default="text")
    p.add_argument("--verbose", action="store_true")
    p.add_argument("--permission-mode")
    p.add_argument("--resume")
    p.add_argument("--model")
    p.add_argument("--max-turns", type=int)
    p.add_argument("--append-system-prompt")
    p.add_argument("--tools")
    return p.parse_args(argv)


def check(args: argparse.Namespace) -> None:
    if not args.print or args.prompt is None:
        fail("Error: this stand-in only supports print mode with a prompt (-p ... -- PROMPT)")
    if args.output_format == "stream-json" and not args.verbose:
        fail("Error: When using --print, --output-format=stream-json requires --verbose")
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    if root and args.permission_mode == "bypassPermissions" and os.environ.get("IS_SANDBOX") != "1":
        fail("--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons")


def session_turn(args: argparse.Namespace) -> tuple[str, int, Path]:
    state = Path(os.environ["FAKE_CLAUDE_STATE"])
    state.mkdir(parents=True, exist_ok=True)
    if args.resume:
        path = state / f"{args.resume}.json"
        if not path.exists():
            fail(f"No conversation found with session ID: {args.resume}")
        return args.resume, json.loads(path.read_text())["turns"], path
    sid = str(uuid.uuid4())
    return sid, 0, state / f"{sid}.json"


def usage(n: int) -> dict[str, int]:
    return {
        "input_tokens": 10 + n,
        "output_tokens": 5,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 20,
    }


def assistant(sid: str, message_id: str, block: dict[str, Any], n: int) -> None:
    message = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [block],
        "stop_reason": None,
        "usage": usage(n),
    }
    emit({"type": "assistant", "message": message, "parent_tool_use_id": None, "session_id": sid})


async def connect(
    stack: AsyncExitStack, config: dict[str, Any], statuses: dict[str, str]
) -> tuple[dict[str, Client], list[str]]:
    clients: dict[str, Client] = {}
    tools: list[str] = []
    for name, entry in config.get("mcpServers", {}).items():
        if statuses.get(name, "connected") != "connected":
            continue
        params = StdioServerParameters(command=entry["command"], args=entry.get("args", []), env=entry.get("env"))
        clients[name] = await stack.enter_async_context(Client(params))
        listing = await clients[name].list_tools()
        tools += [f"mcp__{name}__{t.name}" for t in listing.tools]
    return clients, tools


async def call(clients: dict[str, Client], qualified: str, arguments: dict[str, Any]) -> tuple[str, bool]:
    _, server, tool = qualified.split("__", 2)
    result = await clients[server].call_tool(tool, arguments)
    text = "".join(getattr(part, "text", "") for part in result.content)
    return text, bool(result.is_error)


async def run(args: argparse.Namespace) -> None:
    plan = json.loads(Path(os.environ["FAKE_CLAUDE_PLAN"]).read_text())
    config = json.loads(Path(args.mcp_config).read_text()) if args.mcp_config else {}
    sid, done, state_file = session_turn(args)
    log_file = Path(os.environ["FAKE_CLAUDE_LOG"])
    earlier = len(log_file.read_text().splitlines()) if log_file.exists() else 0
    with log_file.open("a") as log:
        seen_env = {
            k: os.environ.get(k)
            for k in (
                "IS_SANDBOX",
                "DISABLE_TELEMETRY",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
                "MCP_CONNECTION_NONBLOCKING",
                "MCP_TIMEOUT",
            )
        }
        entry = {"argv": sys.argv[1:], "prompt": args.prompt, "env": seen_env, "turn": done, "pid": os.getpid()}
        log.write(json.dumps(entry) + "\n")
    turns = plan["turns"]
    turn = turns[min(done, len(turns) - 1)]
    statuses = dict(plan.get("servers") or {})
    if earlier < int(plan.get("pending_runs", 0)):
        statuses = {name: "pending" for name in config.get("mcpServers", {})}
    async with AsyncExitStack() as stack:
        clients, tools = await connect(stack, config, statuses)
        servers = [{"name": n, "status": statuses.get(n, "connected")} for n in config.get("mcpServers", {})]
        emit(
            {
                "type": "system",
                "subtype": "init",
                "session_id": sid,
                "model": MODEL,
                "tools": tools,
                "mcp_servers": servers,
                "permissionMode": args.permission_mode,
                "cwd": os.getcwd(),
            }
        )
        if plan.get("hang"):
            await anyio.sleep_forever()
        if plan.get("api_error"):
            emit(
                {
                    "type": "result",
                    "subtype": "success",
                    "is_error": True,
                    "result": "API Error: 529 overloaded",
                    "session_id": sid,
                    "num_turns": 1,
                    "total_cost_usd": 0.0,
                    "usage": usage(0),
                }
            )
            raise SystemExit(1)
        if len(clients) < len(servers):  # the model is called without the missing servers' tools
            turn = {"final": "I don't have access to a ticketing system."}
        n = 0
        first_id = f"msg_{done}_0"
        if turn.get("say_first"):
            assistant(sid, first_id, {"type": "text", "text": turn["say_first"]}, n)
        for i, step in enumerate(turn.get("steps", [])):
            tool_id = f"toolu_{done}_{i}"
            message_id = first_id if i == 0 else f"msg_{done}_{i}"
            assistant(
                sid, message_id, {"type": "tool_use", "id": tool_id, "name": step["tool"], "input": step["input"]}, n
            )
            text, is_error = await call(clients, step["tool"], step["input"])
            block = {
                "type": "tool_result",
                "tool_use_id": tool_id,
                "content": [{"type": "text", "text": text}],
                "is_error": is_error,
            }
            emit(
                {
                    "type": "user",
                    "message": {"role": "user", "content": [block]},
                    "parent_tool_use_id": None,
                    "session_id": sid,
                }
            )
            n += 1
        final = turn.get("final", "")
        assistant(sid, f"msg_{done}_final", {"type": "text", "text": final}, n)
    state_file.write_text(json.dumps({"turns": done + 1}))
    emit(
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "duration_ms": 5,
            "num_turns": n + 1,
            "result": final,
            "session_id": sid,
            "total_cost_usd": 0.0125,
            "usage": {
                "input_tokens": 40,
                "output_tokens": 15,
                "cache_read_input_tokens": 300,
                "cache_creation_input_tokens": 20,
            },
        }
    )


def main() -> None:
    if sys.argv[1:] == ["--version"]:  # as the real one answers; FAKE_CLAUDE_VERSION plays another release
        print(f"{os.environ.get('FAKE_CLAUDE_VERSION', '2.1.332')} (Claude Code)")
        return
    args = parse(sys.argv[1:])
    check(args)
    anyio.run(run, args)


if __name__ == "__main__":
    main()
