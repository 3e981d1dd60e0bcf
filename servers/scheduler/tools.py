"""Tools of the scheduler service. Names follow cron-job schedulers (crontab, Kubernetes CronJobs, Cloud Scheduler):
list and read jobs and their run history, create, update, enable, disable, run now and delete jobs."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field

from coworkenv.servers.kit import PageSize, PageToken, ServiceError, ToolContext, Where, format_time, tool
from coworkenv.servers.scheduler.cron import next_fire
from coworkenv.servers.scheduler.models import (
    CronExpression,
    Job,
    JobDetail,
    JobPage,
    Run,
    RunPage,
    RunStatus,
)

JobId = Annotated[str, Field(description="The job's id. Example: 'JOB-2'")]
Cron = Annotated[
    CronExpression,
    Field(max_length=200, description="Five cron fields in UTC: minute hour day month weekday. Example: '0 2 * * *'"),
]
Action = Annotated[str, Field(min_length=1, max_length=2_000, description="What it runs. Example: 'python sync.py'")]
DependsOn = Annotated[list[str], Field(description="Ids of jobs this one needs to have run. Example: ['JOB-1']")]
_FIND = "Use list_jobs to find the job's id."


def _job(ctx: ToolContext, job_id: str) -> dict[str, Any]:
    return ctx.fetch("jobs", job_id, "job", _FIND)


def _next_run(ctx: ToolContext, cron: str, enabled: bool) -> str | None:
    fire = next_fire(cron, ctx.now) if enabled else None
    return None if fire is None else format_time(fire)


def _check_depends(ctx: ToolContext, job_id: str | None, depends_on: list[str]) -> list[str]:
    for other in depends_on:
        if other == job_id:
            raise ServiceError(f"Job {job_id} cannot depend on itself.", "Remove it from depends_on.")
        ctx.fetch("jobs", other, "job", _FIND)
    return sorted(set(depends_on))


def _dependents(ctx: ToolContext, job_id: str) -> list[str]:
    where = Where().has_tag("jobs.depends_on", job_id)
    return [r["id"] for r in ctx.table("jobs").select(where.sql, where.params, order_by="id")]


def _save(ctx: ToolContext, job_id: str, changes: dict[str, Any]) -> Job:
    return Job.model_validate(ctx.table("jobs").update(job_id, {**changes, "updated_at": ctx.now_iso()}))


@tool(read_only=True)
def list_jobs(
    ctx: ToolContext,
    query: Annotated[
        str | None, Field(description="Text in the name, description or action. Example: 'backup'")
    ] = None,
    status: Annotated[
        list[RunStatus] | None, Field(description="Only jobs whose last run ended so. Example: ['failed']")
    ] = None,
    enabled: Annotated[bool | None, Field(description="true: only enabled jobs; false: only disabled ones")] = None,
    tag: Annotated[str | None, Field(description="Only jobs carrying this tag. Example: 'finance'")] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> JobPage:
    """List scheduled jobs by name, with their schedule, whether they are enabled and how their last run went."""
    where = (
        Where()
        .text(["name", "description", "action"], query)
        .any_of("last_status", status)
        .eq("enabled", enabled)
        .has_tag("jobs.tags", tag)
    )
    rows, total, nxt = ctx.paginate("jobs", where.sql, where.params, "name, id", page_size, page_token)
    return JobPage(items=[Job.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def get_job(ctx: ToolContext, job_id: JobId) -> JobDetail:
    """Read one job in full, with its last 10 runs and the jobs that depend on it."""
    row = _job(ctx, job_id)
    runs = ctx.table("runs").select("job_id = ?", [job_id], order_by="started_at DESC, id DESC", limit=10)
    return JobDetail.model_validate({**row, "recent_runs": runs, "dependents": _dependents(ctx, job_id)})


@tool(read_only=True)
def list_job_runs(
    ctx: ToolContext,
    job_id: JobId,
    status: Annotated[list[RunStatus] | None, Field(description="Only runs that ended so. Example: ['failed']")] = None,
    page_size: PageSize = 20,
    page_token: PageToken = None,
) -> RunPage:
    """A job's run history, newest first: when each run started, how it ended, how long it took, its error."""
    _job(ctx, job_id)
    where = Where().eq("job_id", job_id).any_of("status", status)
    order = "started_at DESC, id DESC"
    rows, total, nxt = ctx.paginate("runs", where.sql, where.params, order, page_size, page_token)
    return RunPage(items=[Run.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool()
def create_job(
    ctx: ToolContext,
    name: Annotated[str, Field(min_length=1, max_length=200, description="Example: 'weekly-report'")],
    cron_expression: Cron,
    action: Action,
    description: Annotated[str, Field(max_length=2_000, description="What it is for.")] = "",
    enabled: Annotated[bool, Field(description="false: create it disabled")] = True,
    tags: Annotated[list[str], Field(description="Example: ['report']")] = [],  # noqa: B006
    depends_on: DependsOn = [],  # noqa: B006
) -> Job:
    """Schedule a new job; returns it with its id and next run time."""
    now = ctx.now_iso()
    row = {
        "id": ctx.new_id("jobs"),
        "name": name,
        "description": description,
        "cron_expression": cron_expression,
        "action": action,
        "enabled": enabled,
        "tags": sorted(set(tags)),
        "depends_on": _check_depends(ctx, None, depends_on),
        "next_run_at": _next_run(ctx, cron_expression, enabled),
        "created_at": now,
        "updated_at": now,
    }
    return Job.model_validate(ctx.table("jobs").insert(row))


@tool(idempotent=True)
def update_job(
    ctx: ToolContext,
    job_id: JobId,
    name: Annotated[str | None, Field(min_length=1, max_length=200, description="New name")] = None,
    cron_expression: Annotated[CronExpression | None, Field(max_length=200, description="New schedule (UTC)")] = None,
    action: Annotated[str | None, Field(min_length=1, max_length=2_000, description="New action to run")] = None,
    description: Annotated[str | None, Field(max_length=2_000, description="New description")] = None,
    enabled: Annotated[
        bool | None, Field(description="true to enable, false to disable (as enable/disable_job)")
    ] = None,
    tags: Annotated[list[str] | None, Field(description="Replaces the tags. Example: ['backup']")] = None,
    depends_on: Annotated[list[str] | None, Field(description="Replaces the dependencies. Example: ['JOB-1']")] = None,
) -> Job:
    """Change a job. Omitted fields stay as they are; a new schedule moves the next run."""
    row = _job(ctx, job_id)
    given: dict[str, Any] = {
        "name": name,
        "cron_expression": cron_expression,
        "action": action,
        "description": description,
        "enabled": enabled,
        "tags": None if tags is None else sorted(set(tags)),
        "depends_on": None if depends_on is None else _check_depends(ctx, job_id, depends_on),
    }
    changes = {k: v for k, v in given.items() if v is not None and v != row.get(k)}
    if not changes:
        return Job.model_validate(row)
    merged = {**row, **changes}
    if "cron_expression" in changes or "enabled" in changes:
        changes["next_run_at"] = _next_run(ctx, merged["cron_expression"], merged["enabled"])
    if changes.get("enabled") is True:
        changes["disabled_reason"] = None
    return _save(ctx, job_id, changes)


@tool(idempotent=True)
def enable_job(ctx: ToolContext, job_id: JobId) -> Job:
    """Turn a disabled job back on: it runs again from its next scheduled time."""
    row = _job(ctx, job_id)
    if row["enabled"]:
        raise ServiceError(f"Job {job_id} is already enabled.", f"Its next run is at {row['next_run_at']}.")
    changes = {"enabled": True, "disabled_reason": None, "next_run_at": _next_run(ctx, row["cron_expression"], True)}
    return _save(ctx, job_id, changes)


@tool(idempotent=True, destructive=True)
def disable_job(
    ctx: ToolContext,
    job_id: JobId,
    reason: Annotated[str, Field(min_length=1, max_length=2_000, description="Why. Example: 'Disk full; see INC-7'")],
) -> Job:
    """Pause a job: it does not run until enabled again. Jobs that depend on it stop getting its output."""
    row = _job(ctx, job_id)
    if not row["enabled"]:
        raise ServiceError(f"Job {job_id} is already disabled ({row['disabled_reason'] or 'no reason given'}).")
    return _save(ctx, job_id, {"enabled": False, "disabled_reason": reason, "next_run_at": None})


@tool()
def run_job(ctx: ToolContext, job_id: JobId) -> Run:
    """Start a run of a job now, outside its schedule (its action really runs). Returns the run, status 'running'."""
    row = _job(ctx, job_id)
    if row["last_status"] == "running":
        raise ServiceError(f"Job {job_id} is running already (since {row['last_run_at']}).", "Wait for it to end.")
    now = ctx.now_iso()
    run = ctx.table("runs").insert(
        {"id": ctx.new_id("runs"), "job_id": job_id, "started_at": now, "status": "running", "trigger": "manual"}
    )
    _save(ctx, job_id, {"last_run_at": now, "last_status": "running", "last_error": None})
    return Run.model_validate(run)


class DeletedJob(BaseModel):
    id: str = Field(description="The id of the job that was deleted.")
    deleted: bool = Field(description="True: the job and its run history no longer exist.")


@tool(destructive=True, idempotent=True)
def delete_job(ctx: ToolContext, job_id: JobId) -> DeletedJob:
    """Delete a job and its run history. This cannot be undone: to stop a job for now, disable_job it."""
    _job(ctx, job_id)
    dependents = _dependents(ctx, job_id)
    if dependents:
        raise ServiceError(
            f"{', '.join(dependents)} depend{'s' if len(dependents) == 1 else ''} on {job_id}.",
            "Remove it from their depends_on with update_job first, or disable the job instead.",
        )
    for run in ctx.table("runs").select("job_id = ?", [job_id]):
        ctx.table("runs").delete(run["id"])
    ctx.table("jobs").delete(job_id)
    return DeletedJob(id=job_id, deleted=True)


TOOLS = (
    list_jobs,
    get_job,
    list_job_runs,
    create_job,
    update_job,
    enable_job,
    disable_job,
    run_job,
    delete_job,
)
