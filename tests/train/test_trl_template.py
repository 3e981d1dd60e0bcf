"""`train rl --engine trl --template compact`: the trl path prompts with the compact tool list, the same text the
``hf:`` agent is prompted with and the SFT export trains on, so GRPO continued from a checkpoint trained on
compact text sees its own format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl")

from coworkenv.harness.export.chat import ExportParams, export_records
from coworkenv.synth.contract.taskfile import load_task
from coworkenv.train.options import OptionsError, RLOptions
from coworkenv.train.trl_rl import build_trainer, resolve_template, run_trl_rl
from tests.train.test_format_parity import TASK, PromptRecorder, _episode, training_text
from tests.train.test_trl_rl import CALLS, Scripted, options

EXAMPLES = Path(__file__).parents[2] / "synth" / "examples"


def trl_first_prompt(trainer: Any) -> list[int]:
    """The token ids trl generates the first turn from: the row's prompt with ``reset``'s request appended, as
    ``GRPOTrainer`` builds it, through the trainer's own prompt tokenization."""
    row = trainer.train_dataset[0]
    trainer._batch_environments = [None]
    observation = trainer.environment_factories[None]().reset(**row)
    prompt = [*row["prompt"][:-1], {**row["prompt"][-1], "content": row["prompt"][-1]["content"] + observation}]
    ids = trainer._tokenize_prompts([prompt])[0][0]
    return [int(i) for i in ids]


@pytest.mark.parametrize("template", ["compact", "full"])
def test_the_trl_paths_first_prompt_is_the_hf_agents_prompt_under_the_compact_template(
    tiny_model: Path, tmp_path: Path, template: str
) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    agent = PromptRecorder(tokenizer, ["Done.<|im_end|>"], "compact")
    record = _episode(agent)
    hf_prompt = agent.seen[0][0]
    trainer = build_trainer(options(tiny_model, tmp_path, "grpo", template=template), [load_task(EXAMPLES / TASK)])
    ids = trl_first_prompt(trainer)
    text = tokenizer.decode(ids)
    if template == "full":  # the schemas through the chat template instead: another text
        assert text != hf_prompt and "<tools>" in text and "Call a tool with" not in text
        return
    assert text == hf_prompt
    assert ids == tokenizer(hf_prompt, add_special_tokens=False)["input_ids"]
    (row,), _ = export_records([record], ExportParams(template="compact", min_assistant_turns=1))
    assert training_text(tokenizer, row).startswith(text)


def test_with_named_tools_the_trl_paths_first_prompt_is_the_hf_agents_prompt_with_those_tools(
    tiny_model: Path, tmp_path: Path
) -> None:
    from transformers import AutoTokenizer

    names = ("tickets__search_tickets", "tickets__assign_ticket", "tickets__add_comment")
    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    agent = PromptRecorder(tokenizer, ["Done.<|im_end|>"], "compact", names)
    _episode(agent)
    opts = options(tiny_model, tmp_path, "grpo", template="compact", tool_names=",".join(names))
    text = tokenizer.decode(trl_first_prompt(build_trainer(opts, [load_task(EXAMPLES / TASK)])))
    assert text == agent.seen[0][0] and "tickets__get_ticket" not in text
    with pytest.raises(OptionsError, match="trl engine"):
        RLOptions(engine="native", tool_names="tickets__get_ticket")


def test_one_trl_step_under_the_compact_template_plays_the_tools_and_records_the_template(
    tiny_model: Path, tmp_path: Path
) -> None:
    history = run_trl_rl(options(tiny_model, tmp_path, "grpo", template="compact"), trainer_cls=Scripted)
    assert history[0]["reward"] == pytest.approx(0.5)
    assert history[0]["tools/call_frequency"] == pytest.approx(len(CALLS) / 2)
    assert json.loads((tmp_path / "coworkenv_rl.json").read_text())["template"] == "compact"


def test_without_template_rl_takes_the_one_the_sft_checkpoint_was_trained_on(tmp_path: Path) -> None:
    (tmp_path / "coworkenv_sft.json").write_text(json.dumps({"template": "compact"}))
    assert resolve_template(RLOptions(model=str(tmp_path))) == "compact"
    assert resolve_template(RLOptions(model="some/model", adapter=str(tmp_path))) == "compact"
    assert resolve_template(RLOptions(model=str(tmp_path), template="full")) == "full"
    assert resolve_template(RLOptions(model=str(tmp_path / "elsewhere"))) == "full"


def test_an_unknown_template_is_one_clear_error() -> None:
    from click.testing import CliRunner

    from coworkenv.train.commands import train_group

    with pytest.raises(OptionsError, match="unknown template 'tiny'; use one of full, compact"):
        RLOptions(template="tiny")
    result = CliRunner().invoke(train_group, ["rl", "--tasks", "x", "--out", "y", "--template", "tiny"])
    assert result.exit_code == 2 and "'tiny' is not one of 'full', 'compact'" in result.output
