"""The teacher: an Anthropic model over the Messages API with tool use.

Our provider-neutral messages become Anthropic content blocks (``tool_use`` in assistant turns,
``tool_result`` with ``is_error`` in user turns); the system prompt goes in ``system``. Prompt caching:
``cache_control`` marks the tool list and the system prompt (a stable prefix across every step of every
episode) and the newest message (so each step reuses the conversation cached by the step before).
Transient failures are retried with backoff (:mod:`coworkenv.synth.providers`); what still fails is an
:class:`InfrastructureError`. Needs the ``llm`` extra (``pip install coworkenv[llm]``) and ANTHROPIC_API_KEY.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from coworkenv.harness.messages import AgentTurn, Message, ToolCall, ToolView, Usage
from coworkenv.synth.model_io import ProviderConfigError
from coworkenv.synth.providers import Accounting, RetryPolicy, estimate_cost, with_retries

if TYPE_CHECKING:
    import anthropic

CACHE = {"type": "ephemeral"}
DEFAULT_MAX_TOKENS = 4096
Block = dict[str, Any]


def _text_block(text: str) -> Block:
    return {"type": "text", "text": text}


def _append(out: list[dict[str, Any]], role: str, blocks: list[Block]) -> None:
    """Add blocks as a turn of ``role``, merging with the previous turn when it has the same role."""
    if not blocks:
        return
    if out and out[-1]["role"] == role:
        out[-1]["content"].extend(blocks)
    else:
        out.append({"role": role, "content": list(blocks)})


def _tool_result(m: Message) -> Block:
    block: Block = {"type": "tool_result", "tool_use_id": m.tool_call_id or "", "content": m.content or "(empty)"}
    if m.is_error:
        block["is_error"] = True
    return block


def to_anthropic(messages: list[Message]) -> tuple[list[Block], list[dict[str, Any]]]:
    """(system blocks, messages) in the Messages API's shape. Consecutive same-role turns are merged, tool
    results come first in their user turn (as the API requires), empty assistant turns are dropped."""
    system: list[Block] = []
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            if m.content:
                system.append(_text_block(m.content))
        elif m.role == "user":
            _append(out, "user", [_text_block(m.content or "(no message)")])
        elif m.role == "tool":
            block = _tool_result(m)
            if out and out[-1]["role"] == "user":
                content = out[-1]["content"]
                index = sum(1 for b in content if b.get("type") == "tool_result")
                content.insert(index, block)
            else:
                _append(out, "user", [block])
        else:
            blocks = [_text_block(m.content)] if m.content.strip() else []
            blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in m.tool_calls]
            _append(out, "assistant", blocks)
    return system, out


def tool_params(tools: list[ToolView], cache: bool = True) -> list[Block]:
    params: list[Block] = [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools
    ]
    if cache and params:
        params[-1]["cache_control"] = CACHE
    return params


def mark_cache(system: list[Block], messages: list[dict[str, Any]]) -> None:
    """``cache_control`` on the system prompt and on the last block of the newest turn (2 of the 4 allowed
    breakpoints; the tool list holds the third)."""
    if system:
        system[-1]["cache_control"] = CACHE
    if messages:
        last = messages[-1]["content"][-1]
        if last.get("type") != "text" or last.get("text"):
            last["cache_control"] = CACHE


def usage_from(raw: Any) -> Usage:
    if raw is None:
        return Usage()
    return Usage(
        input_tokens=int(getattr(raw, "input_tokens", 0) or 0),
        output_tokens=int(getattr(raw, "output_tokens", 0) or 0),
        cache_read_tokens=int(getattr(raw, "cache_read_input_tokens", 0) or 0),
        cache_write_tokens=int(getattr(raw, "cache_creation_input_tokens", 0) or 0),
    )


def turn_from(response: Any) -> AgentTurn:
    """Our :class:`AgentTurn` from an ``anthropic.types.Message`` (thinking and other blocks are skipped)."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in response.content:
        kind = getattr(block, "type", None)
        if kind == "text":
            texts.append(block.text)
        elif kind == "tool_use":
            arguments = block.input if isinstance(block.input, dict) else {"input": block.input}
            calls.append(ToolCall(id=block.id, name=block.name, arguments=arguments))
    return AgentTurn(
        text="\n".join(t for t in texts if t),
        tool_calls=calls,
        usage=usage_from(response.usage),
        stop_reason=response.stop_reason,
    )


class AnthropicAgent:
    """``anthropic:MODEL``. Pass ``client`` to reuse or fake one (its own retries should be off)."""

    def __init__(
        self,
        model: str,
        *,
        client: anthropic.AsyncAnthropic | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float | None = None,
        retry: RetryPolicy | None = None,
        cache: bool = True,
        timeout: float = 600.0,
    ) -> None:
        self.model = model
        self.name = f"anthropic:{model}"
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.retry = retry or RetryPolicy()
        self.cache = cache
        self.timeout = timeout
        self.accounting = Accounting(model)
        self._client = client

    def check_ready(self) -> None:
        """Raise :class:`ProviderConfigError` (one sentence saying what to set) when there is no API key."""
        if self._client is None and not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
            raise ProviderConfigError(
                f"{self.name} needs an Anthropic API key: set ANTHROPIC_API_KEY in the environment and run again."
            )

    @property
    def client(self) -> anthropic.AsyncAnthropic:
        if self._client is None:
            self.check_ready()
            try:
                import anthropic
            except ImportError as exc:  # pragma: no cover - depends on the installed extras
                raise ImportError("the anthropic backend needs `pip install 'coworkenv[llm]'`") from exc
            self._client = anthropic.AsyncAnthropic(max_retries=0, timeout=self.timeout)
        return self._client

    def request_params(self, messages: list[Message], tools: list[ToolView]) -> dict[str, Any]:
        """The keyword arguments of ``messages.create`` for this conversation."""
        system, converted = to_anthropic(messages)
        if not converted:
            converted = [{"role": "user", "content": [_text_block("(no message)")]}]
        if self.cache:
            mark_cache(system, converted)
        params: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens, "messages": converted}
        if system:
            params["system"] = system
        if tools:
            params["tools"] = tool_params(tools, self.cache)
        if self.temperature is not None:
            params["temperature"] = self.temperature
        return params

    async def complete(self, messages: list[Message], tools: list[ToolView]) -> AgentTurn:
        params = self.request_params(messages, tools)
        client = self.client

        async def call() -> Any:
            return await client.messages.create(**params)

        response = await with_retries(
            call,
            self.retry,
            what=f"Anthropic request ({self.model})",
            on_retry=self.accounting.note_retry,
            key_env="ANTHROPIC_API_KEY",
        )
        turn = turn_from(response)
        self.accounting.record(turn.usage)
        return turn

    def cost(self, usage: Usage) -> float | None:
        return estimate_cost(self.model, usage)


def from_spec(arg: str) -> AnthropicAgent:
    """``anthropic:MODEL``."""
    return AnthropicAgent(arg)
