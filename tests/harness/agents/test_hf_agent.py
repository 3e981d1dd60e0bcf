"""The local transformers backend: its Qwen-style tool-call parser (pure), then the agent on the tiny offline model."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from coworkenv.harness.agents.hf_agent import HFAgent, parse_tool_calls, to_chat
from coworkenv.harness.messages import Message, ToolCall
from coworkenv.synth.providers import invalid_arguments
from tests.fakes.common import opening, ticket_tools


# ---------------------------------------------------------------------------------------------- the parser
def test_text_without_tool_calls_is_all_text() -> None:
    assert parse_tool_calls("  All done, ticket escalated.  ") == ("All done, ticket escalated.", [])


def test_tool_call_blocks_become_calls_and_the_rest_stays_text() -> None:
    text = (
        "Let me check both.\n"
        '<tool_call>\n{"name": "tickets__get_ticket", "arguments": {"ticket_id": "tkt_1"}}\n</tool_call>\n'
        '<tool_call>{"name": "crm__get_account", "arguments": "{\\"account_id\\": \\"acc_1\\"}"}</tool_call>'
    )
    rest, calls = parse_tool_calls(text, id_prefix="c")
    assert rest == "Let me check both."
    assert calls == [
        ToolCall(id="c_0", name="tickets__get_ticket", arguments={"ticket_id": "tkt_1"}),
        ToolCall(id="c_1", name="crm__get_account", arguments={"account_id": "acc_1"}),
    ]


def test_an_unclosed_last_block_still_counts_as_a_call() -> None:
    _, calls = parse_tool_calls('<tool_call>{"name": "tickets__search_tickets", "arguments": {}}')
    assert [c.name for c in calls] == ["tickets__search_tickets"]


def test_malformed_json_with_a_name_becomes_a_call_carrying_the_error() -> None:
    _, (call,) = parse_tool_calls('<tool_call>{"name": "tickets__get_ticket", "arguments": {"ticket_id": }</tool_call>')
    bad = invalid_arguments(call.arguments)
    assert call.name == "tickets__get_ticket"
    assert bad is not None and "not valid JSON" in bad["error"]


def test_a_block_without_a_tool_name_stays_in_the_text() -> None:
    rest, calls = parse_tool_calls("before <tool_call>gibberish</tool_call> after")
    assert calls == [] and "gibberish" in rest


def test_the_conversation_becomes_chat_template_dicts_with_object_arguments() -> None:
    chat = to_chat(
        [
            *opening(),
            Message(
                role="assistant",
                tool_calls=[ToolCall(id="c1", name="tickets__get_ticket", arguments={"ticket_id": "t"})],
            ),
            Message(role="tool", tool_call_id="c1", content="gone", is_error=True),
        ]
    )
    assert chat[2]["tool_calls"][0]["function"] == {"name": "tickets__get_ticket", "arguments": {"ticket_id": "t"}}
    assert chat[3] == {"role": "tool", "content": "Error: gone", "tool_call_id": "c1", "name": None}


# ---------------------------------------------------------------------------------------------- the agent
@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("transformers")
    pytest.importorskip("torch")
    tiny_module = pytest.importorskip("coworkenv.train.tiny")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return Path(tiny_module.build_tiny(tmp_path_factory.mktemp("tiny")))


class ScriptedModel:
    """Wraps the tiny model's ``generate`` to emit a scripted completion (random weights never call tools)."""

    def __init__(self, model: Any, tokenizer: Any, completion: str) -> None:
        self.model = model
        self.device = model.device
        self.completion_ids = tokenizer(completion, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        self.prompts: list[Any] = []

    def generate(self, input_ids: Any, **kwargs: Any) -> Any:
        import torch

        self.prompts.append(input_ids)
        tail = torch.tensor([self.completion_ids], dtype=input_ids.dtype)
        return torch.cat([input_ids, tail], dim=-1)


@pytest.mark.anyio
async def test_the_tiny_model_answers_a_turn_through_its_chat_template(tiny: Path) -> None:
    agent = HFAgent(str(tiny), max_new_tokens=8)
    with anyio.fail_after(60):
        turn = await agent.complete(opening(), ticket_tools())
    assert turn.usage.input_tokens > 0 and 0 < turn.usage.output_tokens <= 8
    prompt = agent.prompt(opening(), ticket_tools())
    assert "tickets__" in prompt and prompt.rstrip().endswith("<|im_start|>assistant")


@pytest.mark.anyio
async def test_a_tool_call_the_model_writes_comes_back_as_a_tool_call(tiny: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny)
    completion = (
        'Looking.\n<tool_call>\n{"name": "tickets__get_ticket", "arguments": {"ticket_id": "tkt_1"}}\n</tool_call>'
    )
    model = ScriptedModel(AutoModelForCausalLM.from_pretrained(tiny), tokenizer, completion)
    agent = HFAgent(str(tiny), model=model, tokenizer=tokenizer)
    history = [
        *opening(),
        Message(role="assistant", tool_calls=[ToolCall(id="c0", name="tickets__search_tickets", arguments={})]),
        Message(role="tool", tool_call_id="c0", content='{"items": []}'),
    ]
    with anyio.fail_after(60):
        turn = await agent.complete(history, ticket_tools())
    assert turn.text == "Looking."
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [("tickets__get_ticket", {"ticket_id": "tkt_1"})]
    assert turn.stop_reason == "tool_use"
    rendered = tokenizer.decode(model.prompts[0][0])
    assert "<tool_response>" in rendered and "tickets__search_tickets" in rendered


# ---------------------------------------------------------------------------------------------- options
def test_the_spec_takes_options_after_the_path() -> None:
    from coworkenv.harness.agents.registry import AgentSpecError, make_agent

    agent = make_agent("hf:/models/student?template=compact&max_new_tokens=96&temperature=0.5")
    assert isinstance(agent, HFAgent)
    assert (agent.path, agent.template, agent.max_new_tokens, agent.temperature) == (
        "/models/student",
        "compact",
        96,
        0.5,
    )
    assert make_agent("hf:/models/student").template == "full"  # type: ignore[union-attr]
    for bad in ("hf:/m?template=tiny", "hf:/m?colour=red", "hf:/m?max_new_tokens=lots"):
        with pytest.raises(AgentSpecError):
            make_agent(bad)


def test_the_compact_template_lists_each_tool_on_one_line_in_the_system_message() -> None:
    from coworkenv.harness.agents.hf_agent import prompt_messages, tool_schemas

    chat = [{"role": "system", "content": "You are a coworker."}, {"role": "user", "content": "hi"}]
    messages, tools = prompt_messages(chat, tool_schemas(ticket_tools()), "compact")
    assert tools is None and messages[1:] == chat[1:]
    system = messages[0]["content"]
    assert system.startswith("You are a coworker.\n\n# Tools\n")
    assert len(system.splitlines()) == 6 + len(ticket_tools())
    assert prompt_messages(chat, tool_schemas(ticket_tools()), "full") == (chat, tool_schemas(ticket_tools()))


def test_without_a_template_option_the_agent_uses_the_one_its_model_folder_was_trained_on(tmp_path: Path) -> None:
    from coworkenv.harness.agents.hf_agent import compact_tool_list, template_of, tool_schemas

    (tmp_path / "coworkenv_sft.json").write_text('{"template": "compact"}')
    assert HFAgent(str(tmp_path)).template == "compact"
    assert HFAgent(str(tmp_path), template="full").template == "full"
    assert HFAgent(str(tmp_path / "elsewhere")).template == "full"
    compact = [{"role": "system", "content": "Hi.\n\n" + compact_tool_list(tool_schemas(ticket_tools()))}]
    assert template_of(compact) == "compact" and template_of([{"role": "system", "content": "Hi."}]) == "full"


def test_a_run_with_a_model_folder_that_holds_no_model_stops_before_it_writes_anything(
    tiny: Path, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from coworkenv.harness.cli import COMMANDS

    run = next(c for c in COMMANDS if c.name == "run")
    empty = tmp_path / "not-a-model"
    empty.mkdir()
    for path in (tmp_path / "missing", empty):
        out = tmp_path / f"run-{path.name}"
        result = CliRunner().invoke(run, ["--tasks", "examples", "--agent", f"hf:{path}", "--out", str(out)])
        assert result.exit_code == 1 and "no model could be loaded" in result.output, result.output
        assert "Traceback" not in result.output and not out.exists()
    HFAgent(str(tiny)).check_ready()  # a saved model loads
