"""Scheduled jobs: a report job fails because the disk is full, since the cleanup job that frees it was paused for a
maintenance window and never turned back on. Re-enable that job (and only it), and say which one it was."""

from __future__ import annotations

from dataclasses import dataclass

from coworkenv.synth.generate.families.kit.base import CROSS, DISTRACTORS, REPORT, Family, Json, TaskBuilder, rx
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family

FAILING = (
    ("weekly-ops-report", "the weekly ops report", "0 7 * * 1", "python reports/weekly_ops.py", 7),
    ("nightly-export", "the nightly data export", "0 1 * * *", "python etl/export.py --all", 1),
    ("invoice-pdf-render", "the invoice PDF job", "0 5 * * *", "python billing/render_pdfs.py", 1),
)
CLEANUP = (
    ("log-cleanup", "Deletes application logs older than 14 days from {disk}.", "find {disk}/logs -mtime +14 -delete"),
    ("tmp-purge", "Empties the scratch folder on {disk}.", "rm -rf {disk}/tmp/*"),
    ("archive-rotation", "Moves old archives off {disk} to cold storage.", "python ops/rotate_archives.py {disk}"),
)
RETIRED = (
    ("legacy-backup", "Old backup to the retired NAS.", "rsync -a /srv nas01:/backup"),
    ("ftp-sync", "Syncs exports to the old partner FTP.", "python etl/ftp_sync.py"),
    ("beta-metrics", "Collected metrics for the closed beta.", "python metrics/beta.py"),
)
OTHER = (
    ("crm-warehouse-sync", "*/30 * * * *", "python etl/crm_sync.py"),
    ("stale-ticket-digest", "0 8 * * 1-5", "python support/stale_digest.py"),
    ("nightly-db-backup", "0 2 * * *", "backup-db --all"),
    ("cache-warmup", "*/15 * * * *", "python web/warm_cache.py"),
    ("usage-rollup", "0 4 * * *", "python billing/usage_rollup.py"),
)


@dataclass
class _Case:
    """The disk that filled up, the job failing on it (its name, how the user calls it), the paused cleanup job."""

    disk: str
    job_name: str
    spoken: str
    failing: Json
    cleanup: Json
    clean_name: str


