"""What every model-provider backend shares: retries with backoff, secret scrubbing, cost estimates.

- :func:`with_retries` runs one provider request, retrying transient failures (rate limits, overload,
  server errors, dropped connections) with exponential backoff and full jitter, up to a bound; then it
  raises :class:`InfrastructureError`. The sleep is injectable, so tests
  never wait.
- :func:`classify_http_error` sorts an SDK exception (anthropic or openai, by duck typing) into retry /
  configuration problem / rejected request.
- :func:`scrub` removes API keys and bearer tokens from any text that may reach a log or a trajectory.
- :func:`estimate_cost` prices a :class:`Usage` from a small per-model table (USD per million tokens);
  :class:`Accounting` keeps a backend's running totals.
- :func:`arguments_or_invalid` parses a model's tool-call arguments; malformed JSON is kept under
  :data:`INVALID_ARGUMENTS_KEY` so the call fails as invalid arguments instead of crashing the episode.

The LLM task generator (``coworkenv.synth.generate.llm_generator``) uses this module too. The types a model call
gives back (:class:`Usage`, :class:`InfrastructureError`, :class:`ProviderConfigError`) live in
:mod:`coworkenv.synth.model_io`, the floor both wings import.
"""

from __future__ import annotations

import json
import logging
import os
import random
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal, TypeVar

import anyio

from coworkenv.synth.model_io import InfrastructureError, ProviderConfigError, Usage

log = logging.getLogger("coworkenv.synth.providers")
T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]

__all__ = ["InfrastructureError", "ProviderConfigError", "Usage"]  # the model_io types, for callers of this module


# ---------------------------------------------------------------------------------------------- secrets
_SECRET_PATTERNS = [
    re.compile(r"sk-ant-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/\-]{8,}=*"),
    re.compile(r"(?i)((?:x-api-key|api[_-]?key|authorization|auth[_-]?token)[\"']?\s*[:=]\s*[\"']?)[^\s\"',}&]{6,}"),
]
_URL_SECRETS = [
    # credentials in a URL: scheme://user:password@host or scheme://token@host
    re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@\"'<>]+@"),
    # secret query parameters: ?api_key=…, &token=…, ?key=…
    re.compile(
        r"(?i)([?&;](?:api[_-]?key|key|access[_-]?token|token|auth|secret|password|passwd|pwd|sig|signature|"
        r"client[_-]?secret)=)[^&#\s\"'<>]+"
    ),
]
_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)", re.IGNORECASE)
REDACTED = "[REDACTED]"


def _env_secrets() -> list[str]:
    return sorted(
        (v for k, v in os.environ.items() if _SECRET_ENV.search(k) and len(v) >= 8),
        key=len,
        reverse=True,
    )


def scrub(text: str, extra: list[str] | None = None) -> str:
    """``text`` without API keys, bearer tokens or the value of any secret-looking environment variable."""
    for secret in [*(extra or []), *_env_secrets()]:
        if secret and len(secret) >= 8:
            text = text.replace(secret, REDACTED)
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + REDACTED, text)
    return redact_url_credentials(text)


def redact_url_credentials(text: str) -> str:
    """``text`` with the credentials of every URL in it redacted: ``http://u:KEY@host/v1`` →
    ``http://[REDACTED]@host/v1``, ``…?api_key=KEY`` → ``…?api_key=[REDACTED]`` (agent specs, base URLs)."""
    for pattern in _URL_SECRETS:
        text = pattern.sub(lambda m: m.group(1) + REDACTED + ("@" if m.group(0).endswith("@") else ""), text)
    return text


# ---------------------------------------------------------------------------------------------- errors
ErrorKind = Literal["retry", "config", "rejected", "other"]
RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
CONFIG_STATUSES = frozenset({401, 403, 404})


@dataclass(frozen=True)
class ErrorClass:
    kind: ErrorKind
    status: int | None = None
    retry_after: float | None = None


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            return max(0.0, float(raw) * scale)
        except ValueError:
            continue
    return None


