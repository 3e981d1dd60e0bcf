"""The copy curriculum: synthetic text that only copying predicts, trained on a saved model before SFT."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("trl")

from coworkenv.train.commands import train_group
from coworkenv.train.copy_accuracy import copy_accuracy
from coworkenv.train.copying import (
    SUMMARY,
    copied_values,
    induction_batch,
    labelled_loss,
    train_copying,
    train_copying_values,
    value_examples,
)
from tests.train.fixtures import example, write_jsonl


def test_a_copy_sequence_is_random_tokens_then_spans_of_them_copied_from_varying_distances() -> None:
    rows, masks = induction_batch(random.Random(0), range(10, 5000), batch=8, length=64)
    assert len(rows) == len(masks) == 8
    distances = set()
    for row, mask in zip(rows, masks, strict=True):
        assert len(row) == len(mask) == 64 and all(10 <= t < 5000 for t in row)
        assert not any(mask[:32]) and any(mask[32:])
        for i in range(33, 64):
            if mask[i]:  # a copy: its previous token occurs in the first half, followed by this one
                sources = [j for j in range(31) if row[j] == row[i - 1] and row[j + 1] == row[i]]
                assert sources
                distances.update(i - j for j in sources)
    assert len(distances) > 10  # no one offset predicts the copies
    assert rows[0] != rows[1]
    with pytest.raises(ValueError, match="at least 4 tokens"):
        induction_batch(random.Random(0), range(10, 50), batch=1, length=3)


def test_the_curriculum_trains_the_saved_model_in_place_and_records_its_losses(
    tiny_model: Path, tmp_path: Path
) -> None:
    from transformers import AutoModelForCausalLM

    folder = tmp_path / "m"
    shutil.copytree(tiny_model, folder)
    before = AutoModelForCausalLM.from_pretrained(folder).state_dict()
    result = train_copying(folder, steps=4, batch=2, length=16)
    after = AutoModelForCausalLM.from_pretrained(folder).state_dict()
    assert result.steps == 4 and len(result.losses) == 4
    assert any(not bool((before[k] == after[k]).all()) for k in before)
    summary = json.loads((folder / SUMMARY).read_text())["induction"]
    assert summary["steps"] == 4 and summary["length"] == 16 and summary["losses"] == result.losses
    with pytest.raises(ValueError, match="at least 1"):
        train_copying(folder, steps=0)


def test_train_tiny_runs_the_copy_curriculum_when_asked(tmp_path: Path) -> None:
    out = tmp_path / "m"
    result = CliRunner().invoke(train_group, ["tiny", "--out", str(out), "--copy-steps", "2"])
    assert result.exit_code == 0, result.output
    assert "copy curriculum: 2 steps" in result.output
    assert json.loads((out / SUMMARY).read_text())["induction"]["steps"] == 2


def test_copied_values_are_call_arguments_seen_earlier_in_a_user_or_tool_message_but_not_the_system() -> None:
    messages = example(0)["messages"]
    found = copied_values(messages)
    assert found[2] == {"tkt_0000"}  # from the request
    assert found[4] == {"ch_123"}  # from the first tool result
    assert not any(found[k] for k in (0, 1, 3))
    messages[0] = {**messages[0], "content": "tickets look like tkt_0000"}
    assert copied_values(messages)[2] == set()  # what the system prompt says is format, not a copy


def test_a_value_example_is_a_short_conversation_without_the_system_prompt_with_loss_on_the_copy_only(
    tiny_model: Path,
) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    examples = value_examples([example(3)], tokenizer, max_tokens=4096)
    assert len(examples) == 2
    for (ids, labels), value in zip(examples, ("tkt_0003", "ch_123"), strict=True):
        assert "SYSTEM-PROMPT" not in tokenizer.decode(ids)
        assert tokenizer.decode([t for t in labels if t != -100]) == value
        assert len(ids) == len(labels)
    assert value_examples([example(3)], tokenizer, max_tokens=len(examples[0][0])) == examples[:1]


def test_a_value_window_keeps_a_long_example_s_last_tokens_and_the_loss_only_where_the_source_is_inside(
    tiny_model: Path,
) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    whole = value_examples([example(3)], tokenizer, max_tokens=4096)
    refund_ids = whole[1][0]
    text = tokenizer.decode(refund_ids)
    # a window from just before the tool result: ch_123 is inside it, the request (and its ticket id) is not
    width = len(tokenizer(text[text.index('{"TOOL-RESULT"') - 1 :], add_special_tokens=False)["input_ids"])
    assert value_examples([example(3)], tokenizer, max_tokens=width) == []  # without window: left out
    windows = value_examples([example(3)], tokenizer, max_tokens=width, window=True)
    assert len(windows) == 2 and windows[0][0] == whole[0][0][-width:]  # the request's ticket: still inside
    ids, labels = windows[1]
    assert ids == refund_ids[-width:] and len(labels) == width
    assert "USER-ASK" not in tokenizer.decode(ids) and "TOOL-RESULT" in tokenizer.decode(ids)
    assert tokenizer.decode([t for t in labels if t != -100]) == "ch_123"


def test_the_value_warm_up_trains_the_saved_model_in_place_and_fails_in_one_line_without_examples(
    tiny_model: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "m"
    shutil.copytree(tiny_model, folder)
    data = write_jsonl(tmp_path / "demos.jsonl", n=3)
    result = train_copying_values(folder, data, steps=3, batch=2)
    assert len(result.losses) == 3
    assert json.loads((folder / SUMMARY).read_text())["values"]["examples"] == 6
    with pytest.raises(ValueError, match="no demonstration") as error:
        train_copying_values(folder, data, steps=1, max_tokens=5)
    assert "\n" not in str(error.value)


def test_train_tiny_copies_values_only_from_the_demonstrations_it_is_given(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(train_group, ["tiny", "--out", str(tmp_path / "a"), "--value-steps", "2"])
    assert result.exit_code != 0 and "--value-steps needs --tokenizer-from" in result.output
    data = write_jsonl(tmp_path / "demos.jsonl", n=3)
    args = ["tiny", "--out", str(tmp_path / "b"), "--tokenizer-from", str(data), "--value-steps", "2"]
    result = runner.invoke(train_group, args)
    assert result.exit_code == 0, result.output
    assert "copying values: 2 steps" in result.output
    assert "copying windows" not in result.output
    args = [*args[:2], str(tmp_path / "c"), *args[3:], "--value-tokens", "4096", "--window-steps", "2"]
    result = runner.invoke(train_group, [*args, "--window-tokens", "96"])
    assert result.exit_code == 0, result.output
    assert "copying values: 2 steps" in result.output and "copying windows: 2 steps" in result.output
    summary = json.loads((tmp_path / "c" / SUMMARY).read_text())
    assert summary["values"]["window"] is False and summary["values"]["max_tokens"] == 4096
    assert summary["windows"]["window"] is True and summary["windows"]["max_tokens"] == 96
    result = runner.invoke(train_group, [*args, "--window-tokens", "8"])
    assert result.exit_code != 0 and "--window-tokens" in result.output and "Traceback" not in result.output
    result = runner.invoke(train_group, ["tiny", "--out", str(tmp_path / "d"), "--window-steps", "2"])
    assert result.exit_code != 0 and "--window-steps needs --tokenizer-from" in result.output


def test_copy_weights_weigh_the_copied_values_of_a_training_example_and_nothing_untrained(tiny_model: Path) -> None:
    from transformers import AutoTokenizer
    from trl.chat_template_utils import get_training_chat_template

    from coworkenv.train.copying import copy_weights

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    encoded = tokenizer.apply_chat_template(
        example(3)["messages"],
        chat_template=get_training_chat_template(tokenizer),
        return_dict=True,
        return_assistant_tokens_mask=True,
    )
    ids = list(encoded["input_ids"])
    labels = [t if m else -100 for t, m in zip(ids, encoded["assistant_masks"], strict=True)]
    weights = copy_weights(tokenizer, ids, labels, 5.0)
    heavy = tokenizer.decode([t for t, w in zip(ids, weights, strict=True) if w == 5.0])
    assert heavy == "tkt_0003ch_123"
    assert all(w == 0.0 for w, label in zip(weights, labels, strict=True) if label == -100)
    assert all(w == 1.0 for w, label in zip(weights, labels, strict=True) if label != -100 and w != 5.0)


@pytest.mark.parametrize(
    ("given", "recorded", "refused", "bad"),
    [
        (["--copy-weight", "10", "--warmup-steps", "1"], {"copy_weight": 10, "warmup_steps": 1}, "--copy-weight", "0"),
        (
            ["--value-batch", "2", "--value-tokens", "300"],
            {"value_batch": 2, "value_tokens": 300},
            "--value-batch",
            "-1",
        ),
    ],
)
def test_sft_trains_with_a_copy_weight_or_a_value_batch_and_refuses_a_bad_one(
    tiny_model: Path, tmp_path: Path, given: list[str], recorded: dict[str, int], refused: str, bad: str
) -> None:
    data = write_jsonl(tmp_path / "demos.jsonl", n=2)
    args = ["sft", "--data", str(data), "--model", str(tiny_model), "--out", str(tmp_path / "o"), "--full"]
    fast = ["--max-steps", "2", "--batch-size", "2", "--grad-accum", "1", "--max-length", "1024"]
    result = CliRunner().invoke(train_group, [*args, *fast, *given])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "o" / "coworkenv_sft.json").read_text())
    assert {k: summary["options"][k] for k in recorded} == recorded
    assert len(summary["losses"]) == 2
    result = CliRunner().invoke(train_group, [*args, *fast, refused, bad])
    option = refused.removeprefix("--").replace("-", "_")
    assert result.exit_code != 0 and option in result.output


def test_the_copy_weighted_loss_with_every_weight_one_is_the_models_own_loss(tiny_model: Path, tmp_path: Path) -> None:
    import torch
    from trl import SFTTrainer

    from coworkenv.train.options import SFTOptions
    from coworkenv.train.sft import build_trainer, copy_weighted

    data = write_jsonl(tmp_path / "demos.jsonl", n=2)
    options = SFTOptions(
        data=str(data), model=str(tiny_model), out=str(tmp_path / "o"), full=True, max_steps=1, batch_size=2,
        grad_accum=1, max_length=1024,
    )  # fmt: skip
    trainer = build_trainer(options)
    batch = next(iter(trainer.get_train_dataloader()))
    assert (batch["labels"] != -100).any() and (batch["labels"] == -100).any()  # some tokens trained, some not
    trainer.__class__ = copy_weighted(SFTTrainer, 1.0)
    with torch.no_grad():
        ours = trainer.compute_loss(trainer.model, batch)
        theirs = trainer.model(
            input_ids=batch["input_ids"], attention_mask=batch.get("attention_mask"), labels=batch["labels"]
        ).loss
    assert torch.allclose(ours, theirs, atol=1e-4), (float(ours), float(theirs))


def test_with_a_value_batch_each_training_step_adds_the_loss_of_copied_value_examples(
    tiny_model: Path, tmp_path: Path
) -> None:
    import torch
    from trl import SFTTrainer

    from coworkenv.train.options import SFTOptions
    from coworkenv.train.sft import build_trainer, copy_weighted

    data = write_jsonl(tmp_path / "demos.jsonl", n=2)
    options = SFTOptions(
        data=str(data), model=str(tiny_model), out=str(tmp_path / "o"), full=True, max_steps=1, batch_size=2,
        grad_accum=1, max_length=1024, value_batch=3,
    )  # fmt: skip
    trainer = build_trainer(options)
    batch = next(iter(trainer.get_train_dataloader()))
    with torch.no_grad():
        trainer.model.train()
        joint = trainer.compute_loss(trainer.model, batch)
        trainer.model.eval()  # outside training (an evaluation) the value examples are not drawn
        alone = trainer.compute_loss(trainer.model, batch)
        trainer.__class__ = copy_weighted(SFTTrainer, 1.0)
        trainer.model.train()
        plain = trainer.compute_loss(trainer.model, batch)
    assert (
        torch.allclose(alone, plain, atol=1e-4) and float(joint) > float(plain) + 0.5
    )  # a random model: ~8 a value token


def test_the_warm_ups_loss_is_the_model_s_own_loss_with_the_output_layer_run_only_where_labelled(
    tiny_model: Path,
) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_model)
    ids = torch.randint(10, 200, (2, 12))
    labels = torch.full_like(ids, -100)
    labels[0, 5:8], labels[1, 9:] = ids[0, 5:8], ids[1, 9:]
    mask = torch.ones_like(ids)
    mask[1, 11] = 0
    batch = {"input_ids": ids, "labels": labels, "attention_mask": mask}
    assert torch.allclose(labelled_loss(model, batch), model(**batch).loss, atol=1e-5)


def test_copy_accuracy_scores_each_copied_argument_teacher_forced(tiny_model: Path) -> None:
    records = [example(i) for i in range(3)]
    accuracy = copy_accuracy(tiny_model, records)
    assert set(accuracy) == {"ticket_id", "charge"}  # the amount is a number: not a copied string
    for figures in accuracy.values():
        assert figures["n"] == 3 and 0.0 <= figures["values"] <= figures["tokens"] <= 1.0
