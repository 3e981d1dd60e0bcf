"""Claw-Eval's ``scheduler`` mock on our ``scheduler`` service: list, read, create, update and delete cron jobs, and
read a job's run history.

Its fixtures are one list of jobs (``jobs.json``) keyed by ``job_id``, each with its ``execution_history`` (newest
first), which become our ``runs`` (``run_time``/``run_at`` → started_at, ``duration_seconds``/``duration_s``). Some
fixtures also carry ``schedule`` and ``status: enabled`` beside ``cron_expression`` and ``enabled``: those stay in
``custom_fields``, as the mock never reads them. A cron expression our parser refuses keeps its text in
``custom_fields`` and our column a schedule that never fires (``0 0 31 2 *``). The mock never moves its dates.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Annotated, Any

from pydantic import Field

from coworkenv.servers.claw_eval import ClawService, Fixtures, SeedTables
from coworkenv.servers.claw_eval._fixture_layout import (
    UNKNOWN_TIME,
    Column,
    Layout,
    audit_calls,
    checked,
    fixture_list,
    in_order,
    next_position,
    results,
    time_column,
    unique,
)
from coworkenv.servers.claw_eval.common import ClawHTTPError, ClawJson
from coworkenv.servers.kit.context import ToolContext
from coworkenv.servers.kit.tool import ToolSpec, tool
from coworkenv.servers.scheduler.models import Job, Run

NEVER = "0 0 31 2 *"
"""Our column's schedule for a job whose cron expression our parser refuses (30 February: it never fires)."""
HISTORY = "execution_history"

JOBS = Layout(
    Job,
    "job_id",
    {
        "name": Column("name"),
        "description": Column("description"),
        "cron_expression": Column("cron_expression"),
        "action": Column("action"),
        "enabled": Column("enabled"),
        "tags": Column("tags"),
        "depends_on": Column("depends_on"),
        "created_by": Column("created_by"),
        "last_run": time_column("last_run_at"),
        "last_status": Column("last_status"),
        "error": Column("last_error"),
        "error_message": Column("last_error"),
        "next_run": time_column("next_run_at"),
        "disabled_reason": Column("disabled_reason"),
        "last_disable_reason": Column("disabled_reason"),
        "created_at": time_column("created_at"),
    },
    fallback={"cron_expression": NEVER, "action": ""},
)
"""A job of the mock in our ``jobs`` (its ``execution_history`` in ``runs``; its ``name`` defaults to its id)."""
RUNS = Layout(
    Run,
    None,
    {
        "run_time": time_column("started_at"),
        "run_at": time_column("started_at"),
        "status": Column("status"),
        "duration_seconds": Column("duration_seconds"),
        "duration_s": Column("duration_seconds"),
        "error": Column("error"),
        "notes": Column("notes"),
    },
    fallback={"started_at": UNKNOWN_TIME, "status": "skipped"},
)
"""An entry of a job's ``execution_history`` in our ``runs``."""

ENDPOINTS = {
    "scheduler_list_jobs": "/scheduler/jobs",
    "scheduler_get_job": "/scheduler/jobs/get",
    "scheduler_create_job": "/scheduler/jobs/create",
    "scheduler_update_job": "/scheduler/jobs/update",
    "scheduler_delete_job": "/scheduler/jobs/delete",
    "scheduler_job_history": "/scheduler/jobs/history",
}
_LISTED = ("job_id", "name", "cron_expression", "enabled")
_LISTED_IF_ANY = ("last_status", "last_run", "next_run")

JobId = Annotated[str, Field(description="The job's id. Example: 'JOB-001'")]
Tags = Annotated[list[str] | None, Field(description="The job's tags. Example: ['backup', 'database']")]
Action = Annotated[str, Field(max_length=10_000, description="What it runs. Example: 'Back up the database'")]
Cron = Annotated[str, Field(description="Five cron fields. Example: '0 2 * * *' (02:00 every day)")]
Keep = Annotated[str | None, Field(description="Leave out to keep it as it is.")]


def _view(ctx: ToolContext, row: Mapping[str, Any]) -> dict[str, Any]:
    runs = in_order(ctx.table("runs").select("job_id = ?", [row["id"]]))
    return JOBS.claw(row, {HISTORY: [RUNS.claw(run) for run in runs]})


