"""The learning bench's data and measures: tasks of one family, replay demonstrations, the held-out score
through the harness (``hf:`` agent, greedy), the unseen-answer subset, and how an id is tokenised where it is
read and where it is written."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

import anyio

from coworkenv.harness.agents.builtin import ReplayAgent
from coworkenv.harness.agents.hf_agent import HFAgent
from coworkenv.harness.episode import EpisodeConfig, run_episode
from coworkenv.harness.export.chat import ExportParams, export_records
from coworkenv.harness.trajectory import Trajectory
from coworkenv.synth.contract.task import Task, ToolStep, is_ref
from coworkenv.synth.generate.families import get_family


def make_tasks(family: str, services: tuple[str, ...], difficulty: str, seeds: range) -> list[Task]:
    return [get_family(family).make(services, difficulty, seed) for seed in seeds]  # type: ignore[arg-type]


def family_services(families: list[str], services: str | None) -> dict[str, tuple[str, ...]]:
    """Each family's services: ``services`` (``a+b``) for a single family that names them, else the family's
    first service option."""
    if services and len(families) == 1:
        return {families[0]: tuple(services.split("+"))}
    return {name: get_family(name).service_options[0] for name in families}


def tasks_of(families: dict[str, tuple[str, ...]], difficulty: str, seeds: range) -> dict[str, list[Task]]:
    """``seeds`` of each family: the same seeds give the same tasks."""
    return {name: make_tasks(name, services, difficulty, seeds) for name, services in families.items()}


def by_family(result: dict[str, Any], groups: dict[str, list[Task]]) -> dict[str, dict[str, Any]]:
    """Score, pass rate and (safety families) the share of runs with a forbidden action, family by family."""
    out: dict[str, dict[str, Any]] = {}
    for name, tasks in groups.items():
        ids = [t.id for t in tasks]
        row: dict[str, Any] = {
            "tasks": len(ids),
            "score": round(sum(result["by_task"][i] for i in ids) / len(ids), 3),
            "pass_rate": round(sum(result["passed_by_task"][i] for i in ids) / len(ids), 3),
        }
        if get_family(name).safety:
            row["harmful_action_rate"] = round(sum(result["harmful_by_task"][i] for i in ids) / len(ids), 3)
        out[name] = row
    return out


def answers(task: Task) -> set[str]:
    """The string values the reference writes into its tool calls (``$ref`` values excluded)."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if is_ref(value):
            return
        if isinstance(value, str):
            found.add(value)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    for step in task.reference_solution:
        if isinstance(step, ToolStep):
            walk(step.arguments)
    return found


def family_tools(tasks: list[Task], forbidden: bool = False) -> tuple[str, ...]:
    """The tools the family's reference solutions call (``--family-tools``: the only ones the prompt lists) and,
    with ``forbidden``, those its forbidden actions name, so that the harmful move is one the model can make."""
    names = {f"{s.service}__{s.tool}" for t in tasks for s in t.reference_solution if isinstance(s, ToolStep)}
    if forbidden:
        for task in tasks:
            for action in task.forbidden_actions:
                service, tool = getattr(action.match, "service", None), getattr(action.match, "tool", None)
                if service and tool:
                    names.add(f"{service}__{tool}")
    return tuple(sorted(names))


def answers_seen(train: list[Task]) -> set[str]:
    """Every answer some training task writes."""
    return {a for t in train for a in answers(t)}


def unseen(train: list[Task], heldout: list[Task]) -> list[Task]:
    """Held-out tasks with an answer that no training task has (for ``tickets-triage-oncall``, the on-call
    engineer's id: the tasks pass only with it, so a model can score there only by copying it). Common answers
    (in ≥ 10 % of training tasks: enums) are never unseen; first names and ticket ids recur across 1,000 tasks
    and so do not count, the engineer's ``usr_first_last`` id mostly does not."""
    counts = Counter(a for t in train for a in answers(t))
    return [t for t in heldout if answers(t) - set(counts)]


def demonstrations(
    tasks: list[Task], out: Path, recoveries: float, tools: tuple[str, ...] | None = None
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    trajectories = [anyio.run(run_episode, task, ReplayAgent()) for task in tasks]
    params = ExportParams(min_score=1.0, template="compact", recoveries=recoveries, tool_names=tools)
    rows, dropped = export_records(trajectories, params, {t.id: t for t in tasks})
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return rows, {k: v for k, v in dropped.items() if v}


async def _episode(task: Task, agent: HFAgent, config: EpisodeConfig) -> Trajectory:
    return await run_episode(task, agent, config=config)


def evaluate(model_dir: Path, tasks: list[Task], args: argparse.Namespace) -> dict[str, Any]:
    agent = HFAgent(str(model_dir), template="compact", max_new_tokens=args.max_new_tokens, tools=args.tools)
    config = EpisodeConfig(max_turns=args.max_turns, max_tool_calls=args.max_turns * 2, wall_time_s=900)
    runs: list[Trajectory] = [anyio.run(_episode, t, agent, config) for t in tasks]
    return {
        "score": round(sum(r.score for r in runs) / len(runs), 3),
        "pass_rate": round(sum(r.passed for r in runs) / len(runs), 3),
        "tool_calls_ok": sum(1 for r in runs for s in r.steps if s.outcome == "ok"),
        "tool_calls": sum(len(r.steps) for r in runs),
        "by_task": {r.task_id: round(r.score, 3) for r in runs},
        "passed_by_task": {r.task_id: r.passed for r in runs},
        "harmful_by_task": {r.task_id: bool(r.grade and any(f.triggered for f in r.grade.forbidden)) for r in runs},
        "first_calls": [[f"{s.name}({json.dumps(s.arguments)})" for s in r.steps[:3]] for r in runs[:4]],
    }


def subset(result: dict[str, Any], tasks: list[Task]) -> dict[str, Any]:
    scores = [result["by_task"][t.id] for t in tasks]
    if not scores:
        return {"tasks": 0}
    return {"tasks": len(scores), "score": round(sum(scores) / len(scores), 3)}


def curve(losses: list[float], points: int = 10) -> list[float]:
    every = max(1, len(losses) // points)
    return [round(x, 3) for x in losses[::every]] + ([round(losses[-1], 3)] if losses else [])


def id_tokens(tokenizer: Any, record: dict[str, Any], value: str) -> dict[str, list[str]]:
    """The tokens that spell ``value`` where the record's chat text first shows it in a tool result and where
    an assistant's tool call writes it: the same tokens in both places is what makes it copyable."""
    text = str(tokenizer.apply_chat_template(record["messages"], tokenize=False))
    encoded = tokenizer(text, return_offsets_mapping=True, add_special_tokens=False)
    pieces = tokenizer.convert_ids_to_tokens(encoded["input_ids"])
    out: dict[str, list[str]] = {}
    for place, marker in (("result", "<tool_response>"), ("call", "<tool_call>")):
        at = text.find(value, text.find(marker))
        if at >= 0:
            end = at + len(value)
            spans = zip(pieces, encoded["offset_mapping"], strict=True)
            out[place] = [p for p, (s, e) in spans if s < end and at < e]
    return out
