"""The judge model Claw-Eval's graders ask, configured like our agents.

Claw-Eval's graders get a ``judge`` and either call its ``evaluate``/``evaluate_actions``/``evaluate_visual``
(its ``LLMJudge``, which sends one chat completion through ``judge.client``) or call
``judge.client.chat.completions.create(model=judge.model_id, ...)`` themselves. So what we hand over is an
OpenAI-shaped ``client``: every request goes out to the model configured here, synchronously (their graders are
plain functions), with our retries (:mod:`coworkenv.synth.providers`: exponential backoff, secrets scrubbed):

- ``openai:MODEL[@BASE_URL]``: any OpenAI-compatible endpoint (key from ``OPENAI_API_KEY``; a local server given
  by its URL needs none);
- ``anthropic:MODEL``: Anthropic's Messages API through the ``anthropic`` client (key from ``ANTHROPIC_API_KEY``);
  the chat messages are turned into a system prompt and Messages API turns (images as base64 image blocks).

Without a judge, :func:`stand_in` answers every question at once with a parseable "not judged" (score 0) and
records that it was asked; a judge that fails (after its retries) answers the same way and records why. Either
way the grade says which parts were *not judged* (:attr:`JudgeSession.not_judged`), never a silent 0. Nothing
here raises into their graders' loops (they retry 30 times with sleeps on any exception), except
:class:`JudgeLoop` (a ``BaseException``, so their ``except Exception`` cannot swallow it): a grader that asks the
same question a third time after a canned answer did not parse it, and waiting will not change that.
"""

from __future__ import annotations

import inspect
import json
import os
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from coworkenv.synth.model_io import InfrastructureError, ProviderConfigError
from coworkenv.synth.providers import RetryPolicy, classify_http_error, redact_url_credentials, scrub

T = TypeVar("T")
Answer = Callable[[dict[str, Any]], str]
"""A chat-completions request's keyword arguments (``model``, ``messages``, ``temperature``, ``max_tokens``…) →
the model's text."""

NOT_JUDGED = json.dumps({"score": 0.0, "reasoning": "not judged: no judge is configured"})
JUDGE_FAILED = json.dumps({"score": 0.0, "reasoning": "not judged: the judge failed"})
LOCAL_KEY = "EMPTY"
DEFAULT_TIMEOUT_S = 120.0


class JudgeLoop(BaseException):
    """A grader asked the same question a third time after a canned answer: it cannot parse it (raised through
    its retry loop, which catches ``Exception``)."""


class JudgeSpecError(ValueError):
    """A judge spec that names no known provider or model."""


# ---------------------------------------------------------------------------------------------- responses
@dataclass(frozen=True)
class ChatMessage:
    content: str
    role: str = "assistant"


@dataclass(frozen=True)
class Choice:
    message: ChatMessage
    index: int = 0
    finish_reason: str = "stop"


@dataclass(frozen=True)
class Completion:
    """The part of an OpenAI ``ChatCompletion`` their graders read: ``choices[0].message.content``."""

    choices: list[Choice]

    @classmethod
    def of(cls, text: str) -> Completion:
        return cls([Choice(ChatMessage(text))])


# ---------------------------------------------------------------------------------------------- the judge
class Judge:
    """A judge model (``answer`` is None: the stand-in). Shared by every grade of a run; each grade asks through its
    own :meth:`session`, which records what that grade asked and what failed."""

    def __init__(
        self,
        model_id: str,
        answer: Answer | None,
        *,
        name: str | None = None,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        key_env: str | None = None,
        why_not: str = "no judge configured",
    ) -> None:
        self.model_id = model_id
        self.why_not = why_not
        """The stand-in's reason there is no judge (what a grade's not-judged lines say)."""
        self.answer = answer
        self.name = name or model_id
        self.retry = retry or RetryPolicy()
        self.sleep = sleep
        self.key_env = key_env
        self.broken: str | None = None
        """Set when the provider refused us for a reason retrying will not fix: later questions are not sent."""
        self._lock = threading.Lock()

    @property
    def real(self) -> bool:
        """A model answers (not the stand-in)."""
        return self.answer is not None

    def session(self) -> JudgeSession:
        return JudgeSession(self)

    def ask(self, params: dict[str, Any]) -> str:
        """The model's answer to one request, retried on transient failures; raises InfrastructureError (or
        ProviderConfigError) when it cannot be had."""
        if self.answer is None:
            return NOT_JUDGED
        if self.broken is not None:
            raise ProviderConfigError(self.broken)
        answer = self.answer
        try:
            return retrying(lambda: answer(params), self.retry, self.sleep, f"judge {self.name}", self.key_env)
        except ProviderConfigError as exc:
            with self._lock:
                self.broken = str(exc)
            raise


