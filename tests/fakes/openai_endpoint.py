"""A fake OpenAI-compatible endpoint, with the routes a vLLM server answers, for the real ``openai`` client.

- ``GET /v1/models`` lists the served models (``models_status`` other than 200 plays an endpoint without it);
- ``POST /v1/chat/completions`` answers a served model from ``answer(body)`` (reply text, or an
  :class:`~tests.fakes.transports.HTTPError`), and an unknown model with vLLM's 404.

:class:`Roles` routes each chat request to a queue of replies by which context sent it (a marker found in its
system message: a role prompt), and records the order of the contexts that asked. The endpoint works as an
httpx transport (:meth:`ChatEndpoint.client`) or served over real HTTP on 127.0.0.1 (:func:`serve`, for the
command line).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2
import openai

from tests.fakes.transports import HTTPError, Request, openai_completion

Answer = Callable[[dict[str, Any]], "str | HTTPError"]
BASE_URL = "http://127.0.0.1:8000/v1"


def system_text(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in body.get("messages", []) if m.get("role") == "system")


class Roles:
    """Replies per context: ``Roles({"writer": WRITER_PROMPT, "reviewer": REVIEWER_PROMPT}, writer=[...], ...)``.

    The first marker found in a request's system message names its context; that context's next reply is
    sent (its last one again once the queue is down to one). ``calls`` is the order the contexts asked in."""

    def __init__(self, markers: dict[str, str], **replies: list[str | HTTPError]) -> None:
        self.markers = markers
        self.replies = {name: list(queue) for name, queue in replies.items()}
        self.calls: list[str] = []

    def who(self, body: dict[str, Any]) -> str:
        system = system_text(body)
        for name, marker in self.markers.items():
            if marker in system:
                return name
        raise AssertionError(f"no context marker in the system message: {system[:200]!r}")

    def __call__(self, body: dict[str, Any]) -> str | HTTPError:
        name = self.who(body)
        self.calls.append(name)
        queue = self.replies.get(name) or []
        if not queue:
            raise AssertionError(f"no reply left for the {name}")
        return queue[0] if len(queue) == 1 else queue.pop(0)


@dataclass
class ChatEndpoint:
    answer: Answer
    models: list[str] = field(default_factory=lambda: ["qwen-local"])
    models_status: int = 200
    usage: dict[str, Any] = field(
        default_factory=lambda: {
            "prompt_tokens": 3000,
            "completion_tokens": 700,
            "total_tokens": 3700,
            "prompt_tokens_details": {"cached_tokens": 2000},
        }
    )
    requests: list[Request] = field(default_factory=list)

    def respond(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if method == "GET" and path.endswith("/models"):
            if self.models_status != 200:
                return self.models_status, {"error": {"message": "Not Found", "type": "NotFoundError"}}
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "vllm"} for m in self.models]
            return 200, {"object": "list", "data": data}
        if method == "POST" and path.endswith("/chat/completions"):
            model = body.get("model")
            if model not in self.models:
                message = f"The model `{model}` does not exist."
                return 404, {"error": {"message": message, "type": "NotFoundError", "param": None, "code": 404}}
            reply = self.answer(body)
            if isinstance(reply, HTTPError):
                return reply.status, reply.body
            completion = openai_completion(reply, usage=self.usage)
            completion["model"] = model
            return 200, completion
        return 404, {"error": {"message": f"no route {method} {path}", "type": "NotFoundError"}}

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content) if request.content else {}
        self.requests.append(Request(request.method, request.url.path, dict(request.headers), body))
        status, payload = self.respond(request.method, request.url.path, body)
        return httpx2.Response(status, json=payload)

    def client(self, base_url: str = BASE_URL) -> openai.AsyncOpenAI:
        transport = httpx2.MockTransport(self.handle)
        return openai.AsyncOpenAI(
            api_key="EMPTY", base_url=base_url, max_retries=0, http_client=httpx2.AsyncClient(transport=transport)
        )

    @property
    def chats(self) -> list[dict[str, Any]]:
        """The bodies of the chat-completion requests, in order."""
        return [r.body for r in self.requests if r.path.endswith("/chat/completions")]


def _handler(endpoint: ChatEndpoint) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            return None

        def _serve(self, method: str) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}") if length else {}
            endpoint.requests.append(Request(method, self.path, dict(self.headers), body))
            status, payload = endpoint.respond(method, self.path, body)
            raw = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

    return Handler


@contextmanager
def serve(endpoint: ChatEndpoint) -> Iterator[str]:
    """Serve ``endpoint`` on 127.0.0.1 over real HTTP; yields its base URL (``http://127.0.0.1:PORT/v1``)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(endpoint))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
