"""The faster CPU step (issue 46): bf16 matmuls under autocast with fp32 weights, optimiser and loss, on where
the CPU has bf16 instructions; ``--threads`` for torch's CPU threads. The loss's definition and weights stay."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

pytest.importorskip("trl")

from coworkenv.train import sft
from coworkenv.train.commands import train_group
from coworkenv.train.options import OptionsError, SFTOptions
from coworkenv.train.sft import (
    build_trainer,
    cpu_bf16_supported,
    gpu_available,
    padded_on_the_right,
    resolve_cpu_bf16,
    weighted_loss,
)
from tests.train.fixtures import example, write_jsonl


@pytest.fixture
def keep_threads() -> Iterator[None]:
    import torch

    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def _options(data: Path, model: Path, out: Path, **extra: Any) -> SFTOptions:
    base: dict[str, Any] = {"full": True, "max_steps": 1, "batch_size": 3, "grad_accum": 1, "max_length": 1024}
    return SFTOptions(data=str(data), model=str(model), out=str(out), **{**base, **extra})


def _uneven(path: Path) -> Path:
    records = []
    for i in range(3):
        record = example(i)
        record["messages"][1]["content"] += " Please hurry." * (5 * i)
        records.append(json.dumps(record))
    path.write_text("\n".join(records) + "\n", encoding="utf-8")
    return path


def test_only_a_batch_padded_on_the_right_may_drop_its_attention_mask() -> None:
    import torch

    assert padded_on_the_right(torch.tensor([[1, 1, 1], [1, 1, 0], [1, 0, 0]]))
    assert not padded_on_the_right(torch.tensor([[1, 1, 1], [0, 1, 1]]))  # padded on the left
    assert not padded_on_the_right(torch.tensor([[1, 0, 1]]))  # a hole: two conversations in a row


def test_a_right_padded_batch_gives_the_same_logits_on_its_real_tokens_without_the_mask(
    tiny_model: Path, tmp_path: Path
) -> None:
    import torch

    data = _uneven(tmp_path / "demos.jsonl")
    trainer = build_trainer(_options(data, tiny_model, tmp_path / "o", context_weight=0.3, cpu_bf16=False))
    batch = trainer.data_collator([trainer.train_dataset[i] for i in range(3)])
    mask = batch["attention_mask"]
    assert not mask.all() and padded_on_the_right(mask)
    with torch.no_grad():
        masked = trainer.model(input_ids=batch["input_ids"], attention_mask=mask).logits
        causal = trainer.model(input_ids=batch["input_ids"]).logits
    assert torch.allclose(masked[mask.bool()], causal[mask.bool()], atol=1e-5)


def test_cpu_bf16_is_on_by_default_exactly_where_the_cpu_has_bf16_instructions() -> None:
    if gpu_available():
        pytest.skip("this machine has a GPU: bf16 is the GPU's setting")
    assert resolve_cpu_bf16(SFTOptions()) == cpu_bf16_supported()
    assert resolve_cpu_bf16(SFTOptions(cpu_bf16=False)) is False


def test_asking_for_cpu_bf16_on_a_cpu_without_it_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sft, "gpu_available", lambda: False)
    monkeypatch.setattr(sft, "cpu_bf16_supported", lambda: False)
    assert resolve_cpu_bf16(SFTOptions()) is False
    with pytest.raises(OptionsError, match="no bf16 instructions"):
        resolve_cpu_bf16(SFTOptions(cpu_bf16=True))


def test_negative_threads_are_refused_naming_the_option() -> None:
    with pytest.raises(OptionsError, match="threads"):
        SFTOptions(threads=-1)


def test_a_cpu_bf16_step_keeps_the_weighted_loss_in_fp32_close_to_fp32_and_evaluation_exactly_fp32(
    tiny_model: Path, tmp_path: Path
) -> None:
    import torch

    if gpu_available() or not cpu_bf16_supported():
        pytest.skip("needs a CPU with bf16 instructions and no GPU")
    data = _uneven(tmp_path / "demos.jsonl")
    trainer = build_trainer(_options(data, tiny_model, tmp_path / "o", context_weight=0.3, cpu_bf16=True))
    batch = trainer.data_collator([trainer.train_dataset[i] for i in range(3)])
    model = trainer.model
    with torch.no_grad():
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        fp32 = weighted_loss(logits, batch["input_ids"], batch["labels"], batch["attention_mask"], 0.3)
        model.eval()
        evaluation = trainer.compute_loss(model, batch)
        own = model(**batch).loss
    model.train()
    training = trainer.compute_loss(model, batch)
    assert training.dtype == torch.float32 and torch.allclose(training.detach(), fp32, rtol=2e-2)
    assert not torch.equal(training.detach(), fp32)  # the matmuls did run in bf16
    assert torch.allclose(evaluation, own, atol=1e-4)  # the held-out loss is fp32's, comparable across runs
    training.backward()
    assert all(p.dtype == torch.float32 and p.grad is not None for p in model.parameters() if p.requires_grad)
    assert all(p.grad.dtype == torch.float32 for p in model.parameters() if p.grad is not None)


def test_cpu_bf16_without_context_weight_keeps_trl_s_assistant_only_loss(tiny_model: Path, tmp_path: Path) -> None:
    import torch

    if gpu_available() or not cpu_bf16_supported():
        pytest.skip("needs a CPU with bf16 instructions and no GPU")
    data = _uneven(tmp_path / "demos.jsonl")
    trainer = build_trainer(_options(data, tiny_model, tmp_path / "o", cpu_bf16=True))
    batch = trainer.data_collator([trainer.train_dataset[i] for i in range(3)])
    model = trainer.model
    with torch.no_grad():
        own = model(**batch).loss
        model.train()
        training = trainer.compute_loss(model, batch)
    assert torch.allclose(training, own, rtol=2e-2) and not torch.equal(training, own)


def test_threads_set_torch_s_cpu_threads_for_the_run(tiny_model: Path, tmp_path: Path, keep_threads: None) -> None:
    import torch

    data = write_jsonl(tmp_path / "demos.jsonl", n=2)
    build_trainer(_options(data, tiny_model, tmp_path / "o", threads=1))
    assert torch.get_num_threads() == 1


def test_the_command_takes_cpu_bf16_and_threads_and_records_them(
    tiny_model: Path, tmp_path: Path, keep_threads: None
) -> None:
    data = write_jsonl(tmp_path / "demos.jsonl", n=2)
    out = tmp_path / "run"
    args = ["sft", "--data", str(data), "--model", str(tiny_model), "--out", str(out), "--full", "--max-steps", "1"]
    args += ["--batch-size", "2", "--grad-accum", "1", "--max-length", "1024", "--context-weight", "0.3"]
    result = CliRunner().invoke(train_group, [*args, "--no-cpu-bf16", "--threads", "1"])
    assert result.exit_code == 0, result.output
    options = json.loads((out / "coworkenv_sft.json").read_text())["options"]
    assert options["cpu_bf16"] is False and options["threads"] == 1


@pytest.mark.parametrize(("given", "expected"), [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
def test_importing_train_makes_waiting_openmp_threads_sleep_unless_the_environment_says_otherwise(
    given: str | None, expected: str
) -> None:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"} | (
        {"OMP_WAIT_POLICY": given} if given else {}
    )
    code = "import os, sys, coworkenv.train; print(os.environ['OMP_WAIT_POLICY'], 'torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == [expected, "False"]  # set before torch (and its OpenMP) loads
