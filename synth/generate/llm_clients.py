"""The model clients of the LLM task generator: one small interface over Anthropic's Messages API and any
OpenAI-compatible chat-completions endpoint (OpenAI itself, or an open model served locally by vLLM).

A model spec names the provider (:func:`parse_model`):

- ``claude-sonnet-4-6`` or ``anthropic:claude-sonnet-4-6``: Anthropic (``ANTHROPIC_API_KEY``; a base URL, if
  given, replaces the API's);
- ``openai:MODEL``: an OpenAI-compatible endpoint, at the base URL given (``--base-url``), written in the spec
  (``openai:MODEL@http://127.0.0.1:8000/v1``, as the harness's agents are named) or in ``OPENAI_BASE_URL``;
  the key is ``OPENAI_API_KEY``, or a placeholder for a local server, which needs none.

A :class:`ChatClient` turns a system prompt (the generator's blocks: the cached catalog, then a role) and a
conversation of plain text turns into a :class:`ChatReply` (text and token usage). Retries, the shared
concurrency bound and accounting stay in the generator. :meth:`ChatClient.preflight` checks once, before the
first request, that the endpoint answers and serves the model, so that a wrong URL or model is one clear
line instead of a run of failed cells.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from coworkenv.synth.model_io import ProviderConfigError, Usage
from coworkenv.synth.providers import classify_http_error, redact_url_credentials, scrub

if TYPE_CHECKING:
    import anthropic
    import openai

Provider = Literal["anthropic", "openai"]
PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai")
LOCAL_KEY = "EMPTY"  # what vLLM and most local servers accept when started without --api-key
CACHE = {"type": "ephemeral"}
_AT_URL = re.compile(r"(.*?)@([A-Za-z][A-Za-z0-9+.\-]*://\S+)$")


@dataclass(frozen=True)
class ModelSpec:
    """Which provider, which model, and (when not the provider's own API) where."""

    provider: Provider
    model: str
    base_url: str | None = None

    @property
    def label(self) -> str:
        """``openai:MODEL@URL`` with any credentials of the URL redacted (for logs and reports)."""
        where = f"@{redact_url_credentials(self.base_url)}" if self.base_url else ""
        return f"{self.provider}:{self.model}{where}"


def parse_model(spec: str, base_url: str | None = None) -> ModelSpec:
    """``anthropic:M``, ``openai:M``, ``openai:M@URL`` or a bare Anthropic model id; ``base_url`` wins over the
    spec's, which wins over ``OPENAI_BASE_URL`` (for ``openai:``)."""
    provider, sep, rest = spec.partition(":")
    if not sep or provider not in PROVIDERS:
        provider, rest = "anthropic", spec
    at_url = _AT_URL.match(rest)
    model, url = (at_url.group(1), at_url.group(2)) if at_url else (rest, "")
    model = model.strip()
    if not model:
        raise ProviderConfigError(f"no model named in {spec!r}; write e.g. openai:Qwen/Qwen3-8B or claude-sonnet-4-6")
    chosen = base_url or url or (os.environ.get("OPENAI_BASE_URL") if provider == "openai" else None) or None
    return ModelSpec("openai" if provider == "openai" else "anthropic", model, chosen)


@dataclass(frozen=True)
class Turn:
    role: Literal["user", "assistant"]
    text: str


@dataclass(frozen=True)
class ChatReply:
    text: str
    usage: Usage
    stop_reason: str | None = None


class ChatClient(Protocol):
    """One provider's chat endpoint, as the generator uses it."""

    spec: ModelSpec
    key_env: str

    async def complete(self, system: Sequence[dict[str, Any]], turns: Sequence[Turn], max_tokens: int) -> ChatReply:
        """One request; provider exceptions propagate (the generator retries and classifies them)."""
        ...

    async def preflight(self) -> None:
        """Raise :class:`ProviderConfigError` (one line) when the endpoint cannot serve the model at all."""
        ...


def one_line(text: str) -> str:
    return " ".join(scrub(text).split())


# ---------------------------------------------------------------------------------------------- Anthropic
class AnthropicChat:
    """The Messages API: system blocks as given (the catalog block carries ``cache_control``), and the last
    user turn marked for caching too, so repairs and reviews re-read the conversation from the cache."""

    key_env = "ANTHROPIC_API_KEY"

    def __init__(self, spec: ModelSpec, client: anthropic.AsyncAnthropic | None = None) -> None:
        self.spec = spec
        self._client = client

    @property
    def client(self) -> anthropic.AsyncAnthropic:
        if self._client is None:
            try:
                import anthropic
            except ImportError as exc:  # pragma: no cover - depends on the installed extras
                raise ImportError("the LLM generator needs `pip install 'coworkenv[llm]'`") from exc
            self._client = anthropic.AsyncAnthropic(max_retries=0, base_url=self.spec.base_url)
        return self._client

    async def complete(self, system: Sequence[dict[str, Any]], turns: Sequence[Turn], max_tokens: int) -> ChatReply:
        messages: list[dict[str, Any]] = [
            {"role": t.role, "content": [{"type": "text", "text": t.text}]} for t in turns
        ]
        messages[-1]["content"][-1]["cache_control"] = CACHE
        params: dict[str, Any] = {
            "model": self.spec.model,
            "max_tokens": max_tokens,
            "system": list(system),
            "messages": messages,
        }
        response = await self.client.messages.create(**params)
        raw: Any = response.usage
        usage = Usage(
            input_tokens=int(getattr(raw, "input_tokens", 0) or 0),
            output_tokens=int(getattr(raw, "output_tokens", 0) or 0),
            cache_read_tokens=int(getattr(raw, "cache_read_input_tokens", 0) or 0),
            cache_write_tokens=int(getattr(raw, "cache_creation_input_tokens", 0) or 0),
        )
        text = "".join(getattr(b, "text", "") for b in response.content if getattr(b, "type", "") == "text")
        return ChatReply(text, usage, getattr(response, "stop_reason", None))

    async def preflight(self) -> None:
        return None  # a bad key or model is refused by the first request, which stops the run


# ---------------------------------------------------------------------------------------------- OpenAI-compatible
def openai_usage(raw: Any) -> Usage:
    """Chat-completions usage; prompt tokens served from a prefix cache count as cache reads."""
    if raw is None:
        return Usage()
    details = getattr(raw, "prompt_tokens_details", None)
    cached = int(getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    return Usage(
        input_tokens=int(getattr(raw, "prompt_tokens", 0) or 0) - cached,
        output_tokens=int(getattr(raw, "completion_tokens", 0) or 0),
        cache_read_tokens=cached,
    )


class OpenAIChat:
    """Chat completions: the system blocks joined into one system message (the catalog first, so a server
    with prefix caching, as vLLM has, reuses it), then the turns as plain messages."""

    key_env = "OPENAI_API_KEY"

    def __init__(
        self,
        spec: ModelSpec,
        client: openai.AsyncOpenAI | None = None,
        *,
        api_key: str | None = None,
        timeout: float = 600.0,
        temperature: float | None = None,
    ) -> None:
        self.spec = spec
        self.api_key = api_key
        self.timeout = timeout
        self.temperature = temperature
        self._client = client

    def _key(self) -> str | None:
        return self.api_key or os.environ.get("OPENAI_API_KEY") or (LOCAL_KEY if self.spec.base_url else None)

    @property
    def where(self) -> str:
        if self._client is not None:
            return redact_url_credentials(str(self._client.base_url).rstrip("/"))
        return redact_url_credentials(self.spec.base_url or "https://api.openai.com/v1")

    @property
    def client(self) -> openai.AsyncOpenAI:
        if self._client is None:
            key = self._key()
            if key is None:
                raise ProviderConfigError(
                    f"openai:{self.spec.model} needs an API key: set OPENAI_API_KEY, or point at a local "
                    "server with --base-url (or OPENAI_BASE_URL), e.g. http://127.0.0.1:8000/v1 for vLLM."
                )
            try:
                import openai
            except ImportError as exc:  # pragma: no cover - depends on the installed extras
                raise ImportError("the openai provider needs `pip install openai`") from exc
            self._client = openai.AsyncOpenAI(
                api_key=key, base_url=self.spec.base_url, max_retries=0, timeout=self.timeout
            )
        return self._client

    async def complete(self, system: Sequence[dict[str, Any]], turns: Sequence[Turn], max_tokens: int) -> ChatReply:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": "\n\n".join(str(b.get("text", "")) for b in system)}
        ]
        messages += [{"role": t.role, "content": t.text} for t in turns]
        params: dict[str, Any] = {"model": self.spec.model, "messages": messages, "max_tokens": max_tokens}
        if self.temperature is not None:
            params["temperature"] = self.temperature
        response: Any = await self.client.chat.completions.create(**params)
        usage = openai_usage(getattr(response, "usage", None))
        if not response.choices:
            return ChatReply("", usage, "empty")
        choice = response.choices[0]
        return ChatReply(choice.message.content or "", usage, choice.finish_reason)

    async def preflight(self) -> None:
        """``GET /models``: the endpoint answers and serves the model (an endpoint without the route is let be)."""
        client = self.client
        try:
            page: Any = await client.models.list()
        except Exception as exc:
            verdict = classify_http_error(exc)
            detail = one_line(f"{type(exc).__name__}: {exc}")
            if verdict.kind == "other":
                raise
            if verdict.status in (401, 403):
                raise ProviderConfigError(
                    f"the endpoint at {self.where} refused the key ({detail}); set OPENAI_API_KEY to a key it accepts."
                ) from None
            if verdict.kind == "config" or verdict.kind == "rejected":
                return  # no /models route here: the first request tells whether the model is served
            raise ProviderConfigError(
                f"cannot reach the OpenAI-compatible endpoint at {self.where} ({detail}); start the server "
                f"(e.g. `vllm serve {self.spec.model}`) or fix --base-url / OPENAI_BASE_URL."
            ) from None
        served = [str(getattr(m, "id", "")) for m in getattr(page, "data", None) or []]
        if served and self.spec.model not in served:
            shown = ", ".join(served[:8]) + (", ..." if len(served) > 8 else "")
            raise ProviderConfigError(
                f"model {self.spec.model!r} is not served at {self.where} (it serves: {shown}); "
                f"pass one of those, e.g. --model openai:{served[0]}."
            )


def make_chat(
    spec: ModelSpec, client: Any | None = None, *, api_key: str | None = None, temperature: float | None = None
) -> ChatClient:
    """The client for ``spec``; ``client`` is an SDK client to use (tests, shared connection pools)."""
    if spec.provider == "openai":
        return OpenAIChat(spec, client, api_key=api_key, temperature=temperature)
    return AnthropicChat(spec, client)