@dataclass
class JudgeSession:
    """What one grade hands to Claw-Eval's grader: ``client`` (``.chat.completions.create``) and ``model_id``."""

    judge: Judge
    asked: list[str] = field(default_factory=list)
    """A short excerpt of each question asked."""
    failures: list[str] = field(default_factory=list)
    _seen: Counter[str] = field(default_factory=Counter)

    @property
    def model_id(self) -> str:
        return self.judge.model_id

    @property
    def client(self) -> JudgeSession:
        return self

    @property
    def chat(self) -> JudgeSession:
        return self

    @property
    def completions(self) -> JudgeSession:
        return self

    def create(self, **params: Any) -> Completion:
        """One chat completion, as the OpenAI client's ``chat.completions.create`` (never raises but JudgeLoop)."""
        question = _question(params)
        self.asked.append(question[:160])
        canned = not self.judge.real or bool(self.failures)
        if canned:
            key = json.dumps(params.get("messages"), sort_keys=True, default=str)
            self._seen[key] += 1
            if self._seen[key] >= 3:
                raise JudgeLoop(f"the grader asked the same question three times: {question[:120]}")
        if not self.judge.real:
            return Completion.of(NOT_JUDGED)
        if self.failures:
            return Completion.of(JUDGE_FAILED)
        try:
            return Completion.of(self.judge.ask(params))
        except InfrastructureError as exc:
            self.failures.append(scrub(str(exc)))
            return Completion.of(JUDGE_FAILED)

    @property
    def not_judged(self) -> list[str]:
        """What of this grade no judge scored: every question of the stand-in, or the judge's failure."""
        if not self.judge.real:
            return [f"{self.judge.why_not}; the grader asked: {q}" for q in self.asked]
        return [f"the judge failed: {f}" for f in self.failures]


