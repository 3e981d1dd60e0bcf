"""TRL through OpenEnv: trl's own GRPOTrainer, its environment the class over a running ``coworkenv openenv serve``
(the tools the server lists as methods, the grader's score from the server as the reward). One CPU step on the tiny
model with generation scripted (a random model never calls tools): one rollout plays the reference and calls
``reply``, the other gives up in plain text, which the reward function says to the user."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl")
pytest.importorskip("websockets")

from trl import GRPOTrainer

from coworkenv.synth.contract.taskfile import load_task, save_tasks
from coworkenv.train.openenv_env import openenv_environment, openenv_reward, openenv_rows
from coworkenv.train.options import RLOptions
from coworkenv.train.trl_rl import grpo_config, peft_config
from tests.harness.openenv.plays import EXAMPLES, reference_actions, served

TASK = load_task(EXAMPLES / "tickets-triage-new-urgent.json")
CALLS = [
    "<tool_call>\n" + json.dumps({"name": a["tool_name"], "arguments": a["arguments"]}) + "\n</tool_call><|im_end|>"
    for a in [*reference_actions(TASK), {"tool_name": "reply", "arguments": {"text": "Assigned to Kim, replied."}}]
]
CLOSING = "Done.<|im_end|>"


class Scripted(GRPOTrainer):
    """Generation replaced by a script: even rollouts play the reference solution then reply, odd ones give up."""

    def _generate_single_turn(self, prompt_ids: Any, *args: Any, **kwargs: Any) -> tuple[list[list[int]], None]:
        texts = []
        for ids in prompt_ids:
            done = self._tokenizer.decode(ids).count("<tool_response>")
            if done == 0:
                n = self.__dict__.setdefault("_firsts", 0)
                self._firsts = n + 1
                texts.append(CALLS[0] if n % 2 == 0 else "I can't help with that.<|im_end|>")
            else:
                texts.append(CALLS[done] if done < len(CALLS) else CLOSING)
        return [self._tokenizer(t, add_special_tokens=False)["input_ids"] for t in texts], None


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("openenv-trl")
    save_tasks([TASK], folder / "tasks.jsonl")
    with served(folder) as url:
        yield url


def test_the_environment_class_has_the_servers_tools_as_typed_methods_and_no_others(server: str) -> None:
    from coworkenv.train.trl_env import json_tools

    cls = openenv_environment(server)
    tools = {n for n in dir(cls) if not n.startswith("_") and callable(getattr(cls, n))}
    assert "reply" in tools and "tickets__assign_ticket" in tools
    assert tools - {"reset"} == {n for n in tools if n == "reply" or n.startswith("tickets__")}
    schemas = {t["function"]["name"]: t["function"] for t in json_tools(cls)}
    assert schemas["tickets__assign_ticket"]["parameters"]["required"] == ["ticket_id", "assignee_id"]
    assert openenv_environment(server, tool_names=["tickets__get_ticket"]).__dict__.keys() >= {
        "tickets__get_ticket",
        "reply",
    }


def test_one_grpo_step_of_trls_own_trainer_learns_from_the_servers_grades(
    server: str, tiny_model: Path, tmp_path: Path
) -> None:
    import datasets

    rows = openenv_rows(server)
    assert [r["task_id"] for r in rows] == [TASK.id] and "reply tool" in rows[0]["prompt"][0]["content"]
    options = RLOptions(
        tasks="", model=str(tiny_model), out=str(tmp_path), algo="grpo", group_size=2, tasks_per_step=1, steps=1,
        lr=1e-2, lora_rank=4, lora_alpha=8, max_completion_length=6000, max_tool_calls=len(CALLS) + 2,
    )  # fmt: skip
    trainer = Scripted(
        model=str(tiny_model),
        reward_funcs=openenv_reward,
        args=grpo_config(options),
        train_dataset=datasets.Dataset.from_list(rows),
        peft_config=peft_config(options),
        environment_factory=openenv_environment(server),
    )
    trainer.train()
    logged = trainer.state.log_history[0]
    assert logged["reward"] == pytest.approx(0.5)  # the reference's 1.0 and the give-up's 0.0
    assert logged["rewards/openenv_reward/mean"] == pytest.approx(0.5)
    assert logged["tools/call_frequency"] == pytest.approx(len(CALLS) / 2)
    grades = sorted((env.reward, env.grade["score"]) for env in trainer.environments)
    assert grades == [(0.0, 0.0), (1.0, 1.0)] and all(env.done for env in trainer.environments)
