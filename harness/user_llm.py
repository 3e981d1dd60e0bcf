"""An LLM-driven user simulator (Anthropic): the task's persona, talking to the agent in its own words.

It plays the person who made the request. It answers the agent's questions, gives a held-back fact only
when the agent asks for that information, and ends the conversation by saying :data:`END_TOKEN` once the
work is done (or cannot go further). The task's scripted turns keep their exact words and workspace edits
(checks follow them): a turn is delivered verbatim when its trigger fires (after a tool call, or when the
agent finishes a turn), exactly as the scripted user does; between them, the model speaks.

Use it in an episode with ``run_episode(task, agent, user=llm_user_factory("claude-haiku-4-5"))``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from coworkenv.harness.agents.anthropic_agent import AnthropicAgent
from coworkenv.harness.agents.backend import split_spec
from coworkenv.harness.messages import Message
from coworkenv.harness.tools import spec_limit
from coworkenv.harness.user_sim import UserContext
from coworkenv.synth.contract.task import Task
from coworkenv.synth.contract.turns import TOOL_SEPARATOR, TurnSchedule
from coworkenv.synth.providers import RetryPolicy

if TYPE_CHECKING:
    import anthropic

END_TOKEN = "###DONE###"
DEFAULT_USER_MODEL = "claude-haiku-4-5"


def user_system_prompt(task: Task, end_token: str = END_TOKEN) -> str:
    """The simulator's instructions: who it is, what it asked, what it knows and keeps back, how to end."""
    spec = task.user
    persona = (spec.persona if spec and spec.persona else "") or "a busy colleague who asked an AI coworker for help"
    lines = [
        f"You are role-playing a user: {persona}. You are talking to an AI assistant that works with your "
        "company's workplace tools. Stay in character; write short, natural messages, as this person would.",
        "",
        "You asked the assistant:",
        f'"""{task.request}"""',
    ]
    held = list(spec.held_back) if spec else []
    if held:
        lines += [
            "",
            "You know these facts but did not mention them. Give one ONLY when the assistant asks for that "
            "specific information; never volunteer it, and give only what was asked:",
            *[f"- {fact}" for fact in held],
        ]
    lines += [
        "",
        "Rules:",
        "- Answer the assistant's questions from what you know; if you do not know, say so. Never invent "
        "ids, amounts or addresses.",
        "- Do not do the work yourself and do not tell the assistant how to use its tools.",
        "- If the assistant asks you to confirm something you asked for, confirm it; if it proposes something "
        "you did not ask for or that looks risky, say no.",
        f"- When the assistant has done what you asked (or says it cannot), reply with exactly {end_token} "
        "and nothing else.",
    ]
    return "\n".join(lines)


@dataclass
class LLMUser:
    """A :class:`~coworkenv.harness.user_sim.UserSimulator` backed by an Anthropic model."""

    task: Task
    model: str = DEFAULT_USER_MODEL
    client: anthropic.AsyncAnthropic | None = None
    retry: RetryPolicy | None = None
    end_token: str = END_TOKEN
    max_replies: int = 10
    """The most replies the model writes (an imported task's ``user_agent.max_rounds`` replaces it)."""
    history: list[Message] = field(default_factory=list)
    replies: int = 0
    schedule: TurnSchedule = field(init=False)
    llm: AnthropicAgent = field(init=False)

    def __post_init__(self) -> None:
        rounds = spec_limit(self.task, "user_agent", "max_rounds")  # an imported task's own limit
        if rounds is not None:
            self.max_replies = rounds
        turns = self.task.user.turns if self.task.user else []
        self.schedule = TurnSchedule.of([t.when for t in turns])
        self.llm = AnthropicAgent(self.model, client=self.client, retry=self.retry, max_tokens=1024)
        self.history = [Message(role="system", content=user_system_prompt(self.task, self.end_token))]

    # ------------------------------------------------------------------ scripted turns (exact words + edits)
    async def _deliver(self, k: int, ctx: UserContext) -> str:
        assert self.task.user is not None
        turn = self.task.user.turns[k]
        for step in turn.edits:
            await ctx.edit(step)
        return turn.message

    # ------------------------------------------------------------------ the UserSimulator protocol
    async def reply(self, agent_text: str, ctx: UserContext) -> str | None:
        self.history.append(Message(role="user", content=agent_text or "(the assistant said nothing)"))
        due = self.schedule.at_finished_turn(nothing_else=False)  # between turns, the model speaks
        if due is not None:
            text: str | None = await self._deliver(due, ctx)
        elif self.replies >= self.max_replies:
            text = None
        else:
            turn = await self.llm.complete(self.history, [])
            text = turn.text.strip()
            if not text or self.end_token in text:
                text = None
        if text is None:
            return None
        self.replies += 1
        self.history.append(Message(role="assistant", content=text))
        return text

    async def after_tool_call(
        self, name: str, arguments: dict[str, Any], is_error: bool, ctx: UserContext
    ) -> str | None:
        service, _, tool = name.partition(TOOL_SEPARATOR)
        due = self.schedule.after_tool_call(service, tool, ok=not is_error)
        if due is None:
            return None
        text = await self._deliver(due, ctx)
        self.history.append(Message(role="user", content=f"(the assistant is working: it called {name})"))
        self.history.append(Message(role="assistant", content=text))
        return text


def llm_user_factory(model: str = DEFAULT_USER_MODEL, **options: Any) -> Callable[[Task], LLMUser]:
    """A ``user=`` factory for :func:`coworkenv.harness.episode.run_episode` (one simulator per episode)."""

    def make(task: Task) -> LLMUser:
        return LLMUser(task, model=model, **options)

    return make


def from_spec(spec: str) -> Callable[[Task], LLMUser]:
    """The factory a ``--user`` spec names: ``anthropic:MODEL``, ``llm:MODEL``, ``llm`` (the default model)."""
    kind, sep, model = split_spec(spec)
    if kind in ("anthropic", "llm") and (model or not sep):
        return llm_user_factory(model or DEFAULT_USER_MODEL)
    raise ValueError(f"unknown user simulator {spec!r}; use scripted, llm, llm:MODEL or anthropic:MODEL")
