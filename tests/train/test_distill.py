"""`train distill`: on-policy distillation on trl's GKD trainer, a tiny teacher into a tiny student."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("trl")

from coworkenv.synth.contract.taskfile import load_task
from coworkenv.train.distill import DistillOptions, run_distill, turn_rows
from coworkenv.train.options import OptionsError

EXAMPLES = Path(__file__).parents[2] / "synth" / "examples"
TASK_FILE = EXAMPLES / "tickets-triage-new-urgent.json"


@pytest.fixture(scope="module")
def teacher(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from coworkenv.train.tiny import build_tiny

    return build_tiny(tmp_path_factory.mktemp("teacher") / "model", seed=1)


def test_each_reference_turn_is_a_prompt_rendered_as_the_hf_agent_sees_it_with_the_turn_as_completion(
    tiny_model: Path,
) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    rows = turn_rows(load_task(TASK_FILE), tokenizer)
    assert len(rows) >= 2
    first = rows[0]
    assert "tickets__get_ticket" in first["prompt"] and first["prompt"].endswith("<|im_start|>assistant\n")
    completion = [t for t, m in zip(first["input_ids"], first["completion_mask"], strict=True) if m]
    assert tokenizer.decode(completion).startswith("<tool_call>")
    assert rows[1]["prompt"].startswith(first["prompt"][: len(first["prompt"]) - 30])


def test_under_the_compact_template_with_named_tools_each_prompt_is_the_one_the_hf_agent_renders(
    tiny_model: Path,
) -> None:
    import anyio

    from coworkenv.harness.agents.hf_agent import HFAgent, load_tokenizer
    from coworkenv.harness.agents.registry import make_agent
    from coworkenv.harness.episode import run_episode
    from coworkenv.harness.tools import tool_views

    task = load_task(TASK_FILE)
    names = "tickets__search_users,tickets__assign_ticket"
    rows = turn_rows(task, load_tokenizer(tiny_model), "compact", names)
    episode = anyio.run(run_episode, task, make_agent("replay"))
    agent = HFAgent(str(tiny_model), template="compact", tools=names)
    first_turn = next(k for k, m in enumerate(episode.messages) if m.role == "assistant")
    assert rows[0]["prompt"] == agent.prompt(episode.messages[:first_turn], tool_views(task.services))
    assert "- tickets__assign_ticket(" in rows[0]["prompt"] and "tickets__add_comment" not in rows[0]["prompt"]
    assert '"parameters"' not in rows[0]["prompt"]  # no JSON schemas: the compact list only


def test_distillation_prompts_default_to_the_template_the_teacher_was_trained_on(tmp_path: Path) -> None:
    (tmp_path / "coworkenv_sft.json").write_text(json.dumps({"template": "compact"}))
    assert DistillOptions(teacher=str(tmp_path), model="student").resolved_template() == "compact"
    assert DistillOptions(teacher=str(tmp_path), template="full").resolved_template() == "full"
    assert DistillOptions(teacher=str(tmp_path / "none"), model="student").resolved_template() == "full"
    with pytest.raises(OptionsError, match="unknown template 'short'"):
        DistillOptions(template="short")


def test_one_on_policy_distillation_step_trains_the_student_on_the_teachers_scores(
    tiny_model: Path, teacher: Path, tmp_path: Path
) -> None:
    options = DistillOptions(
        tasks=str(TASK_FILE), model=str(tiny_model), teacher=str(teacher), out=str(tmp_path), steps=1,
        max_new_tokens=8, lr=1e-3, lora_rank=4, lora_alpha=8,
    )  # fmt: skip
    history = run_distill(options)
    assert history[0]["loss"] > 0
    assert (tmp_path / "adapter_model.safetensors").exists()
    assert json.loads((tmp_path / "trainer_state.json").read_text())["global_step"] == 1
