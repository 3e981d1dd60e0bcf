"""Plays scripted episodes against a coworkenv OpenEnv server with OpenEnv's own clients. Runs in a venv that has the
``openenv`` package and not coworkenv (their pins clash): ``python openenv_play.py PLAN.json`` prints one JSON
object, what came back.

PLAN: ``{"base_url": ..., "episodes": [{"task_id": ..., "actions": [{"tool_name": ..., "arguments": {...}}, ...],
"client": "generic" | "mcp"}]}``. After its actions an episode replies "Done." until the server says done (at most
five times); an episode with no actions is the no-op (it only replies, first with an unknown tool call to show
that an error is an answer, not a dropped session).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from openenv.core import GenericEnvClient, MCPToolClient
from openenv.core.env_server.mcp_types import CallToolAction

NOOP_TEXT = "I did not do anything."


def _reply(text: str) -> dict[str, Any]:
    return {"tool_name": "reply", "arguments": {"text": text}}


async def generic(base_url: str, task_id: str, actions: list[dict[str, Any]]) -> dict[str, Any]:
    """GenericEnvClient over the WebSocket session: dict actions, dict observations (what verifiers uses)."""
    async with GenericEnvClient(base_url=base_url) as env:
        listed = (await env.step({"type": "list_tools"})).observation["tools"]  # before reset: every tool
        first = await env.reset(task_id=task_id)
        seen: dict[str, Any] = {"request": first.observation["request"], "tools_before_reset": len(listed)}
        seen["tools"] = [t["name"] for t in (await env.step({"type": "list_tools"})).observation["tools"]]
        errors = []
        if not actions:
            bad = await env.step({"type": "call_tool", "tool_name": "nope__nothing", "arguments": {}})
            errors.append(bad.observation["error"])
        result = None
        for action in actions:
            result = await env.step({"type": "call_tool", **action})
            if result.observation.get("error"):
                errors.append(result.observation["error"])
            if result.done:
                break
        for _ in range(5):
            if result is not None and result.done:
                break
            result = await env.step({"type": "call_tool", **_reply("Done." if actions else NOOP_TEXT)})
        assert result is not None
        state = await env.state()
        grade = (result.metadata or {}).get("grade") or {}
        return {
            **seen,
            "reward": result.reward,
            "done": result.done,
            "score": grade.get("score"),
            "errors": errors,
            "state": state,
        }


async def mcp(base_url: str, task_id: str, actions: list[dict[str, Any]]) -> dict[str, Any]:
    """MCPToolClient: list_tools and call_tool (over HTTP /mcp in production mode, 0.10; over the socket in 0.4.1),
    the final replies through step() for their reward."""
    async with MCPToolClient(base_url=base_url) as env:
        first = await env.reset(task_id=task_id)
        tools = [t.name for t in await env.list_tools(use_cache=False)]
        out: Any = None
        for action in actions[:-1]:
            out = await env.call_tool(action["tool_name"], **action["arguments"])
        last = actions[-1] if actions else _reply(NOOP_TEXT)
        result = await env.step(CallToolAction(**last))
        for _ in range(5):
            if result.done:
                break
            result = await env.step(CallToolAction(**_reply("Done." if actions else NOOP_TEXT)))
        request = getattr(first.observation, "request", None)
        return {
            "request": request,
            "tools": tools,
            "reward": result.reward,
            "done": result.done,
            "call_tool_returned": type(out).__name__,
        }


async def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as file:
        plan = json.load(file)
    plays = {"generic": generic, "mcp": mcp}
    out = []
    for episode in plan["episodes"]:
        play = plays[episode.get("client", "generic")]
        got = await asyncio.wait_for(play(plan["base_url"], episode["task_id"], episode["actions"]), timeout=60)
        out.append({"task_id": episode["task_id"], "client": episode.get("client", "generic"), **got})
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    asyncio.run(main())
