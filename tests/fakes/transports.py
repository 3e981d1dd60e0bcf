"""Scripted HTTP transports that the real ``anthropic`` and ``openai`` clients talk to.

A :class:`Script` is a queue of replies (a JSON body with status 200, or an :class:`HTTPError`); every request
is recorded (method, path, headers, parsed JSON body) so tests can look at exactly what went on the wire.
``anthropic_client(script)`` / ``openai_client(script)`` build the real SDK clients on it, with the SDK's own
retries off (the backends retry themselves, with an injectable sleep).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anthropic
import httpx2
import openai


@dataclass(frozen=True)
class HTTPError:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


Reply = dict[str, Any] | HTTPError | Callable[[Request], "dict[str, Any] | HTTPError"]


class Script:
    """Replies in order; ``repeat_last`` keeps answering with the last reply once the queue is empty."""

    def __init__(self, replies: list[Reply] | None = None, *, repeat_last: bool = False) -> None:
        self.replies = list(replies or [])
        self.repeat_last = repeat_last
        self.requests: list[Request] = []

    def add(self, *replies: Reply) -> Script:
        self.replies.extend(replies)
        return self

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content) if request.content else {}
        seen = Request(request.method, request.url.path, dict(request.headers), body)
        self.requests.append(seen)
        if not self.replies:
            return httpx2.Response(400, json={"type": "error", "error": {"type": "fake", "message": "no reply left"}})
        reply = self.replies[0] if (self.repeat_last and len(self.replies) == 1) else self.replies.pop(0)
        if callable(reply):
            reply = reply(seen)
        if isinstance(reply, HTTPError):
            return httpx2.Response(reply.status, json=reply.body, headers=reply.headers)
        return httpx2.Response(200, json=reply)

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self.handle)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [r.body for r in self.requests]


def anthropic_client(script: Script) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(
        api_key="test-key", max_retries=0, http_client=httpx2.AsyncClient(transport=script.transport())
    )


def openai_client(script: Script, base_url: str = "http://127.0.0.1:8000/v1") -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        api_key="EMPTY", base_url=base_url, max_retries=0, http_client=httpx2.AsyncClient(transport=script.transport())
    )


# ---------------------------------------------------------------------------------------------- Anthropic bodies
def anthropic_usage(input_tokens: int = 100, output_tokens: int = 20, read: int = 0, write: int = 0) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
    }


def anthropic_message(
    content: list[dict[str, Any]], stop_reason: str, usage: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage or anthropic_usage(),
    }


def anthropic_text(text: str, usage: dict[str, Any] | None = None) -> dict[str, Any]:
    return anthropic_message([{"type": "text", "text": text}], "end_turn", usage)


def anthropic_tool_use(
    calls: list[tuple[str, str, dict[str, Any]]], text: str = "", usage: dict[str, Any] | None = None
) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    blocks += [{"type": "tool_use", "id": cid, "name": name, "input": args} for cid, name, args in calls]
    return anthropic_message(blocks, "tool_use", usage)


def anthropic_error(status: int, kind: str = "api_error", message: str = "boom", **headers: str) -> HTTPError:
    return HTTPError(status, {"type": "error", "error": {"type": kind, "message": message}}, dict(headers))


# ---------------------------------------------------------------------------------------------- OpenAI bodies
def openai_completion(
    content: str | None = None,
    tool_calls: list[tuple[str, str, str]] | None = None,
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A chat completion; ``tool_calls`` are (id, name, arguments JSON text)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
            for cid, name, args in tool_calls
        ]
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": "student",
        "choices": [{"index": 0, "finish_reason": "tool_calls" if tool_calls else "stop", "message": message}],
        "usage": usage or {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
    }


def openai_error(status: int, message: str = "boom") -> HTTPError:
    return HTTPError(status, {"error": {"message": message, "type": "server_error", "code": None}})
