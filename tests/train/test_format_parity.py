"""One format on both sides: at every turn of an episode, the ``hf:`` agent's prompt plus the reply it gave is an
exact prefix of the training text trl builds from that episode's exported demonstration (full and compact),
tool errors included."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("trl")

from coworkenv.harness.agents.hf_agent import HFAgent
from coworkenv.harness.episode import run_episode
from coworkenv.harness.export.chat import ExportParams, closing_reply, export_records
from coworkenv.harness.messages import Message
from coworkenv.harness.trajectory import Trajectory
from coworkenv.synth.contract.taskfile import load_task

EXAMPLES = Path(__file__).parents[2] / "synth" / "examples"
TASK = "tickets-triage-new-urgent.json"


def qwen_reply(message: Message) -> str:
    """What a Qwen-style model writes for an assistant turn (its text, then one block per tool call)."""
    blocks = [
        "<tool_call>\n" + json.dumps({"name": c.name, "arguments": c.arguments}, ensure_ascii=False) + "\n</tool_call>"
        for c in message.tool_calls
    ]
    return "\n".join([message.content, *blocks] if message.content else blocks)


MISSING_TICKET = '<tool_call>\n{"name": "tickets__get_ticket", "arguments": {"ticket_id": "tkt_none"}}\n</tool_call>'


class PromptRecorder(HFAgent):
    """The real ``hf:`` agent (prompt, parsing) whose generation replays reference replies and records prompts."""

    def __init__(self, tokenizer: Any, replies: list[str], template: str, names: tuple[str, ...] | None = None) -> None:
        super().__init__("parity", model=object(), tokenizer=tokenizer, template=template, tools=names)
        self.replies = list(replies)
        self.seen: list[tuple[str, str]] = []

    def _generate(self, prompt: str) -> tuple[str, int, int]:
        reply = self.replies.pop(0)
        self.seen.append((prompt, reply))
        return reply, 1, 1


def _episode(agent: Any) -> Trajectory:
    async def go() -> Trajectory:
        with anyio.fail_after(30):
            return await run_episode(load_task(EXAMPLES / TASK), agent)

    return anyio.run(go)


@pytest.fixture(scope="module")
def reference_replies() -> list[str]:
    from coworkenv.harness.agents.builtin import ReplayAgent

    record = _episode(ReplayAgent())
    replies = [qwen_reply(m) for m in record.messages if m.role == "assistant"]
    if record.messages[-1].role == "tool":  # the reference has no closing reply: the task's is what we teach
        replies.append(closing_reply(load_task(EXAMPLES / TASK)))
    assert len(replies) >= 3 and record.passed
    return replies


def training_text(tokenizer: Any, row: dict[str, Any]) -> str:
    """The text trl trains on: the record through trl's training variant of the chat template."""
    from trl.chat_template_utils import get_training_chat_template

    template = get_training_chat_template(tokenizer) or tokenizer.chat_template
    tools = json.loads(row["tools"]) if row.get("tools") else None
    return str(tokenizer.apply_chat_template(row["messages"], tools=tools, tokenize=False, chat_template=template))


# The tools the episode calls (the recovery's get_ticket included): ``export --tool-names`` and ``hf:…?tools=``.
USED = ("tickets__get_ticket", "tickets__search_tickets", "tickets__update_ticket", "tickets__add_comment")


@pytest.mark.parametrize(
    ("template", "names"),
    [("full", None), ("compact", None), ("compact", USED)],
)
def test_every_prompt_plus_its_reference_reply_is_a_prefix_of_the_training_text(
    tiny_model: Path,
    reference_replies: list[str],
    template: str,
    names: tuple[str, ...] | None,
) -> None:
    from coworkenv.harness.agents.hf_agent import load_tokenizer

    tokenizer = load_tokenizer(tiny_model)
    agent = PromptRecorder(tokenizer, [MISSING_TICKET, *reference_replies], template, names)  # a recovery first
    record = _episode(agent)
    assert record.steps[0].outcome != "ok"  # the first call failed: its error result is part of both texts
    assert record.passed and not agent.replies and record.status == "completed"  # played through, passed
    (row,), dropped = export_records([record], ExportParams(template=template, tool_names=names))
    assert sum(dropped.values()) == 0
    assert ("tools" in row) == (template == "full")
    listed = {
        line[2:].split("(")[0] for line in row["messages"][0]["content"].splitlines() if line.startswith("- tickets__")
    }
    if template == "compact":
        assert listed == set(names or listed) and ("tickets__escalate_ticket" in listed) == (names is None)
    assert row["messages"][3]["content"].startswith("Error")
    text = training_text(tokenizer, row)
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    for turn, (prompt, reply) in enumerate(agent.seen):
        assert text.startswith(prompt + reply + "<|im_end|>"), f"turn {turn} diverges"
        prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        assert ids[: len(prompt_ids)] == prompt_ids, f"turn {turn}: the prompt tokenizes differently in training"


def test_the_compact_template_is_several_times_shorter_than_the_schemas(reference_replies: list[str]) -> None:
    from coworkenv.harness.agents.builtin import ReplayAgent

    record = _episode(ReplayAgent())
    tasks = {record.task_id: load_task(EXAMPLES / TASK)}
    full = export_records([record], ExportParams(template="full"), tasks)[0][0]
    compact = export_records([record], ExportParams(template="compact"), tasks)[0][0]
    system = compact["messages"][0]["content"]
    assert "- tickets__assign_ticket(" in system and "ticket_id: string" in system
    assert len(json.dumps(full)) > 2 * len(json.dumps(compact))
