"""The student as a harness agent that keeps the tokens of everything it generated, for RL.

:class:`PolicyAgent` is a harness ``ModelAgent``: each model call renders the conversation with the
model's own chat template (tools included), produces a completion, and records it. The record of an
episode is a few :class:`Segment` s — token ids with a mask that is 1 on the tokens the policy produced
and 0 on the prompt, tool results and user turns in between (trl's ``env_mask``), plus the turn each
policy token belongs to. When the next turn's prompt starts with everything recorded so far (the usual case:
chat templates are prefix-preserving), it extends the segment, so one forward pass scores the whole episode;
when it does not (a truncated or re-rendered turn), a new segment starts with the exact prompt the model saw.

The completion comes from sampling the model, or, for tests and warm starts, from an ``inner`` agent whose
turns are rendered through the chat template (a scripted policy that still trains the model's weights).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio

from coworkenv.harness.agents.base import ModelAgent
from coworkenv.harness.agents.hf_agent import parse_tool_calls, to_chat, tool_schemas
from coworkenv.harness.messages import AgentTurn, Message, ToolView, Usage


@dataclass
class Segment:
    ids: list[int] = field(default_factory=list)
    mask: list[int] = field(default_factory=list)  # 1: a token the policy generated (trained); 0: context
    turn: list[int] = field(default_factory=list)  # the model call a policy token belongs to; -1 for context

    def extend(self, ids: list[int], generated: bool, turn: int) -> None:
        self.ids.extend(ids)
        self.mask.extend([1 if generated else 0] * len(ids))
        self.turn.extend([turn if generated else -1] * len(ids))


def chat_ids(tokenizer: Any, chat: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> list[int]:
    """Token ids of the conversation rendered for generation (with the assistant header)."""
    ids = tokenizer.apply_chat_template(chat, tools=tools, add_generation_prompt=True, tokenize=True, return_dict=False)
    return [int(i) for i in ids]


def render_completion(
    tokenizer: Any, chat: list[dict[str, Any]], tools: list[dict[str, Any]] | None, turn: AgentTurn
) -> str:
    """The text the chat template puts after the generation prompt for ``turn``, up to its end-of-turn token."""
    message: dict[str, Any] = {"role": "assistant", "content": turn.text}
    if turn.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in turn.tool_calls
        ]
    prompt = tokenizer.apply_chat_template(chat, tools=tools, add_generation_prompt=True, tokenize=False)
    full = tokenizer.apply_chat_template([*chat, message], tools=tools, tokenize=False)
    if not full.startswith(prompt):
        raise ValueError("the chat template does not render an assistant turn after its generation prompt")
    completion = str(full[len(prompt) :])
    eos = tokenizer.eos_token or ""
    if eos and eos in completion:
        completion = completion[: completion.index(eos) + len(eos)]
    return completion


class PolicyAgent:
    """A model agent over a loaded (trainable) model; one instance per episode (it records that episode)."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        max_new_tokens: int = 256,
        temperature: float = 1.0,
        inner: ModelAgent | None = None,
        lock: anyio.Lock | None = None,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.inner = inner
        self.name = f"policy:{inner.name}" if inner is not None else "policy"
        self.segments: list[Segment] = []
        self.turns = 0
        self._lock = lock or anyio.Lock()

    def _record(self, prompt_ids: list[int], completion_ids: list[int]) -> None:
        current = self.segments[-1] if self.segments else None
        if current is not None and prompt_ids[: len(current.ids)] == current.ids:
            current.extend(prompt_ids[len(current.ids) :], generated=False, turn=-1)
        else:
            current = Segment()
            current.extend(prompt_ids, generated=False, turn=-1)
            self.segments.append(current)
        current.extend(completion_ids, generated=True, turn=self.turns)
        self.turns += 1

    def _sample(self, prompt_ids: list[int]) -> list[int]:
        import torch

        device = next(self.model.parameters()).device
        inputs = torch.tensor([prompt_ids], device=device)
        eos = self.tokenizer.eos_token_id
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else eos
        sampling: dict[str, Any] = {"do_sample": True, "temperature": self.temperature, "top_p": 1.0, "top_k": 0}
        if self.temperature <= 0:
            sampling = {"do_sample": False}
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.no_grad():
                output = self.model.generate(
                    input_ids=inputs,
                    attention_mask=torch.ones_like(inputs),
                    max_new_tokens=self.max_new_tokens,
                    eos_token_id=eos,
                    pad_token_id=pad,
                    **sampling,
                )
        finally:
            self.model.train(was_training)
        new = [int(i) for i in output[0][len(prompt_ids) :]]
        return new[: new.index(eos) + 1] if eos in new else new

    def _text(self, completion_ids: list[int]) -> str:
        text = str(self.tokenizer.decode(completion_ids, skip_special_tokens=False))
        for special in getattr(self.tokenizer, "all_special_tokens", []):
            if "tool_call" not in special:
                text = text.replace(special, "")
        return text

    async def complete(self, messages: list[Message], tools: list[ToolView]) -> AgentTurn:
        chat, schemas = to_chat(messages), tool_schemas(tools) or None
        prompt_ids = chat_ids(self.tokenizer, chat, schemas)
        if self.inner is not None:
            turn = await self.inner.complete(messages, tools)
            completion = render_completion(self.tokenizer, chat, schemas, turn)
            completion_ids = [int(i) for i in self.tokenizer(completion, add_special_tokens=False)["input_ids"]]
        else:
            async with self._lock:  # one generation at a time on the one model
                completion_ids = await anyio.to_thread.run_sync(self._sample, prompt_ids)
        self._record(prompt_ids, completion_ids)
        if self.inner is not None:
            turn.usage = Usage(input_tokens=len(prompt_ids), output_tokens=len(completion_ids))
            return turn
        text, calls = parse_tool_calls(self._text(completion_ids), id_prefix=f"call_{self.turns - 1}")
        return AgentTurn(
            text=text,
            tool_calls=calls,
            usage=Usage(input_tokens=len(prompt_ids), output_tokens=len(completion_ids)),
            stop_reason="tool_use" if calls else "end_turn",
        )
