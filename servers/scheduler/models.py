"""Records of the scheduler service (cron jobs: what runs when, and the history of its runs).

A job runs its ``action`` on a cron schedule read in UTC while it is enabled; ``next_run_at`` is the next minute the
schedule fires (none while disabled). Each run is a record of ``runs``; the job keeps the outcome of its last one.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field

from coworkenv.servers.kit import Page, Record, SeedError, Table, Timestamp
from coworkenv.servers.scheduler.cron import CronError, parse

RunStatus = Literal["success", "failed", "running", "stopped", "skipped"]
Trigger = Literal["schedule", "manual"]


def _cron(value: str) -> str:
    try:
        parse(value)
    except CronError as exc:
        raise ValueError(str(exc)) from None
    return " ".join(value.split())


CronExpression = Annotated[str, AfterValidator(_cron)]
"""A cron schedule, five fields in UTC (see :mod:`coworkenv.servers.scheduler.cron`)."""


class Job(Record):
    """A scheduled job: what it runs, on which schedule, and how its last run went."""

    id: str = Field(description="The job's id. Example: 'JOB-2'")
    name: str = Field(min_length=1, description="Example: 'nightly-db-backup'")
    description: str = ""
    cron_expression: CronExpression = Field(description="When it runs, in UTC. Example: '0 2 * * *' (02:00 daily)")
    action: str = Field(description="What it runs. Example: 'pg_dump billing > /backup/billing.sql'")
    enabled: bool = True
    tags: list[str] = Field(default=[], description="Example: ['backup', 'database']")
    depends_on: list[str] = Field(default=[], description="Jobs whose output this one needs. Example: ['JOB-1']")
    created_by: str = Field(default="me", description="Who set it up. Example: 'ops_team'")
    last_run_at: Timestamp | None = None
    last_status: RunStatus | None = Field(default=None, description="How the last run ended. Example: 'failed'")
    last_error: str | None = Field(default=None, description="The last run's error, when it failed.")
    next_run_at: Timestamp | None = Field(default=None, description="The next scheduled run; null while disabled.")
    disabled_reason: str | None = Field(default=None, description="Why it was disabled. Example: 'Disk full'")
    custom_fields: dict[str, Any] = Field(
        default={}, description="Other attributes as the source system keeps them. Example: {'owner': 'ops'}"
    )
    created_at: Timestamp | None = None
    updated_at: Timestamp | None = None


class Run(Record):
    """One run of a job."""

    id: str = Field(description="The run's id. Example: 'RUN-2003'")
    job_id: str = Field(description="The job that ran. Example: 'JOB-2'")
    started_at: Timestamp
    status: RunStatus
    trigger: Trigger = Field(default="schedule", description="schedule, or manual (run_job)")
    duration_seconds: int | None = Field(default=None, ge=0, description="Example: 342")
    error: str | None = Field(default=None, description="What went wrong. Example: 'disk full on /backup'")
    notes: str = ""
    custom_fields: dict[str, Any] = Field(
        default={}, description="Other attributes as the source system keeps them. Example: {'host': 'db-2'}"
    )


TABLES = (
    Table("jobs", Job, "JOB-", indexes=(("name",),), volatile=("updated_at",)),
    Table("runs", Run, "RUN-", indexes=(("job_id", "started_at"),), refs=(("job_id", "jobs"),)),
)


def check_seed(seed: dict[str, list[dict[str, Any]]]) -> None:
    """Rules across records: a job depends only on jobs that exist, never on itself."""
    ids = {job["id"] for job in seed.get("jobs", [])}
    for index, job in enumerate(seed.get("jobs", [])):
        for other in job["depends_on"]:
            if other not in ids or other == job["id"]:
                raise SeedError(
                    f"scheduler.jobs[{index}] field 'depends_on': {other!r} is not the id of another job in jobs"
                )


class JobDetail(Job):
    recent_runs: list[Run] = Field(description="The last 10 runs, newest first.")
    dependents: list[str] = Field(description="The jobs that depend on this one.")


class JobPage(Page[Job]):
    pass


class RunPage(Page[Run]):
    pass