def classify_http_error(exc: BaseException) -> ErrorClass:
    """Sort an exception of the anthropic or openai SDK (or httpx) by what to do about it."""
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        if status in RETRY_STATUSES or status >= 500:
            return ErrorClass("retry", status, _retry_after(exc))
        if status in CONFIG_STATUSES:
            return ErrorClass("config", status)
        return ErrorClass("rejected", status)
    names = {cls.__name__ for cls in type(exc).__mro__}
    if names & {"APIConnectionError", "APITimeoutError", "TransportError", "TimeoutException", "ConnectError"}:
        return ErrorClass("retry")
    if isinstance(exc, TypeError) and "authentication" in str(exc).lower():
        return ErrorClass("config")
    return ErrorClass("other")


# ---------------------------------------------------------------------------------------------- retries
@dataclass
class RetryPolicy:
    """Exponential backoff with full jitter: attempt n waits uniform(0, min(max_delay, base × 2ⁿ)),
    or the server's retry-after when it says so (capped at max_delay)."""

    max_attempts: int = 6
    base_delay: float = 1.0
    max_delay: float = 60.0
    sleep: Sleep = field(default=anyio.sleep, repr=False)
    rng: random.Random = field(default_factory=random.Random, repr=False)

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        if retry_after is not None:
            return min(self.max_delay, retry_after)
        return self.rng.uniform(0, min(self.max_delay, self.base_delay * (2**attempt)))


def no_wait_policy(max_attempts: int = 3) -> RetryPolicy:
    """A policy that retries without sleeping (for tests and local fakes)."""

    async def _no_sleep(_: float) -> None:
        return None

    return RetryPolicy(max_attempts=max_attempts, sleep=_no_sleep)


async def with_retries(
    request: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    what: str,
    classify: Callable[[BaseException], ErrorClass] = classify_http_error,
    on_retry: Callable[[int, BaseException], None] | None = None,
    key_env: str | None = None,
) -> T:
    """Run ``request``; retry transient failures; turn provider failures into InfrastructureError.

    Exceptions that are not provider failures (``kind == "other"``: a bug of ours) propagate unchanged."""
    attempt = 0
    while True:
        try:
            return await request()
        except Exception as exc:
            verdict = classify(exc)
            detail = scrub(f"{type(exc).__name__}: {exc}")
            what = scrub(what)
            if verdict.kind == "other":
                raise
            if verdict.kind == "config":
                key = key_env or "the provider's API key variable"
                raise ProviderConfigError(
                    f"{what} was refused ({detail}); check {key}, the model name and the base URL."
                ) from None
            if verdict.kind == "rejected":
                raise InfrastructureError(f"{what} was rejected by the provider: {detail}") from None
            attempt += 1
            if attempt >= policy.max_attempts:
                raise InfrastructureError(
                    f"{what} failed after {attempt} attempts; last error: {detail}. "
                    "The provider is down or rate-limiting; retry the trial later or lower the concurrency."
                ) from None
            wait = policy.delay(attempt - 1, verdict.retry_after)
            log.warning("%s: attempt %d failed (%s); retrying in %.1fs", what, attempt, detail, wait)
            if on_retry is not None:
                on_retry(attempt, exc)
            await policy.sleep(wait)


# ---------------------------------------------------------------------------------------------- costs
@dataclass(frozen=True)
class Price:
    """USD per million tokens. Cache writes (5-minute) cost 1.25× input, cache reads 0.1× input unless set."""

    input: float
    output: float
    cache_write: float | None = None
    cache_read: float | None = None

    def cost(self, usage: Usage) -> float:
        write = self.cache_write if self.cache_write is not None else self.input * 1.25
        read = self.cache_read if self.cache_read is not None else self.input * 0.1
        total = (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_write_tokens * write
            + usage.cache_read_tokens * read
        )
        return total / 1_000_000


