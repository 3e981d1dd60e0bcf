"""Recoveries from a tool error, inserted into exported demonstrations (``coworkenv export --recoveries F``).

A student that has only seen flawless demonstrations has never read an error result, and produces junk when it
meets one. Into a fraction ``F`` of the demonstrations (chosen per task and trial from ``--recovery-seed``, so
the choice does not depend on the order of the rows) this inserts, before one tool call, a wrong version of that
call and the error the real service answers it with; the right call follows, as recorded. The wrong call is one
of the mistakes a small model makes:

- ``unknown_id``: an id argument (``ticket_id``, ``assignee_id``, ...) half-copied: one digit or letter
  changed, so the id names no record of the task's seed;
- ``missing_argument``: a required argument left out.

The error text is never made up: the task's environment is seeded afresh, the demonstration's earlier tool calls
are replayed through the direct door (the one the harness's episodes use, with the same validation and errors),
and the wrong call is run there; a candidate whose call does not come back as an error is not used. The tool
message is written as the ``hf:`` agent reads an error result (:func:`~coworkenv.harness.agents.hf_agent.tool_content`).
Only demonstrations whose task is known can get one (the export's ``--tasks`` or the run's task files).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from coworkenv.harness.agents.hf_agent import tool_content
from coworkenv.harness.messages import Message, split_name
from coworkenv.servers.kit import Environment
from coworkenv.servers.registry import get_service
from coworkenv.synth.contract.task import Task

KINDS = ("unknown_id", "missing_argument")
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True)
class Mistake:
    """A wrong version of the demonstration's call ``call`` (index among its tool calls) and what it changes."""

    call: int
    kind: str
    arguments: dict[str, Any]
    what: str


def chosen(task_id: str, trial: int, fraction: float, seed: int) -> random.Random | None:
    """The row's own random stream when it is one of the ``fraction`` that get a recovery, else None."""
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"recoveries must be a fraction between 0 and 1, not {fraction!r}")
    rng = random.Random(f"{seed}:{task_id}:{trial}")
    return rng if rng.random() < fraction else None


def half_copied(value: str, rng: random.Random) -> str:
    """``value`` with one character changed (a digit for a digit, a letter for a letter) after its prefix."""
    start = value.find("_") + 1
    spots = [i for i in range(start, len(value)) if value[i].isalnum()]
    if not spots:
        return value + "x"
    i = rng.choice(spots)
    pool = "0123456789" if value[i].isdigit() else _LETTERS
    return value[:i] + rng.choice([c for c in pool if c != value[i].lower()]) + value[i + 1 :]


def _calls(messages: list[dict[str, Any]]) -> Iterator[tuple[int, dict[str, Any]]]:
    for i, m in enumerate(messages):
        for call in m.get("tool_calls") or []:
            yield i, call


def candidates(messages: list[dict[str, Any]], seed_text: str, rng: random.Random) -> Iterator[Mistake]:
    """Wrong versions of the demonstration's calls, in the order to try them: a kind drawn by ``rng`` first."""
    by_kind: dict[str, list[Mistake]] = {k: [] for k in KINDS}
    for n, (_, call) in enumerate(_calls(messages)):
        arguments = dict(call["function"]["arguments"])
        service, tool = split_name(call["function"]["name"])
        for name, value in arguments.items():
            if (name == "id" or name.endswith("_id")) and isinstance(value, str) and value:
                for _ in range(5):
                    wrong = half_copied(value, rng)
                    if json.dumps(wrong) not in seed_text:
                        by_kind["unknown_id"].append(Mistake(n, "unknown_id", {**arguments, name: wrong}, name))
                        break
        spec = get_service(service).tools_by_name.get(tool)
        for name in (spec.input_schema().get("required") or []) if spec else []:
            if name in arguments:
                rest = {k: v for k, v in arguments.items() if k != name}
                by_kind["missing_argument"].append(Mistake(n, "missing_argument", rest, name))
    first = "unknown_id" if rng.random() < 0.7 else "missing_argument"
    for kind in (first, *(k for k in KINDS if k != first)):
        pool = by_kind[kind]
        rng.shuffle(pool)
        yield from pool


def _error_of(task: Task, messages: list[dict[str, Any]], mistake: Mistake) -> str | None:
    """The error text the task's services answer ``mistake`` with after the calls of the turns before the one
    it goes in front of (None if it is not an error there)."""
    calls = list(_calls(messages))
    at, wrong = calls[mistake.call]
    with Environment.create(task.seeds(), now=task.now) as env:
        for turn, call in calls:
            if turn >= at:
                break
            service, tool = split_name(call["function"]["name"])
            env.state(service).call_now(tool, dict(call["function"]["arguments"]), "agent")
        service, tool = split_name(wrong["function"]["name"])
        result = env.state(service).call_now(tool, mistake.arguments, "agent")
    return result.text if result.is_error else None


def with_recovery(
    task: Task, messages: list[dict[str, Any]], rng: random.Random
) -> tuple[list[dict[str, Any]], str] | None:
    """``messages`` with one wrong call and its real error inserted before the turn of the call it corrupts,
    and the mistake's kind; None when no candidate comes back as an error."""
    seed_text = json.dumps(task.initial_records)
    for tries, mistake in enumerate(candidates(messages, seed_text, rng)):
        if tries >= 8:
            break
        text = _error_of(task, messages, mistake)
        if text is None:
            continue
        at, call = list(_calls(messages))[mistake.call]
        wrong_id = f"{call.get('id') or 'call'}_err"
        name = call["function"]["name"]
        wrong = {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": wrong_id, "type": "function", "function": {"name": name, "arguments": mistake.arguments}}
            ],
        }
        error = Message(role="tool", content=text, tool_call_id=wrong_id, name=name, is_error=True)
        result = {"role": "tool", "tool_call_id": wrong_id, "content": tool_content(error)}
        return [*messages[:at], wrong, result, *messages[at:]], mistake.kind
    return None
