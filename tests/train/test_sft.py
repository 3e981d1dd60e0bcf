"""LoRA SFT: the loss covers assistant text and tool calls only; a short run trains an adapter; bad inputs
fail early with what to do."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

pytest.importorskip("trl")

from coworkenv.train.commands import train_group
from coworkenv.train.data import DataError, load_chat_dataset, read_chat_jsonl
from coworkenv.train.options import OptionsError, SFTOptions, merge_options, read_config_file
from tests.train.fixtures import assistant_spans, example, write_jsonl

FAST = ["--lora-rank", "8", "--lora-alpha", "16", "--lora-dropout", "0", "--batch-size", "2", "--grad-accum", "1"]


def _options(data: Path, model: Path, out: Path, **extra: Any) -> SFTOptions:
    return SFTOptions(data=str(data), model=str(model), out=str(out), **{"max_length": 1024, "lora_rank": 8, **extra})


def _trained_spans(input_ids: list[int], labels: list[int]) -> list[list[int]]:
    spans: list[list[int]] = []
    current: list[int] = []
    for token, label in zip(input_ids, labels, strict=True):
        if label != -100:
            assert label == token
            current.append(token)
        elif current:
            spans.append(current)
            current = []
    return [*spans, current] if current else spans


def test_trained_positions_of_an_exported_multi_turn_example_are_exactly_the_assistant_texts_and_tool_calls(
    tiny_model: Path, tmp_path: Path
) -> None:
    from coworkenv.train.sft import build_trainer

    data = write_jsonl(tmp_path / "demos.jsonl", n=2)
    trainer = build_trainer(_options(data, tiny_model, tmp_path / "out"))
    row = trainer.train_dataset[1]  # the trainer's own prepared row: what the loss will see
    spans = [trainer.processing_class.decode(s) for s in _trained_spans(row["input_ids"], row["labels"])]
    record = example(1)
    assert spans == assistant_spans(record)
    trained = "".join(spans)
    for message in record["messages"]:
        if message["role"] != "assistant":
            assert message["content"] not in trained
    for marker in ("SYSTEM-PROMPT", "USER-ASK", "USER-THANKS", "TOOL-RESULT", "<tool_response>", "<|im_start|>"):
        assert marker not in trained
    assert trained.count("<tool_call>") == 2 and trained.count("<|im_end|>") == 4


def test_trained_positions_of_a_harness_exported_episode_are_only_its_tool_calls(
    tiny_model: Path, tmp_path: Path
) -> None:
    import anyio

    from coworkenv.harness.agents.builtin import ReplayAgent
    from coworkenv.harness.episode import run_episode
    from coworkenv.harness.export.chat import ExportParams, export_records
    from coworkenv.synth.contract.taskfile import load_task
    from coworkenv.train.sft import build_trainer

    task = load_task(Path(__file__).parents[2] / "synth" / "examples" / "tickets-triage-new-urgent.json")
    from coworkenv.harness.messages import Message

    trajectory = anyio.run(run_episode, task, ReplayAgent())
    # the reference ends on a tool result, which export drops (ends_on_tool): give it a closing reply
    trajectory.messages.append(Message(role="assistant", content="Both tickets are assigned to Kim."))
    records, _ = export_records([trajectory], ExportParams())
    data = tmp_path / "export.jsonl"
    data.write_text(json.dumps(records[0]) + "\n")
    trainer = build_trainer(_options(data, tiny_model, tmp_path / "out", max_length=16384))
    row = trainer.train_dataset[0]
    spans = [trainer.processing_class.decode(s) for s in _trained_spans(row["input_ids"], row["labels"])]
    assert spans == assistant_spans(records[0]) and len(spans) == len(task.reference_solution) + 1
    trained = "".join(spans)
    for message in records[0]["messages"]:
        if message["role"] != "assistant":
            assert message["content"] not in trained
    assert "<tool_response>" not in trained and "<|im_start|>" not in trained


def test_a_short_sft_run_writes_a_lora_adapter_and_lowers_the_training_loss(tiny_model: Path, tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "demos.jsonl", n=4)
    out = tmp_path / "adapter"
    args = ["sft", "--data", str(data), "--model", str(tiny_model), "--out", str(out), *FAST]
    result = CliRunner().invoke(train_group, [*args, "--max-steps", "8", "--lr", "5e-3", "--max-length", "1024"])
    assert result.exit_code == 0, result.output
    assert (out / "adapter_config.json").is_file() and (out / "adapter_model.safetensors").is_file()
    summary = json.loads((out / "coworkenv_sft.json").read_text())
    losses = summary["losses"]
    assert summary["steps"] == 8 and len(losses) == 8
    assert sum(losses[-2:]) < sum(losses[:2])
    adapter = json.loads((out / "adapter_config.json").read_text())
    assert adapter["r"] == 8 and adapter["lora_alpha"] == 16


def test_callbacks_given_to_run_sft_are_called_at_every_step_with_the_model(tiny_model: Path, tmp_path: Path) -> None:
    from transformers import TrainerCallback

    from coworkenv.train.sft import run_sft

    seen: list[tuple[int, bool]] = []

    class Record(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
            seen.append((state.global_step, model is not None))

    data = write_jsonl(tmp_path / "demos.jsonl", n=2)
    options = _options(data, tiny_model, tmp_path / "adapter", max_steps=3, batch_size=1, grad_accum=1)
    result = run_sft(options, callbacks=[Record()])
    assert result.steps == 3 and seen == [(1, True), (2, True), (3, True)]


def _invoke_sft(*args: str) -> Any:
    return CliRunner().invoke(train_group, ["sft", *args])


def test_a_missing_data_file_is_a_clear_error(tiny_model: Path, tmp_path: Path) -> None:
    result = _invoke_sft("--data", str(tmp_path / "nope.jsonl"), "--model", str(tiny_model), "--out", str(tmp_path))
    assert result.exit_code != 0 and "does not exist" in result.output and "export" in result.output


def test_an_empty_dataset_is_a_clear_error(tiny_model: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    result = _invoke_sft("--data", str(empty), "--model", str(tiny_model), "--out", str(tmp_path / "o"))
    assert result.exit_code != 0 and "holds no examples" in result.output


def test_a_held_out_set_with_nothing_that_fits_is_a_clear_error(tiny_model: Path, tmp_path: Path) -> None:
    short = {"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."}]}
    long = {"messages": [{"role": "user", "content": "word " * 3000}, {"role": "assistant", "content": "Done."}]}
    train, held = tmp_path / "train.jsonl", tmp_path / "held.jsonl"
    train.write_text(json.dumps(short) + "\n")
    held.write_text(json.dumps(long) + "\n")
    args = ["--data", str(train), "--eval-data", str(held), "--model", str(tiny_model), "--out", str(tmp_path / "o")]
    result = _invoke_sft(*args, "--max-length", "256", "--max-steps", "1")
    assert result.exit_code != 0 and "no held-out example" in result.output, result.output
    assert "Traceback" not in result.output


def _model_with_template(tiny_model: Path, tmp_path: Path, template: str | None) -> Path:
    copy = tmp_path / "model"
    shutil.copytree(tiny_model, copy)
    if template is None:
        (copy / "chat_template.jinja").unlink()
    else:
        (copy / "chat_template.jinja").write_text(template)
    return copy


def test_a_model_without_a_chat_template_is_a_clear_error(tiny_model: Path, tmp_path: Path) -> None:
    model = _model_with_template(tiny_model, tmp_path, None)
    data = write_jsonl(tmp_path / "d.jsonl")
    result = _invoke_sft("--data", str(data), "--model", str(model), "--out", str(tmp_path / "o"))
    assert result.exit_code != 0 and "has no chat template" in result.output and "--chat-template" in result.output


def test_a_template_trl_cannot_limit_to_assistant_tokens_is_a_clear_error(tiny_model: Path, tmp_path: Path) -> None:
    plain = "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
    model = _model_with_template(tiny_model, tmp_path, plain)
    data = write_jsonl(tmp_path / "d.jsonl")
    result = _invoke_sft("--data", str(data), "--model", str(model), "--out", str(tmp_path / "o"))
    assert result.exit_code != 0 and "generation" in result.output and "--chat-template" in result.output


def test_tool_arguments_of_different_rows_stay_apart_in_the_dataset(tmp_path: Path) -> None:
    lines = [example(0), example(1)]
    lines[1]["messages"][2]["tool_calls"][0]["function"]["arguments"] = {"other_key": 5}
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    dataset = load_chat_dataset(path)
    assert dataset[0]["messages"][2]["tool_calls"][0]["function"]["arguments"] == {"ticket_id": "tkt_0000"}
    assert dataset[1]["messages"][2]["tool_calls"][0]["function"]["arguments"] == {"other_key": 5}
    assert json.loads(dataset[0]["tools"])[0]["function"]["name"] == "tickets__get_ticket"


def test_openai_string_arguments_and_flat_harness_calls_are_read_as_objects(tmp_path: Path) -> None:
    record = example(0)
    record["messages"][2]["tool_calls"][0]["function"]["arguments"] = '{"ticket_id": "tkt_0000"}'
    record["messages"][4]["tool_calls"] = [{"id": "c", "name": "payments__create_refund", "arguments": {"amount": 1}}]
    record["messages"][6]["content"] = None
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(record) + "\n")
    messages = read_chat_jsonl(path)[0]["messages"]
    assert messages[2]["tool_calls"][0]["function"]["arguments"] == {"ticket_id": "tkt_0000"}
    assert messages[4]["tool_calls"][0]["function"] == {"name": "payments__create_refund", "arguments": {"amount": 1}}
    assert messages[6]["content"] == ""


def test_a_line_without_messages_or_assistant_turns_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(example(0)) + "\n" + json.dumps({"messages": [{"role": "user", "content": "x"}]}) + "\n")
    with pytest.raises(DataError, match=r"d\.jsonl:2.*no assistant message"):
        read_chat_jsonl(path)


def test_config_file_keys_match_the_options_and_the_command_line_wins(tmp_path: Path) -> None:
    config = tmp_path / "sft.yaml"
    config.write_text("lora-rank: 4\nlr: 1e-4\nepochs: 2\nbf16: false\ntarget_modules: q_proj,v_proj\n")
    options = merge_options(SFTOptions, read_config_file(config, SFTOptions), {"lora_rank": 32})
    assert options.lora_rank == 32 and options.lr == 1e-4 and options.epochs == 2.0 and options.bf16 is False
    assert options.target_modules_value() == ["q_proj", "v_proj"]
    (tmp_path / "bad.json").write_text(json.dumps({"lora_rnak": 4}))
    with pytest.raises(OptionsError, match=r"unknown option.*lora_rnak"):
        read_config_file(tmp_path / "bad.json", SFTOptions)


def test_bf16_and_gradient_checkpointing_are_off_on_cpu() -> None:
    from coworkenv.train.sft import gpu_available, resolve_precision

    if gpu_available():
        pytest.skip("this machine has a GPU")
    assert resolve_precision(SFTOptions()) == (False, False)
    with pytest.raises(OptionsError, match="no GPU"):
        resolve_precision(SFTOptions(bf16=True))