def list_jobs(
    ctx: ToolContext,
    status: Annotated[str | None, Field(description="Only jobs whose last run ended so. Example: 'failed'")] = None,
    enabled: Annotated[bool | None, Field(description="Only enabled (true) or disabled (false) jobs.")] = None,
    tag: Annotated[str | None, Field(description="Only jobs with this tag. Example: 'backup'")] = None,
) -> ClawJson:
    """List the scheduled jobs with their schedule, state and last and next run, optionally only those whose last
    run ended with ``status``, enabled or not, or with a tag. Returns {jobs, total}."""
    found = []
    try:
        for job in (_view(ctx, row) for row in in_order(ctx.table("jobs").select())):
            if status and job.get("last_status") != status:
                continue
            if enabled is not None and job.get("enabled") != enabled:
                continue
            if tag and tag not in job.get("tags", []):
                continue
            listed = {k: job[k] for k in _LISTED} | {k: job.get(k) for k in _LISTED_IF_ANY}
            found.append(listed | {"tags": job.get("tags", [])})
    except (KeyError, TypeError):  # a job without a key the mock's list reads, or tags that are not a list
        raise ClawHTTPError(500, "Internal Server Error") from None
    return ClawJson.of({"jobs": found, "total": len(found)})


def get_job(ctx: ToolContext, job_id: JobId) -> ClawJson:
    """One job in full, with its execution history (newest first). Returns the job, or {error}."""
    row = ctx.table("jobs").get(job_id)
    if row is None:
        return ClawJson.of({"error": f"Job {job_id} not found"})
    return ClawJson.of(_view(ctx, row))


def create_job(
    ctx: ToolContext,
    name: Annotated[str, Field(description="Example: 'weekly_report'")],
    cron_expression: Cron,
    action: Action,
    enabled: Annotated[bool, Field(description="Whether it runs on its schedule.")] = True,
    tags: Tags = None,
    created_by: Annotated[str | None, Field(description="Who sets it up. Example: 'ops_team'")] = None,
) -> ClawJson:
    """Schedule a new job. Returns {status: 'created', job}."""
    table = ctx.table("jobs")
    rows = table.select()
    number = len(rows) + 1
    while table.get(f"JOB-{number:03d}") is not None:  # the mock counts jobs; an id it would reuse is skipped
        number += 1
    job_id = f"JOB-{number:03d}"
    job: dict[str, Any] = {
        "job_id": job_id,
        "name": name,
        "cron_expression": cron_expression,
        "action": action,
        "enabled": enabled,
        "last_run": None,
        "next_run": None,
        "last_status": None,
        "created_by": created_by,
        "tags": tags or [],
        "created_at": ctx.now_iso(),
        HISTORY: [],
    }
    table.insert(JOBS.row(job, next_position(rows), skip=(HISTORY,), extra={"name": job_id}))
    return ClawJson.of({"status": "created", "job": job})


def update_job(
    ctx: ToolContext,
    job_id: JobId,
    enabled: Annotated[bool | None, Field(description="true to enable, false to disable.")] = None,
    cron_expression: Keep = None,
    name: Keep = None,
    action: Annotated[str | None, Field(max_length=10_000, description="Leave out to keep it as it is.")] = None,
    tags: Tags = None,
) -> ClawJson:
    """Change a job: enable or disable it, or change its schedule, name, action or tags (what is left out stays).
    Returns {status: 'updated', job}, or {error}."""
    row = ctx.table("jobs").get(job_id)
    if row is None:
        return ClawJson.of({"error": f"Job {job_id} not found"})
    given = {"enabled": enabled, "cron_expression": cron_expression, "name": name, "action": action, "tags": tags}
    values = {k: v for k, v in given.items() if v is not None}
    if not values:  # the mock answers with the job as it is
        return ClawJson.of({"status": "updated", "job": _view(ctx, row)})
    changes = JOBS.put(row, values)
    changes["updated_at"] = ctx.now_iso()
    updated = ctx.table("jobs").update(job_id, changes)
    return ClawJson.of({"status": "updated", "job": _view(ctx, updated)})