# Longest matching prefix wins; model ids may carry date suffixes (claude-haiku-4-5-20251001). Prices are
# list prices per million tokens as published when this table was written: an estimate, not a bill. Models
# not listed are unpriced (cost None); add one with register_price().
PRICES: dict[str, Price] = {
    "claude-opus-4-8": Price(5.0, 25.0),
    "claude-opus-4-7": Price(5.0, 25.0),
    "claude-opus-4-6": Price(5.0, 25.0),
    "claude-opus-4-5": Price(5.0, 25.0),
    "claude-opus-4-1": Price(15.0, 75.0),
    "claude-opus-4": Price(15.0, 75.0),
    "claude-sonnet-4": Price(3.0, 15.0),
    "claude-3-7-sonnet": Price(3.0, 15.0),
    "claude-3-5-sonnet": Price(3.0, 15.0),
    "claude-haiku-4": Price(1.0, 5.0),
    "claude-3-5-haiku": Price(0.8, 4.0),
    "claude-3-haiku": Price(0.25, 1.25),
}


def register_price(prefix: str, price: Price) -> None:
    """Price the models whose id starts with ``prefix`` (overrides the table's entry)."""
    PRICES[prefix] = price


def price_for(model: str) -> Price | None:
    matches = [prefix for prefix in PRICES if model.startswith(prefix)]
    return PRICES[max(matches, key=len)] if matches else None


def estimate_cost(model: str, usage: Usage) -> float | None:
    """The estimated USD cost of ``usage`` on ``model``; None for a model not in the table (e.g. a local one)."""
    price = price_for(model)
    return None if price is None else round(price.cost(usage), 6)


@dataclass
class Accounting:
    """Running totals of one backend: requests, retries, tokens and estimated cost."""

    model: str
    requests: int = 0
    retries: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    priced: bool = True

    def record(self, usage: Usage) -> float | None:
        self.requests += 1
        self.usage = self.usage.add(usage)
        cost = estimate_cost(self.model, usage)
        if cost is None:
            self.priced = False
        else:
            self.cost_usd = round(self.cost_usd + cost, 6)
        return cost

    def note_retry(self, _attempt: int, _exc: BaseException) -> None:
        self.retries += 1

    def as_dict(self) -> dict[str, object]:
        return {
            "model": self.model,
            "requests": self.requests,
            "retries": self.retries,
            **self.usage.model_dump(),
            "cost_usd": self.cost_usd if self.priced else None,
        }


# ---------------------------------------------------------------------------------------------- tool arguments
INVALID_ARGUMENTS_KEY = "__invalid_arguments__"
"""A tool call whose arguments the model wrote as malformed JSON keeps them under this key (with the parse
error). No tool accepts the key, so the services answer the call with an invalid-arguments error that the
model sees (and the audit log records); the OpenAI backend turns that answer into the JSON error."""


def parse_arguments(raw: object) -> tuple[dict[str, object], str | None]:
    """(arguments, error) from a model's tool-call arguments: a JSON object text, an object, or nothing."""
    if raw is None or raw == "":
        return {}, None
    if isinstance(raw, dict):
        return dict(raw), None
    if not isinstance(raw, str):
        return {}, f"arguments must be a JSON object, got {type(raw).__name__}"
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return {}, f"arguments are not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
    if not isinstance(value, dict):
        return {}, f"arguments must be a JSON object, got {type(value).__name__}"
    return value, None


def arguments_or_invalid(raw: object) -> dict[str, object]:
    """The parsed arguments, or ``{INVALID_ARGUMENTS_KEY: {"raw": ..., "error": ...}}`` when malformed."""
    arguments, error = parse_arguments(raw)
    if error is None:
        return arguments
    return {INVALID_ARGUMENTS_KEY: {"raw": raw if isinstance(raw, str) else repr(raw), "error": error}}


def invalid_arguments(arguments: dict[str, object]) -> dict[str, str] | None:
    """The ``{"raw", "error"}`` record of a malformed call, or None for a well-formed one."""
    value = arguments.get(INVALID_ARGUMENTS_KEY)
    if isinstance(value, dict) and set(value) == {"raw", "error"}:
        return {"raw": str(value["raw"]), "error": str(value["error"])}
    return None
