"""A scripted stand-in for the Anthropic Messages API on 127.0.0.1, for running the real Claude Code offline.

Requests that carry the services' tools (names ``mcp__…``) get the plan's replies in order, chosen by how
many tool results the conversation already holds; any other request (titles, quota probes) gets "ok".
Streaming requests get SSE events (message_start, content_block_start/delta/stop, message_delta,
message_stop), others a JSON message. Every request body is kept in ``requests``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Block = dict[str, Any]


@dataclass
class MessagesAPI:
    replies: list[list[Block]]
    requests: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""

    def reply_for(self, body: dict[str, Any]) -> tuple[list[Block], str]:
        tools = [t.get("name", "") for t in body.get("tools", [])]
        if not any(name.startswith("mcp__") for name in tools):
            return [{"type": "text", "text": "ok"}], "end_turn"
        done = sum(
            1
            for m in body.get("messages", [])
            if isinstance(m.get("content"), list)
            for b in m["content"]
            if b.get("type") == "tool_result"
        )
        blocks = self.replies[min(done, len(self.replies) - 1)]
        return blocks, "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"


def _events(blocks: list[Block], stop: str, n: int) -> Iterator[dict[str, Any]]:
    usage = {"input_tokens": 10, "output_tokens": 1}
    yield {
        "type": "message_start",
        "message": {
            "id": f"msg_{n}",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": usage,
        },
    }
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            yield {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}
            yield {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": b["text"]}}
        else:
            start = {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}
            yield {"type": "content_block_start", "index": i, "content_block": start}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}
            yield {"type": "content_block_delta", "index": i, "delta": delta}
        yield {"type": "content_block_stop", "index": i}
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": None},
        "usage": {"output_tokens": 5},
    }
    yield {"type": "message_stop"}


def _handler(api: MessagesAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            return None

        def _json(self, data: dict[str, Any]) -> None:
            raw = json.dumps(data).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self) -> None:
            self._json({})

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if "count_tokens" in self.path:
                self._json({"input_tokens": 10})
                return
            api.requests.append(body)
            blocks, stop = api.reply_for(body)
            if not body.get("stream"):
                self._json(
                    {
                        "id": "msg_x",
                        "type": "message",
                        "role": "assistant",
                        "model": "claude-sonnet-4-6",
                        "content": blocks,
                        "stop_reason": stop,
                        "stop_sequence": None,
                        "usage": {"input_tokens": 10, "output_tokens": 5},
                    }
                )
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            for event in _events(blocks, stop, len(api.requests)):
                self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()

    return Handler


@contextmanager
def serve_messages_api(replies: list[list[Block]]) -> Iterator[MessagesAPI]:
    api = MessagesAPI(replies)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(api))
    api.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield api
    finally:
        server.shutdown()
        server.server_close()
