"""train/configs: every accelerate config loads in accelerate's own loader, and every option file becomes the
trainer config it names (built offline, no GPU)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("trl")

from coworkenv.train.options import RLOptions, SFTOptions, merge_options, read_config_file
from coworkenv.train.trl_rl import grpo_config

CONFIGS = Path(__file__).parents[2] / "train" / "configs"
KINDS = {"accelerate_ddp.yaml": "MULTI_GPU", "accelerate_fsdp.yaml": "FSDP", "accelerate_zero3.yaml": "DEEPSPEED"}


@pytest.mark.parametrize("name", sorted(KINDS))
def test_each_accelerate_config_loads_in_accelerate_with_its_distributed_type(name: str) -> None:
    from accelerate.commands.config.config_args import ClusterConfig

    config = ClusterConfig.from_yaml_file(str(CONFIGS / name))
    assert str(config.distributed_type).endswith(KINDS[name])
    assert config.mixed_precision == "bf16" and config.num_processes == 8


@pytest.mark.parametrize("name", ["rl_vllm_colocate.yaml", "rl_vllm_server.yaml"])
def test_each_rl_option_file_becomes_a_grpo_config_with_its_vllm_mode(name: str, tmp_path: Path) -> None:
    options = merge_options(RLOptions, read_config_file(CONFIGS / name, RLOptions), {"out": str(tmp_path)})
    config = grpo_config(options, bf16=False)
    assert config.use_vllm and config.vllm_mode == options.vllm_mode
    assert config.num_generations == 8 and config.per_device_train_batch_size == 32
    if options.vllm_mode == "server":
        assert config.vllm_server_base_url == "http://127.0.0.1:8000"


def test_the_sft_option_file_builds_the_sft_options(tmp_path: Path) -> None:
    options = merge_options(SFTOptions, read_config_file(CONFIGS / "sft_lora.yaml", SFTOptions), {})
    assert (options.lora_rank, options.grad_accum, options.max_length) == (16, 16, 16384)


def test_a_grpo_trainer_builds_from_an_rl_option_file_on_cpu(tiny_model: Path, tmp_path: Path) -> None:
    from coworkenv.synth.contract.taskfile import load_task
    from coworkenv.train.trl_rl import build_trainer

    values = read_config_file(CONFIGS / "rl_vllm_colocate.yaml", RLOptions)
    values |= {"use_vllm": False, "model": str(tiny_model), "out": str(tmp_path), "group_size": 2, "tasks_per_step": 1}
    task = load_task(Path(__file__).parents[2] / "synth" / "examples" / "tickets-triage-new-urgent.json")
    trainer = build_trainer(merge_options(RLOptions, values, {}), [task])
    assert trainer.num_generations == 2 and trainer.args.max_completion_length == 16384


def test_a_config_file_with_a_yaml_alias_is_refused_in_one_line(tmp_path: Path) -> None:
    from coworkenv.train.options import OptionsError, SFTOptions, read_config_file

    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("a: &a [x, x]\nb: &b [*a, *a]\nlr: *b\n", encoding="utf-8")
    with pytest.raises(OptionsError, match=r"aliases .* are not allowed") as info:
        read_config_file(bomb, SFTOptions)
    assert "\n" not in str(info.value)
