"""SFT on the whole conversation: the assistant's tokens weigh 1, the context's (system, user, tool results)
``--context-weight``, padding 0; batches keep each conversation's masks; a stopped run resumes from its
checkpoint; the held-out loss is reported before and after."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

pytest.importorskip("trl")

from coworkenv.train.commands import sft_summary, train_group
from coworkenv.train.options import OptionsError, SFTOptions
from coworkenv.train.sft import SFTResult, build_trainer, sft_config, weighted_loss
from tests.train.fixtures import example, write_jsonl

FAST = ["--full", "--batch-size", "2", "--grad-accum", "1", "--max-length", "1024", "--lr", "1e-3"]


def _options(data: Path, model: Path, out: Path, **extra: Any) -> SFTOptions:
    base: dict[str, Any] = {"full": True, "max_steps": 1, "batch_size": 3, "grad_accum": 1, "max_length": 1024}
    return SFTOptions(data=str(data), model=str(model), out=str(out), **{**base, **extra})


def _uneven(path: Path) -> Path:
    """Three conversations of different lengths (the user's request longer in each)."""
    records = []
    for i in range(3):
        record = example(i)
        record["messages"][1]["content"] += " Please hurry." * (5 * i)
        records.append(json.dumps(record))
    path.write_text("\n".join(records) + "\n", encoding="utf-8")
    return path


def test_the_weighted_loss_equals_a_hand_computation_with_assistant_one_context_w_and_padding_zero() -> None:
    import torch

    torch.manual_seed(0)
    ids = torch.tensor([[5, 6, 7, 8, 9], [3, 4, 5, 0, 0]])
    labels = torch.tensor([[-100, -100, 7, 8, -100], [-100, 4, -100, -100, -100]])
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
    logits = torch.randn(2, 5, 11)
    w = 0.3
    total, weights = 0.0, 0.0
    for b in range(2):
        for t in range(1, 5):  # position t-1 predicts token t
            if labels[b, t] != -100:
                weight = 1.0
            elif mask[b, t]:
                weight = w
            else:
                weight = 0.0
            logp = torch.log_softmax(logits[b, t - 1], -1)[ids[b, t]]
            total += -float(logp) * weight
            weights += weight
    # by hand: row 0 has tokens 6 (context), 7, 8 (assistant), 9 (context); row 1 has 4 (assistant), 5 (context)
    assert weights == pytest.approx(1 + 1 + 1 + w + w + w)
    got = float(weighted_loss(logits, ids, labels, mask, w))
    assert got == pytest.approx(total / weights, rel=1e-5)
    # weight 0 on the context is the usual assistant-only loss
    assistant_only = float(weighted_loss(logits, ids, labels, mask, 0.0))
    picked = [(0, 2), (0, 3), (1, 1)]
    by_hand = sum(-float(torch.log_softmax(logits[b, t - 1], -1)[ids[b, t]]) for b, t in picked) / 3
    assert assistant_only == pytest.approx(by_hand, rel=1e-5)


def test_a_batch_of_conversations_keeps_each_one_s_masks_and_pads_without_loss(
    tiny_model: Path, tmp_path: Path
) -> None:
    data = _uneven(tmp_path / "demos.jsonl")
    trainer = build_trainer(_options(data, tiny_model, tmp_path / "o", context_weight=0.3))
    rows = [trainer.train_dataset[i] for i in range(3)]
    assert len({len(r["input_ids"]) for r in rows}) > 1  # conversations of different lengths: padding needed
    batch = trainer.data_collator(rows)
    for k, row in enumerate(rows):
        n = len(row["input_ids"])
        assert batch["input_ids"][k, :n].tolist() == row["input_ids"]
        assert batch["labels"][k, :n].tolist() == row["labels"]  # the assistant mask, as prepared alone
        assert batch["attention_mask"][k, :n].all() and not batch["attention_mask"][k, n:].any()
        assert (batch["labels"][k, n:] == -100).all()


def test_the_trainer_s_loss_is_the_weighted_loss_in_training_and_the_assistant_loss_in_evaluation(
    tiny_model: Path, tmp_path: Path
) -> None:
    import torch

    data = _uneven(tmp_path / "demos.jsonl")
    trainer = build_trainer(_options(data, tiny_model, tmp_path / "o", context_weight=0.5, cpu_bf16=False))
    batch = trainer.data_collator([trainer.train_dataset[i] for i in range(3)])
    model = trainer.model
    with torch.no_grad():
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        model.train()
        training = trainer.compute_loss(model, batch)
        model.eval()
        evaluation = trainer.compute_loss(model, batch)
        own = model(**batch).loss  # the model's own loss on the labels: the assistant's tokens only
    weighted = weighted_loss(logits, batch["input_ids"], batch["labels"], batch["attention_mask"], 0.5)
    assert torch.allclose(training, weighted, atol=1e-4)
    assert torch.allclose(evaluation, own, atol=1e-4)
    assert not torch.allclose(training, evaluation, atol=1e-3)


def test_a_stopped_run_resumes_from_its_checkpoint_and_a_first_resume_starts_fresh_saying_so(
    tiny_model: Path, tmp_path: Path
) -> None:
    data = write_jsonl(tmp_path / "demos.jsonl", n=4)
    held = write_jsonl(tmp_path / "held.jsonl", n=2)
    out = tmp_path / "run"
    common = ["sft", "--data", str(data), "--model", str(tiny_model), "--out", str(out), *FAST]
    common += ["--context-weight", "0.3", "--eval-data", str(held), "--save-steps", "2"]
    first = CliRunner().invoke(train_group, [*common, "--max-steps", "2", "--resume"])  # nothing to resume yet
    assert first.exit_code == 0, first.output
    assert "no checkpoint in" in first.stderr and "starts from the beginning" in first.stderr
    assert (out / "checkpoint-2" / "trainer_state.json").is_file()
    second = CliRunner().invoke(train_group, [*common, "--max-steps", "4", "--resume"])
    assert second.exit_code == 0, second.output
    assert "resumed from checkpoint-2" in second.output and "trained 4 steps" in second.output
    summary = json.loads((out / "coworkenv_sft.json").read_text())
    assert summary["steps"] == 4 and summary["resumed_from"].endswith("checkpoint-2")
    steps = [step for step, _ in summary["eval_losses"]]
    assert steps[0] == 0 and steps[-1] == 4  # the held-out loss before the first run and after the resumed one
    assert all(math.isfinite(loss) for _, loss in summary["eval_losses"])


def test_resuming_a_run_that_reached_its_steps_trains_no_step_more_and_keeps_its_weights(
    tiny_model: Path, tmp_path: Path
) -> None:
    data = write_jsonl(tmp_path / "demos.jsonl", n=8)  # 4 steps an epoch: the run stops inside one
    out = tmp_path / "run"
    common = ["sft", "--data", str(data), "--model", str(tiny_model), "--out", str(out), *FAST]
    common += ["--context-weight", "0.3", "--save-steps", "2", "--max-steps", "2"]
    assert CliRunner().invoke(train_group, common).exit_code == 0
    weights = (out / "checkpoint-2" / "model.safetensors").read_bytes()
    again = CliRunner().invoke(train_group, [*common, "--resume"])
    assert again.exit_code == 0, again.output
    assert "trained 2 steps (resumed from checkpoint-2)" in again.output
    assert not (out / "checkpoint-3").exists()
    assert json.loads((out / "coworkenv_sft.json").read_text())["steps"] == 2
    assert (out / "model.safetensors").read_bytes() == weights


def test_a_rerun_with_the_same_seed_gives_the_same_weights_and_another_seed_does_not(
    tiny_model: Path, tmp_path: Path
) -> None:
    data = write_jsonl(tmp_path / "demos.jsonl", n=8)
    common = ["sft", "--data", str(data), "--model", str(tiny_model), *FAST, "--max-steps", "3"]
    common += ["--context-weight", "0.3", "--threads", "1"]
    weights = {}
    for name, seed in (("a", "7"), ("b", "7"), ("c", "8")):
        result = CliRunner().invoke(train_group, [*common, "--out", str(tmp_path / name), "--seed", seed])
        assert result.exit_code == 0, result.output
        weights[name] = (tmp_path / name / "model.safetensors").read_bytes()
    assert weights["a"] == weights["b"]
    assert weights["a"] != weights["c"]  # the batches' order follows the seed


def test_the_summary_says_plainly_when_the_held_out_loss_did_not_fall(tmp_path: Path) -> None:
    fell = SFTResult(tmp_path, 10, 20, [8.0, 3.0], eval_losses=[(0, 8.1), (20, 3.2)])
    assert "held-out loss 8.1000 -> 3.2000" in sft_summary(fell, True) and "learnt nothing" not in sft_summary(
        fell, True
    )
    rose = SFTResult(tmp_path, 10, 20, [8.0, 3.0], eval_losses=[(0, 8.1), (20, 8.3)])
    assert "the loss did not fall: this model learnt nothing" in sft_summary(rose, False)


@pytest.mark.parametrize(
    ("option", "value"),
    [("context_weight", -0.1), ("context_weight", 1.5), ("batch_size", 0), ("adam_beta2", 1.0), ("save_steps", -1)],
)
def test_a_bad_training_option_is_refused_naming_it(option: str, value: float) -> None:
    with pytest.raises(OptionsError, match=option):
        SFTOptions(**{option: value})


def test_an_unknown_schedule_is_refused_with_the_known_ones() -> None:
    with pytest.raises(OptionsError, match="cosine"):
        SFTOptions(lr_scheduler="sawtooth")


@pytest.mark.parametrize(("ratio", "schedule"), [(-0.1, "cosine"), (1.0, "cosine"), (0.25, "linear")])
def test_a_learning_rate_floor_outside_0_to_1_or_off_the_cosine_is_refused(ratio: float, schedule: str) -> None:
    with pytest.raises(OptionsError, match="min_lr_ratio"):
        SFTOptions(min_lr_ratio=ratio, lr_scheduler=schedule)


def test_a_floor_under_the_cosine_keeps_that_share_of_the_learning_rate_at_the_end(tmp_path: Path) -> None:
    import torch
    from transformers.optimization import get_scheduler

    config = sft_config(SFTOptions(out=str(tmp_path), lr=2e-3, min_lr_ratio=0.25, max_steps=100, warmup_steps=10))
    optimizer = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=config.learning_rate)
    scheduler = get_scheduler(
        config.lr_scheduler_type, optimizer, 10, 100, scheduler_specific_kwargs=config.lr_scheduler_kwargs
    )
    rates = []
    for _ in range(100):
        rates.append(scheduler.get_last_lr()[0])
        optimizer.step()
        scheduler.step()
    assert max(rates) == pytest.approx(2e-3)
    assert min(rates[10:]) == pytest.approx(5e-4, rel=0.01)
