"""The tiny offline model: builds, saves, reloads, and its chat template is one trl trains and parses."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("trl")

from coworkenv.train.tiny import TOOL_TOKENS, build_tiny
from tests.train.fixtures import TOOLS, example


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_the_tiny_model_reloads_with_the_same_tokenization_and_a_qwen2_architecture(tiny_model: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from coworkenv.train.tiny import build_tokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    model = AutoModelForCausalLM.from_pretrained(tiny_model)
    assert model.config.model_type == "qwen2"
    assert (model.config.hidden_size, model.config.num_hidden_layers) == (64, 2)
    assert (model.config.num_attention_heads, model.config.num_key_value_heads) == (4, 2)
    assert sum(p.numel() for p in model.parameters()) < 200_000
    text = 'Hello  world\n\n<tool_call>\n{"name": "x", "arguments": {"a": 1}}\n</tool_call><|im_end|> é 2026'
    assert tokenizer(text)["input_ids"] == build_tokenizer()(text)["input_ids"]
    assert tokenizer.decode(tokenizer(text)["input_ids"]) == text
    assert tokenizer.eos_token == "<|im_end|>" and tokenizer.pad_token == "<|endoftext|>"
    for token in TOOL_TOKENS:  # each tool marker is one token
        assert len(tokenizer(token)["input_ids"]) == 1


def test_building_twice_with_one_seed_gives_identical_files(tiny_model: Path, tmp_path: Path) -> None:
    assert _digests(build_tiny(tmp_path / "again", seed=0)) == _digests(tiny_model)


def test_the_tiny_template_is_trls_qwen2_5_template_and_renders_tool_calls(tiny_model: Path) -> None:
    from transformers import AutoTokenizer
    from trl.chat_template_utils import get_training_chat_template, qwen2_5_chat_template, supports_tool_calling

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    assert tokenizer.chat_template == qwen2_5_chat_template
    assert supports_tool_calling(tokenizer)
    assert get_training_chat_template(tokenizer) is not None  # trl knows its training variant
    record = example(0)
    rendered = tokenizer.apply_chat_template(record["messages"], tools=TOOLS, tokenize=False)
    assert (
        '<tool_call>\n{"name": "tickets__get_ticket", "arguments": {"ticket_id": "tkt_0000"}}\n</tool_call>' in rendered
    )
    assert "<tool_response>\n" + record["messages"][3]["content"] + "\n</tool_response>" in rendered
    assert json.dumps(TOOLS[0]) in rendered  # the tool schemas go into the system turn


def test_trl_parses_a_tool_call_out_of_the_tiny_models_output(tiny_model: Path) -> None:
    from transformers import AutoTokenizer
    from trl.chat_template_utils import add_response_schema, parse_response

    tokenizer = add_response_schema(AutoTokenizer.from_pretrained(tiny_model))
    prefix = tokenizer.apply_chat_template(
        [{"role": "user", "content": "hi"}], add_generation_prompt=True, tokenize=True, return_dict=False
    )
    completion = (
        '<tool_call>\n{"name": "tickets__get_ticket", "arguments": {"ticket_id": "tkt_9"}}\n</tool_call><|im_end|>'
    )
    parsed = parse_response(tokenizer, tokenizer(completion)["input_ids"], prefix=list(prefix))
    assert parsed["tool_calls"] == [
        {"type": "function", "function": {"name": "tickets__get_ticket", "arguments": {"ticket_id": "tkt_9"}}}
    ]


def test_the_train_commands_import_without_the_training_stack() -> None:
    code = "import sys, coworkenv.train.commands; print(sorted(m for m in ('torch','transformers','trl','peft') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_an_identifier_is_the_same_tokens_in_a_tool_result_and_in_a_call(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from coworkenv.harness.agents.hf_agent import load_tokenizer
    from coworkenv.train.commands import train_group

    result = CliRunner().invoke(train_group, ["tiny", "--out", str(tmp_path / "m")])
    assert result.exit_code == 0, result.output
    tokenizer = load_tokenizer(tmp_path / "m")  # as the hf: agent and train sft load it (its pre-tokenizer kept)

    def id_pieces(text: str, value: str) -> list[str]:  # the tokens that spell value inside text
        start = text.index(value)
        encoded = tokenizer(text, return_offsets_mapping=True)
        spans = zip(encoded["input_ids"], encoded["offset_mapping"], strict=True)
        return [tokenizer.decode([i]) for i, (a, b) in spans if a < start + len(value) and b > start]

    row, call = '{"id": "usr_aisha_quinn", "name": "Aisha Quinn"}', '{"assignee_id": "usr_aisha_quinn"}'
    assert id_pieces(row, "usr_aisha_quinn") == id_pieces(call, "usr_aisha_quinn")
    assert id_pieces('"ticket_id": "tkt_1803"', "tkt_1803")[-4:] == list("1803")  # a digit a token
    text = 'is Aisha Quinn; {"ticket_id": "tkt_1803", "assignee_id": "usr_aisha_quinn"}'
    assert tokenizer.decode(tokenizer(text)["input_ids"]) == text


def test_with_two_digits_a_token_an_id_is_digit_pairs_in_a_result_and_in_a_call(tmp_path: Path) -> None:
    from coworkenv.harness.agents.hf_agent import load_tokenizer
    from coworkenv.train.tiny import build_tokenizer

    texts = [f'{{"id": "tkt_{n:04d}", "created_at": "2026-04-12T23:{n % 60:02d}:00Z"}}' for n in range(0, 10000, 7)]
    build_tokenizer(texts=texts, digits=2).save_pretrained(tmp_path)
    tokenizer = load_tokenizer(tmp_path)  # the pre-tokenizer survives a save and reload
    for text in ('{"id": "tkt_1803"}', '{"ticket_id": "tkt_1803", "public": true}'):
        pieces = tokenizer.tokenize(text)
        assert pieces[pieces.index("tkt") : pieces.index("tkt") + 4] == ["tkt", "_", "18", "03"]
    assert tokenizer.tokenize("12345")[:2] == ["12", "34"]
    with pytest.raises(ValueError, match="digits must be 1 or more"):
        build_tokenizer(digits=0)
