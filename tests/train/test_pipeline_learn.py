"""The main job's learning stage: a fixed fifth of the tasks is held out, the split of the demonstrations
follows it, and the summary says plainly what moved and what did not."""

from __future__ import annotations

import json
from pathlib import Path

from coworkenv.train.pipeline_learn import HELD_OUT_MAX_PROMPT, Learning, held_out, measurable, split_rows


def test_about_a_fifth_of_the_tasks_are_held_out_the_same_way_whatever_the_others() -> None:
    ids = [f"family-{i}-easy-{i * 7919:010x}" for i in range(1000)]
    held = [t for t in ids if held_out(t)]
    assert 150 <= len(held) <= 250
    assert [t for t in ids[:100] if held_out(t)] == [t for t in held if t in ids[:100]]


def test_a_held_out_task_s_demonstrations_never_reach_training(tmp_path: Path) -> None:
    rows = [{"task_id": f"t{i % 4}", "messages": []} for i in range(12)]
    path = tmp_path / "demos.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    train, held = split_rows(path, {"t1", "t3"})
    assert {json.loads(line)["task_id"] for line in train} == {"t0", "t2"}
    assert {json.loads(line)["task_id"] for line in held} == {"t1", "t3"} and len(train) + len(held) == 12


def test_only_a_task_whose_prompt_leaves_room_for_an_answer_can_be_measured(tmp_path: Path) -> None:
    def record(task: str, prompt: int) -> dict[str, object]:
        messages = [{"role": "system", "content": "s" * prompt}, {"role": "user", "content": "do it"}]
        return {"task_id": task, "messages": [*messages, {"role": "assistant", "content": "done"}]}

    path = tmp_path / "demos.jsonl"
    rows = [record("short", 100), record("edge", HELD_OUT_MAX_PROMPT - 5), record("long", HELD_OUT_MAX_PROMPT)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert measurable(path) == {"short", "edge"}  # a tool list so long that 2,048 tokens hold no answer is not


def _learning(loss_after: float, score_after: float) -> Learning:
    before = {"score": 0.0, "pass_rate": 0.0, "trials": 4}
    after = {"score": score_after, "pass_rate": 0.25 if score_after else 0.0, "trials": 4}
    return Learning(40, 4, 4, 200, 8.2, loss_after, before, after, 300.0)


def test_the_summary_says_plainly_when_the_loss_did_not_fall_or_the_score_did_not_move() -> None:
    learnt = _learning(2.1, 0.4)
    assert learnt.loss_fell and learnt.as_json()["loss_fell"] is True
    text = "\n".join(learnt.lines())
    assert "held-out loss 8.200 -> 2.100" in text and "held-out score 0.000 -> 0.400" in text
    assert "did not" not in text
    flat = "\n".join(_learning(8.4, 0.0).lines())
    assert "the held-out loss did not fall: this student learnt nothing" in flat
    assert "the held-out score did not move" in flat and "bench/learning/bench_learn.py" in flat