@register_family
class DiskFullCleanupJob(Family):
    name = "scheduler-disk-full-cleanup"
    scenario = "fixing failing scheduled jobs"
    capabilities = (CROSS, DISTRACTORS, REPORT)
    service_options = (("scheduler",),)
    distractors = (
        "a job disabled on purpose (retired); (medium+) another failing job whose error has another cause (an "
        "expired API key); background jobs that run fine"
    )

    def build(self, b: TaskBuilder) -> str:
        case = self._seed(b)
        self._reference(b, case)
        self._checks(b, case.cleanup, case.clean_name)
        spoken = case.spoken
        ask = Ask(
            steps=(
                b.pick(
                    f"find out why {spoken} keeps failing",
                    f"look into the failures of {spoken}",
                    f"figure out what is breaking {spoken}",
                ),
                b.pick(
                    "fix what you can in the scheduler", "fix the cause if it's a job setting", "sort out the cause"
                ),
            ),
            avoid=b.pick("Don't delete any jobs.", "Leave jobs that were switched off on purpose alone.", ""),
            report=b.pick("tell me which job was behind it", "let me know what the cause was"),
            topic=f"{spoken} failing",
        )
        return compose(b, ask)

    @staticmethod
    def _seed(b: TaskBuilder) -> _Case:
        """The failing job and its runs, the cleanup job paused for maintenance, a retired job, (medium+) a job
        failing for another reason, and jobs that run fine."""
        disk = b.pick("/data", "/srv", "/var/app")
        job_name, spoken, cron, action, every = b.pick(*FAILING)
        clean_name, clean_desc, clean_action = b.pick(*CLEANUP)
        jobs = _Jobs(b)
        paused = b.rng.randint(12, 20)
        error = f"No space left on device: {disk} is 100% full, cannot write the output"
        failing = jobs.job(job_name, cron, action, last_status="failed", last_error=error, last_run_at=b.ago(days=0.2))
        jobs.runs(failing["id"], "failed", [0.2, 0.2 + every], error)
        jobs.runs(failing["id"], "success", [0.2 + every * 2])
        cleanup = jobs.job(
            clean_name,
            "0 3 * * *",
            clean_action.format(disk=disk),
            description=clean_desc.format(disk=disk),
            enabled=False,
            disabled_reason=f"Paused for the maintenance window of {b.spoken_day(b.ago(days=paused))}",
            last_status="success",
            last_run_at=b.ago(days=paused + 0.5),
            updated_at=b.ago(days=paused),
        )
        jobs.runs(cleanup["id"], "success", [paused + 0.5, paused + 1.5])
        old_name, old_desc, old_action = b.pick(*RETIRED)
        b.distract(jobs.job(old_name, "0 4 * * *", old_action, description=old_desc, enabled=False,
                            disabled_reason="Retired for good")["id"])  # fmt: skip
        if b.difficulty != "easy":
            key_error = "401 Unauthorized from the supplier API: API key expired"
            broken = jobs.job("supplier-stock-sync", "0 */4 * * *", "python inventory/supplier_sync.py",
                              last_status="failed", last_error=key_error, last_run_at=b.ago(days=0.1))  # fmt: skip
            jobs.runs(broken["id"], "failed", [0.1, 0.27], key_error)
            b.distract(broken["id"])
        for name, other_cron, other_action in b.rng.sample(OTHER, min(b.n_filler(), len(OTHER))):
            done = jobs.job(name, other_cron, other_action, last_status="success", last_run_at=b.ago(days=0.3))
            jobs.runs(done["id"], "success", [0.3])
        return _Case(disk, job_name, spoken, failing, cleanup, clean_name)

    @staticmethod
    def _reference(b: TaskBuilder, case: _Case) -> None:
        disk, clean_name, cleanup = case.disk, case.clean_name, case.cleanup
        b.call("scheduler", "list_jobs", "failed", status=["failed"])
        b.call("scheduler", "list_job_runs", job_id=case.failing["id"])
        b.call("scheduler", "list_jobs", "off", enabled=False)
        b.call("scheduler", "enable_job", job_id=cleanup["id"])
        b.say(f"{case.job_name} fails because {disk} is full: {clean_name} was paused and never re-enabled. "
              "I enabled it.")  # fmt: skip
        with b.alternative():  # the disk's jobs found by text, switched on with update_job
            b.call("scheduler", "get_job", job_id=case.failing["id"])
            b.call("scheduler", "list_jobs", "disk", query=disk)
            b.call("scheduler", "update_job", job_id=cleanup["id"], enabled=True)
            b.say(f"The cleanup job {clean_name} was disabled, so {disk} filled up. It is enabled again.")

    @staticmethod
    def _checks(b: TaskBuilder, cleanup: Json, clean_name: str) -> None:
        b.check(
            "cleanup_enabled",
            0.4,
            f"The cleanup job {clean_name} is enabled again.",
            {
                "kind": "record_exists",
                "service": "scheduler",
                "table": "jobs",
                "where": {"id": cleanup["id"], "enabled": True},
            },
        )
        b.check(
            "others_left_alone",
            0.3,
            "The job retired on purpose and the job failing for another reason are left as they were.",
            {"kind": "records_unchanged", "service": "scheduler", "table": "jobs", "ids": list(b.distractors)},
            ("cleanup_enabled",),
        )
        b.check(
            "named_the_cause",
            0.3,
            f"The reply names {clean_name} as the job behind the failures.",
            {"kind": "said_matches", "pattern": rx(clean_name)},
            ("cleanup_enabled",),
        )
        b.forbid_call(
            "deleted_a_job",
            "Deleting a job, which the user asked not to do (disable one instead).",
            "scheduler",
            "delete_job",
            {},
            {"job_id": b.distractors[0]},
        )


class _Jobs:
    """The jobs and runs of one task, with ids counted up from a drawn start."""

    def __init__(self, b: TaskBuilder) -> None:
        self.b = b
        self.serial = iter(range(b.rng.randrange(10, 90), 10_000))

    def job(self, name: str, cron: str, action: str, **fields: object) -> Json:
        record: Json = {
            "id": f"JOB-{next(self.serial)}",
            "name": name,
            "cron_expression": cron,
            "action": action,
            "created_by": "ops_team",
            "created_at": self.b.ago(days=200),
            "updated_at": self.b.ago(days=30),
            **fields,
        }
        return self.b.add("scheduler", "jobs", record)

    def runs(self, job_id: str, status: str, days: list[float], error: str | None = None) -> None:
        for day in days:
            run = {"id": f"RUN-{next(self.serial) * 10}", "job_id": job_id, "started_at": self.b.ago(days=day)}
            extra = {"status": status, "duration_seconds": 12 if error else 140, "error": error}
            self.b.add("scheduler", "runs", run | extra)
