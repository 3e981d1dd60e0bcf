"""Export runs as Inspect AI eval logs (``pip install 'coworkenv[export]'``): one ``.eval`` file per run and
agent, which ``inspect view --log-dir DIR`` opens and ``inspect_ai.log.read_eval_log`` reads.

Each (task, trial) is a sample (``id`` the task id, ``epoch`` the trial + 1): the request as input, the
conversation as messages (tool calls with their arguments, tool results, errors), the agent's last words as
output, token use, time, and one score ``coworkenv`` whose value is the trial's score and whose metadata holds
completion, safety, passed, every check (description, weight, pass/fail, expected, found), the forbidden
actions and the unexplained state changes. Scenario, difficulty, status and the user simulator's events are
sample metadata. The log's results carry the mean score, the pass rate and the mean completion and safety.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from statistics import mean
from typing import Any

from coworkenv.harness.agents.registry import model_name as backend_model
from coworkenv.harness.filenames import fit_name
from coworkenv.harness.messages import Message
from coworkenv.harness.report.data import Run, load_runs
from coworkenv.harness.trajectory import Trajectory
from coworkenv.servers.kit.atomic import atomic_path

SCORER = "coworkenv"
INSTALL = "pip install 'coworkenv[export]' (Inspect AI)"


def _inspect() -> Any:
    try:
        import inspect_ai.log as log
    except ImportError as exc:
        raise RuntimeError(f"the Inspect export needs inspect_ai: {INSTALL}") from exc
    return log


def model_name(agent: str) -> str:
    """Inspect names models ``provider/model``, as each agent backend's record says (``anthropic:claude-x`` →
    ``anthropic/claude-x``, ``openai:m@url`` → ``openai/m``); agents that are not models → ``coworkenv/<spec>``."""
    return backend_model(agent) or f"coworkenv/{agent}"


def messages(record: Trajectory, model: str) -> list[Any]:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser
    from inspect_ai.tool import ToolCall, ToolCallError

    out: list[Any] = []
    for m in record.messages:
        if m.role == "system":
            out.append(ChatMessageSystem(content=m.content))
        elif m.role == "user":
            out.append(ChatMessageUser(content=m.content))
        elif m.role == "assistant":
            calls = [
                ToolCall(id=c.id, function=c.name, arguments=dict(c.arguments), type="function") for c in m.tool_calls
            ]
            out.append(ChatMessageAssistant(content=m.content, tool_calls=calls or None, model=model))
        else:
            error = ToolCallError("unknown", m.content) if m.is_error else None
            out.append(ChatMessageTool(content=m.content, tool_call_id=m.tool_call_id, function=m.name, error=error))
    return out


def _last_words(items: list[Message]) -> str:
    return next((m.content for m in reversed(items) if m.role == "assistant" and m.content), "")


def score(record: Trajectory) -> Any:
    from inspect_ai.scorer import Score

    grade = record.grade
    if grade is None:
        return Score(value=0.0, explanation=f"not graded: {record.status}", metadata={"status": record.status})
    metadata = {
        "completion": grade.completion,
        "safety": grade.safety,
        "passed": grade.passed,
        "penalty": grade.penalty,
        "checks": [c.model_dump(mode="json") for c in grade.checks],
        "forbidden": [f.model_dump(mode="json") for f in grade.forbidden],
        "unexplained": [u.model_dump(mode="json") for u in grade.unexplained],
    }
    return Score(value=grade.score, answer="\n".join(record.said), explanation=grade.report(), metadata=metadata)


def sample(record: Trajectory) -> Any:
    from inspect_ai.log import EvalError, EvalSample
    from inspect_ai.model import ModelOutput, ModelUsage

    model = model_name(record.agent)
    u = record.usage
    usage = ModelUsage(
        input_tokens=u.input_tokens,
        output_tokens=u.output_tokens,
        total_tokens=u.input_tokens + u.output_tokens,
        input_tokens_cache_read=u.cache_read_tokens,
        input_tokens_cache_write=u.cache_write_tokens,
    )
    metadata = {
        "scenario": record.scenario,
        "difficulty": record.difficulty,
        "safety_task": record.safety,
        "services": record.services,
        "capabilities": record.capabilities,
        "status": record.status,
        "stop_reason": record.stop_reason,
        "tool_calls": len(record.steps),
        "turns": len(record.turns),
        "attempts": record.attempts,
        "user_events": [e.model_dump(mode="json") for e in record.user_events],
    }
    error = None
    if record.status in ("agent_error", "infra_error") and record.error:
        error = EvalError(message=record.error, traceback="", traceback_ansi="")
    checks = record.grade.checks if record.grade else []
    return EvalSample(
        id=record.task_id,
        epoch=record.trial + 1,
        input=record.request,
        target=[c.description for c in checks] or "",
        messages=messages(record, model),
        output=ModelOutput.from_content(model, _last_words(record.messages)),
        scores={SCORER: score(record)},
        metadata=metadata,
        model_usage={model: usage},
        total_time=round(record.wall_s, 3),
        started_at=record.started_at or None,
        error=error,
    )


def eval_log(run: Run, created: str | None = None) -> Any:
    """The Inspect ``EvalLog`` of one run (one agent)."""
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalMetric, EvalResults, EvalScore, EvalSpec

    records = sorted(run.records, key=lambda r: (r.task_id, r.trial))
    model = model_name(run.records[0].agent)
    scored = [r for r in records if r.scored]
    task_ids = sorted({r.task_id for r in records})

    def metric(name: str, values: list[float]) -> EvalMetric:
        return EvalMetric(name=name, value=round(mean(values), 6) if values else 0.0)

    metrics = {
        "mean": metric("mean", [r.score for r in scored]),
        "pass_rate": metric("pass_rate", [float(r.passed) for r in scored]),
        "completion": metric("completion", [r.completion for r in scored]),
        "safety": metric("safety", [r.grade.safety for r in scored if r.grade]),
    }
    scores = [EvalScore(name=SCORER, scorer=SCORER, scored_samples=len(scored), metrics=metrics)]
    spec = EvalSpec(
        created=created or datetime.now(UTC).isoformat(timespec="seconds"),
        task=f"coworkenv/{run.path.name or 'run'}",
        task_id=run.path.name or "run",
        dataset=EvalDataset(name="coworkenv tasks", samples=len(task_ids), sample_ids=list(task_ids)),
        model=model,
        config=EvalConfig(epochs=max((r.trial for r in records), default=0) + 1),
        metadata={"agent": run.records[0].agent, "source": str(run.path)},
    )
    results = EvalResults(total_samples=len(records), completed_samples=len(scored), scores=scores)
    return EvalLog(status="success", eval=spec, results=results, samples=[sample(r) for r in records])


def _created(path: Path) -> str | None:
    meta = path / "run.json"
    if meta.is_file():
        value = json.loads(meta.read_text(encoding="utf-8")).get("created_at")
        return str(value) if value else None
    return None


def export_inspect(sources: list[Path], out: Path) -> list[Path]:
    """Write one Inspect ``.eval`` log per run and agent of ``sources`` into the folder ``out``; their paths."""
    log = _inspect()
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for i, run in enumerate(load_runs(sources)):
        if not run.records:
            continue
        name = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in run.label)
        path = out / fit_name(name, f"{i:02d}-", ".eval")
        with atomic_path(path) as tmp:  # a kill leaves no half-written log
            log.write_eval_log(eval_log(run, _created(run.path)), tmp, format="eval")
        written.append(path)
    return written
