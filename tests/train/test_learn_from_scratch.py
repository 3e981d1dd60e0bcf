"""Learning from scratch: `train tiny` sizes the model and trains its tokenizer on the demonstrations it will
learn from; `train sft --full` trains every weight (no LoRA) and writes a model the hf: agent loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("trl")

from coworkenv.train.commands import train_group
from coworkenv.train.tiny import heads, parameter_count
from tests.train.fixtures import write_jsonl


def test_tiny_takes_layers_and_hidden_size_and_derives_the_heads(tmp_path: Path) -> None:
    out = tmp_path / "m"
    result = CliRunner().invoke(train_group, ["tiny", "--out", str(out), "--layers", "3", "--hidden", "128"])
    assert result.exit_code == 0, result.output
    config = json.loads((out / "config.json").read_text())
    assert (config["num_hidden_layers"], config["hidden_size"], config["intermediate_size"]) == (3, 128, 256)
    assert (config["num_attention_heads"], config["num_key_value_heads"]) == (4, 2)
    assert f"{parameter_count(out):,} parameters" in result.output
    assert heads(64) == (4, 2) and heads(512) == (8, 4)
    with pytest.raises(ValueError, match="multiple of"):
        heads(90)


def test_a_tokenizer_trained_on_the_demonstrations_reads_them_in_fewer_tokens(tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    from coworkenv.train.tiny import TOOL_TOKENS, render_demonstrations

    data = write_jsonl(tmp_path / "demos.jsonl", n=6)
    plain, own = tmp_path / "plain", tmp_path / "own"
    runner = CliRunner()
    assert runner.invoke(train_group, ["tiny", "--out", str(plain)]).exit_code == 0
    args = ["tiny", "--out", str(own), "--tokenizer-from", str(data), "--vocab-size", "1024"]
    assert runner.invoke(train_group, args).exit_code == 0
    text = render_demonstrations(data)[0]
    before, after = AutoTokenizer.from_pretrained(plain), AutoTokenizer.from_pretrained(own)
    assert len(after(text)["input_ids"]) < 0.8 * len(before(text)["input_ids"])
    assert after.decode(after(text)["input_ids"]) == text
    for marker in [*TOOL_TOKENS, "<|im_start|>", "<|im_end|>"]:  # the template's markers stay whole tokens
        assert len(after(marker)["input_ids"]) == 1
    assert after.chat_template == before.chat_template


def test_full_fine_tuning_trains_every_weight_and_writes_a_loadable_model(tiny_model: Path, tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM

    data = write_jsonl(tmp_path / "demos.jsonl", n=4)
    out = tmp_path / "full"
    args = ["sft", "--data", str(data), "--model", str(tiny_model), "--out", str(out), "--full"]
    fast = ["--max-steps", "6", "--lr", "3e-3", "--batch-size", "2", "--grad-accum", "1", "--max-length", "1024"]
    result = CliRunner().invoke(train_group, [*args, *fast])
    assert result.exit_code == 0, result.output
    assert "model in" in result.output and not (out / "adapter_config.json").exists()
    summary = json.loads((out / "coworkenv_sft.json").read_text())
    assert summary["template"] == "full"  # the tools came as schemas: hf:OUT prompts with them too
    assert summary["options"]["full"] is True and sum(summary["losses"][-2:]) < sum(summary["losses"][:2])
    base, trained = AutoModelForCausalLM.from_pretrained(tiny_model), AutoModelForCausalLM.from_pretrained(out)
    changed = [
        name
        for (name, p), (_, q) in zip(base.named_parameters(), trained.named_parameters(), strict=True)
        if not p.detach().equal(q.detach())
    ]
    assert len(changed) == len(list(base.named_parameters()))  # every tensor moved: no adapter, no frozen base
    assert (out / "tokenizer.json").is_file()