def _question(params: dict[str, Any]) -> str:
    """The last user message's text of a chat request, on one line."""
    for message in reversed(params.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            return " ".join(str(content or "").split())
    return ""


def stand_in(why_not: str = "no judge configured") -> Judge:
    """The judge when none is configured: answers "not judged" at once, and the grade says so (and why)."""
    return Judge("not-judged", None, name="no judge", why_not=why_not)


JUDGE_ENV = "COWORKENV_CLAW_JUDGE"
_ENV_JUDGES: dict[str, Judge] = {}
_ENV_LOCK = threading.Lock()


def env_judge() -> Judge | None:
    """The judge ``$COWORKENV_CLAW_JUDGE`` names (``openai:MODEL[@BASE_URL]`` or ``anthropic:MODEL``; one per spec
    per process), for runs that pass none; None when it is not set. A spec that cannot be used gives the stand-in
    with the reason, so every grade says why it was not judged."""
    spec = os.environ.get(JUDGE_ENV, "").strip()
    if not spec:
        return None
    with _ENV_LOCK:
        known = _ENV_JUDGES.get(spec)
        if known is None:
            try:
                known = judge_from_spec(spec)
            except (JudgeSpecError, ProviderConfigError, ImportError) as exc:
                known = stand_in(f"{JUDGE_ENV}={spec} cannot be used ({scrub(str(exc))})")
            _ENV_JUDGES[spec] = known
    return known


# ---------------------------------------------------------------------------------------------- retries
def retrying(
    call: Callable[[], T], policy: RetryPolicy, sleep: Callable[[float], None], what: str, key_env: str | None
) -> T:
    """``call()``, retrying transient provider failures with the policy's backoff (a blocking sleep: their graders
    are synchronous); provider failures end as InfrastructureError, refusals as ProviderConfigError."""
    attempt = 0
    while True:
        try:
            return call()
        except Exception as exc:
            verdict = classify_http_error(exc)
            detail = scrub(f"{type(exc).__name__}: {exc}")
            if verdict.kind == "other":
                raise InfrastructureError(f"{what} failed: {detail}") from None
            if verdict.kind == "config":
                raise ProviderConfigError(
                    f"{what} was refused ({detail}); check {key_env or 'its API key'}, the model name and the base URL."
                ) from None
            if verdict.kind == "rejected":
                raise InfrastructureError(f"{what} was rejected by the provider: {detail}") from None
            attempt += 1
            if attempt >= policy.max_attempts:
                raise InfrastructureError(f"{what} failed after {attempt} attempts; last error: {detail}") from None
            sleep(policy.delay(attempt - 1, verdict.retry_after))


# ---------------------------------------------------------------------------------------------- providers
def openai_answer(client: Any) -> Answer:
    """Requests sent as they are to an ``openai.OpenAI`` client (its own retries off)."""

    def answer(params: dict[str, Any]) -> str:
        response = client.chat.completions.create(**params)
        if not response.choices:
            return ""
        return str(response.choices[0].message.content or "")

    return answer


def to_messages_api(messages: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """(system, turns) of chat-completions messages: system messages joined; text and ``image_url`` data URLs
    as Messages API blocks; consecutive turns of one role merged."""
    system: list[str] = []
    turns: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        content = message.get("content")
        if role == "system":
            system.append(content if isinstance(content, str) else " ".join(_texts(content)))
            continue
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else _blocks(content)
        blocks = [b for b in blocks if b.get("type") != "text" or b.get("text")]
        if not blocks:
            continue
        role = "assistant" if role == "assistant" else "user"
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    if not turns:
        turns = [{"role": "user", "content": [{"type": "text", "text": "(no message)"}]}]
    return "\n\n".join(s for s in system if s), turns


def _texts(content: Any) -> list[str]:
    return [str(p.get("text", "")) for p in content or [] if isinstance(p, dict) and p.get("type") == "text"]


def _blocks(content: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for part in content or []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            out.append({"type": "text", "text": str(part.get("text", ""))})
        elif part.get("type") == "image_url":
            url = str((part.get("image_url") or {}).get("url", ""))
            head, _, data = url.partition(",")
            if head.startswith("data:") and head.endswith(";base64"):
                media = head[len("data:") : -len(";base64")]
                out.append({"type": "image", "source": {"type": "base64", "media_type": media, "data": data}})
            else:
                out.append({"type": "image", "source": {"type": "url", "url": url}})
    return out


def anthropic_answer(client: Any) -> Answer:
    """Chat-completions requests as Messages API requests to an ``anthropic.Anthropic`` client (its own retries
    off); the answer is the response's text blocks joined. The graders' ``temperature`` goes along only where the
    client still takes one (recent clients and models take no sampling parameters)."""
    sampling = "temperature" in inspect.signature(client.messages.create).parameters

    def answer(params: dict[str, Any]) -> str:
        system, turns = to_messages_api(list(params.get("messages") or []))
        request: dict[str, Any] = {
            "model": params["model"],
            "max_tokens": int(params.get("max_tokens") or 4096),
            "messages": turns,
        }
        if system:
            request["system"] = system
        if sampling and params.get("temperature") is not None:
            request["temperature"] = params["temperature"]
        response = client.messages.create(**request)
        return "".join(str(b.text) for b in response.content if getattr(b, "type", None) == "text")

    return answer


# ---------------------------------------------------------------------------------------------- specs
def judge_from_spec(
    spec: str,
    *,
    client: Any | None = None,
    retry: RetryPolicy | None = None,
    sleep: Callable[[float], None] = time.sleep,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> Judge:
    """``openai:MODEL[@BASE_URL]`` or ``anthropic:MODEL``. ``client``: a (sync) SDK client to use instead of one
    built from the environment (tests; its own retries should be off); ``sleep``: the wait between retries. A
    missing key is one clear error (:class:`ProviderConfigError`)."""
    kind, _, rest = spec.partition(":")
    if kind not in ("openai", "anthropic") or not rest.strip():
        raise JudgeSpecError(f"judge {spec!r}: write openai:MODEL[@BASE_URL] or anthropic:MODEL")
    if kind == "anthropic":
        model = rest.strip()
        if client is None:
            if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
                raise ProviderConfigError(f"judge {spec} needs ANTHROPIC_API_KEY set in the environment")
            import anthropic

            client = anthropic.Anthropic(max_retries=0, timeout=timeout)
        return Judge(model, anthropic_answer(client), name=spec, retry=retry, sleep=sleep, key_env="ANTHROPIC_API_KEY")
    model, _, base_url = rest.partition("@")
    if not model.strip():
        raise JudgeSpecError(f"judge {spec!r}: write openai:MODEL[@BASE_URL]")
    name = f"openai:{model}" + (f"@{redact_url_credentials(base_url)}" if base_url else "")
    if client is None:
        key = os.environ.get("OPENAI_API_KEY") or (LOCAL_KEY if base_url else None)
        if key is None:
            raise ProviderConfigError(
                f"judge {name} needs OPENAI_API_KEY set in the environment, or a local server named as "
                "openai:MODEL@BASE_URL"
            )
        import openai

        client = openai.OpenAI(api_key=key, base_url=base_url or None, max_retries=0, timeout=timeout)
    return Judge(model.strip(), openai_answer(client), name=name, retry=retry, sleep=sleep, key_env="OPENAI_API_KEY")