def delete_job(ctx: ToolContext, job_id: JobId) -> ClawJson:
    """Delete a job and its run history for good. Returns {status: 'deleted', job} as it was, or {error}."""
    row = ctx.table("jobs").get(job_id)
    if row is None:
        return ClawJson.of({"error": f"Job {job_id} not found"})
    removed = _view(ctx, row)
    runs = ctx.table("runs")
    for run in runs.select("job_id = ?", [job_id]):
        runs.delete(run["id"])
    ctx.table("jobs").delete(job_id)
    return ClawJson.of({"status": "deleted", "job": removed})


def job_history(
    ctx: ToolContext,
    job_id: JobId,
    limit: Annotated[int, Field(ge=-(10**6), le=10**6, description="The newest this many runs.")] = 10,
) -> ClawJson:
    """A job's runs, newest first: when, how it ended, how long, the error. Returns {job_id, history, total}."""
    row = ctx.table("jobs").get(job_id)
    if row is None:
        return ClawJson.of({"error": f"Job {job_id} not found"})
    history = _view(ctx, row).get(HISTORY, [])
    if not isinstance(history, list):
        raise ClawHTTPError(500, "Internal Server Error")
    return ClawJson.of({"job_id": job_id, "history": history[:limit], "total": len(history)})


TOOLS: tuple[ToolSpec, ...] = (
    tool(read_only=True, name="scheduler_list_jobs")(list_jobs),
    tool(read_only=True, name="scheduler_get_job")(get_job),
    tool(name="scheduler_create_job")(create_job),
    tool(idempotent=True, name="scheduler_update_job")(update_job),
    tool(destructive=True, name="scheduler_delete_job")(delete_job),
    tool(read_only=True, name="scheduler_job_history")(job_history),
)


def _depends_on(ids: set[str]) -> Column:
    def into(value: Any) -> Any:
        if not isinstance(value, list) or not all(isinstance(v, str) and v in ids for v in value):
            raise ValueError("not the ids of jobs of the fixture")
        return value

    return Column("depends_on", into)


def seed(fixtures: Fixtures) -> SeedTables:
    """The mock's job list as our ``jobs`` and their histories as our ``runs``, ids kept; ValueError naming the file
    and record when bad."""
    name, records = fixture_list(fixtures, "scheduler")
    ids = {r["job_id"] for r in records if isinstance(r.get("job_id"), str)}
    layout = replace(JOBS, columns={**JOBS.columns, "depends_on": _depends_on(ids)})
    jobs, runs = [], []
    for index, record in enumerate(records):
        where = f"scheduler fixture {name}: record {index}"
        found = record.get(HISTORY)
        kept = isinstance(found, list) and all(isinstance(h, dict) for h in found)
        history: list[dict[str, Any]] = found if kept and isinstance(found, list) else []
        try:
            row = layout.row(record, index, skip=(HISTORY,) if kept else ())
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        if row["id"] in row.get("depends_on", []):  # a job cannot wait for itself: the list stays as written
            row["custom_fields"]["depends_on"] = row.pop("depends_on")
        row.setdefault("name", row["id"])
        jobs.append(checked(Job, row, f"{where} ({row['id']})"))
        for at, entry in enumerate(history):
            run = RUNS.row(entry, at, record_id=f"RUN-{row['id']}-{at + 1}", extra={"job_id": row["id"]})
            runs.append(checked(Run, run, f"{where} ({row['id']}) {HISTORY}[{at}]"))
    unique(jobs, f"scheduler fixture {name}")
    return {"jobs": jobs, "runs": runs}


def audit_data(tables: Mapping[str, list[dict[str, Any]]], rows: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The mock's ``/audit``: ``{calls, created_jobs, updated_jobs, deleted_jobs}`` (each job as the call left it)."""
    return {
        "calls": audit_calls(rows, TOOLS, ENDPOINTS),
        "created_jobs": results(rows, ["scheduler_create_job"], "job"),
        "updated_jobs": results(rows, ["scheduler_update_job"], "job"),
        "deleted_jobs": results(rows, ["scheduler_delete_job"], "job"),
    }


SERVICE = ClawService("scheduler", "scheduler", TOOLS, seed, audit_data)
