"""Any OpenAI-compatible chat-completions endpoint with tools (``openai:MODEL@BASE_URL``), e.g. a vLLM-served
student.

Tool calls go out as ``tool_calls`` with JSON-string arguments and come back the same way. Arguments that
are not valid JSON do not crash the episode: the call keeps them under
:data:`~coworkenv.synth.providers.INVALID_ARGUMENTS_KEY`, the service rejects it (no tool accepts that
key), and when the conversation is sent back the model sees its exact text and the JSON error. A server
started without a tool-call parser returns Qwen-style ``<tool_call>`` text: it is parsed too. Transient
failures are retried with backoff; the API key comes from ``api_key``, ``OPENAI_API_KEY`` or, for local
servers that need none, a placeholder.
"""

from __future__ import annotations

import json
import os
from itertools import count
from typing import TYPE_CHECKING, Any

from coworkenv.harness.agents.hf_agent import parse_tool_calls
from coworkenv.harness.messages import AgentTurn, Message, ToolCall, ToolView, Usage
from coworkenv.synth.model_io import ProviderConfigError
from coworkenv.synth.providers import (
    Accounting,
    RetryPolicy,
    arguments_or_invalid,
    estimate_cost,
    invalid_arguments,
    redact_url_credentials,
    with_retries,
)

if TYPE_CHECKING:
    import openai

DEFAULT_MAX_TOKENS = 4096
LOCAL_KEY = "EMPTY"  # what vLLM and most local servers accept when started without --api-key


def _wire_call(call: ToolCall) -> dict[str, Any]:
    bad = invalid_arguments(call.arguments)
    arguments = bad["raw"] if bad else json.dumps(call.arguments, ensure_ascii=False)
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": arguments}}


def to_openai(messages: list[Message]) -> list[dict[str, Any]]:
    """Chat-completions messages. A tool result answering a malformed call says what was wrong with it."""
    out: list[dict[str, Any]] = []
    malformed: dict[str, str] = {}
    for m in messages:
        if m.role == "assistant":
            entry: dict[str, Any] = {"role": "assistant", "content": m.content or None}
            if m.tool_calls:
                entry["tool_calls"] = [_wire_call(c) for c in m.tool_calls]
                for c in m.tool_calls:
                    bad = invalid_arguments(c.arguments)
                    if bad:
                        malformed[c.id] = bad["error"]
            elif not m.content:
                entry["content"] = ""
            out.append(entry)
        elif m.role == "tool":
            content = m.content
            if m.tool_call_id in malformed:
                content = (
                    f"Error: the call was not made: its {malformed[m.tool_call_id]}. "
                    "Call the tool again with the arguments as one JSON object."
                )
            elif m.is_error and not content.lower().startswith("error"):
                content = f"Error: {content}"
            out.append({"role": "tool", "tool_call_id": m.tool_call_id or "", "content": content})
        else:
            out.append({"role": m.role, "content": m.content})
    return out


def tool_params(tools: list[ToolView]) -> list[dict[str, Any]]:
    return [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}
        for t in tools
    ]


def usage_from(raw: Any) -> Usage:
    if raw is None:
        return Usage()
    details = getattr(raw, "prompt_tokens_details", None)
    cached = int(getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    return Usage(
        input_tokens=int(getattr(raw, "prompt_tokens", 0) or 0) - cached,
        output_tokens=int(getattr(raw, "completion_tokens", 0) or 0),
        cache_read_tokens=cached,
    )


def turn_from(response: Any, text_calls_prefix: str | None = None) -> AgentTurn:
    """Our :class:`AgentTurn` from a ``ChatCompletion``. With ``text_calls_prefix``, ``<tool_call>`` blocks in
    the text are parsed when the server returned no structured calls."""
    usage = usage_from(getattr(response, "usage", None))
    if not response.choices:
        return AgentTurn(usage=usage, stop_reason="empty")
    choice = response.choices[0]
    message = choice.message
    text = message.content or ""
    calls: list[ToolCall] = []
    for raw in message.tool_calls or []:
        function = getattr(raw, "function", None)
        if function is None:  # a custom (non-function) tool call: not ours
            continue
        calls.append(ToolCall(id=raw.id, name=function.name, arguments=arguments_or_invalid(function.arguments)))
    if not calls and text_calls_prefix is not None and "<tool_call>" in text:
        text, calls = parse_tool_calls(text, id_prefix=text_calls_prefix)
    return AgentTurn(text=text.strip(), tool_calls=calls, usage=usage, stop_reason=choice.finish_reason)


class OpenAIAgent:
    """``openai:MODEL@BASE_URL``. Pass ``client`` to reuse or fake one (its own retries should be off)."""

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        *,
        api_key: str | None = None,
        client: openai.AsyncOpenAI | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float | None = None,
        retry: RetryPolicy | None = None,
        parse_text_tool_calls: bool = True,
        timeout: float = 600.0,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.name = f"openai:{model}" + (f"@{redact_url_credentials(base_url)}" if base_url else "")
        self.api_key = api_key
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.retry = retry or RetryPolicy()
        self.parse_text_tool_calls = parse_text_tool_calls
        self.timeout = timeout
        self.extra_body = extra_body
        self.accounting = Accounting(model)
        self._client = client
        self._turns = count()

    def _key(self) -> str | None:
        return self.api_key or os.environ.get("OPENAI_API_KEY") or (LOCAL_KEY if self.base_url else None)

    def check_ready(self) -> None:
        """Raise :class:`ProviderConfigError` (one sentence saying what to set) when there is no API key."""
        if self._client is None and self._key() is None:
            raise ProviderConfigError(
                f"{self.name} needs an API key: set OPENAI_API_KEY in the environment, "
                "or name a local server as openai:MODEL@BASE_URL."
            )

    @property
    def client(self) -> openai.AsyncOpenAI:
        if self._client is None:
            self.check_ready()
            try:
                import openai
            except ImportError as exc:  # pragma: no cover - depends on the installed extras
                raise ImportError("the openai backend needs `pip install openai`") from exc
            key = self._key()
            self._client = openai.AsyncOpenAI(api_key=key, base_url=self.base_url, max_retries=0, timeout=self.timeout)
        return self._client

    def request_params(self, messages: list[Message], tools: list[ToolView]) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.model, "messages": to_openai(messages), "max_tokens": self.max_tokens}
        if tools:
            params["tools"] = tool_params(tools)
        if self.temperature is not None:
            params["temperature"] = self.temperature
        if self.extra_body:
            params["extra_body"] = self.extra_body
        return params

    async def complete(self, messages: list[Message], tools: list[ToolView]) -> AgentTurn:
        params = self.request_params(messages, tools)
        client = self.client

        async def call() -> Any:
            return await client.chat.completions.create(**params)

        response = await with_retries(
            call,
            self.retry,
            what=f"chat completion ({self.name})",
            on_retry=self.accounting.note_retry,
            key_env="OPENAI_API_KEY",
        )
        prefix = f"call_t{next(self._turns)}" if self.parse_text_tool_calls else None
        turn = turn_from(response, prefix)
        self.accounting.record(turn.usage)
        return turn

    def cost(self, usage: Usage) -> float | None:
        return estimate_cost(self.model, usage)


def from_spec(arg: str) -> OpenAIAgent:
    """``openai:MODEL`` or ``openai:MODEL@BASE_URL``."""
    model, _, base_url = arg.partition("@")
    return OpenAIAgent(model, base_url=base_url or None)
