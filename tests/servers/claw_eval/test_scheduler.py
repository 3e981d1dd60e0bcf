"""Claw-Eval's scheduler tools on our scheduler service: jobs seed with their ids and their histories as our runs,
the tools answer as its mock does, writes change our jobs, and ``/audit`` is rebuilt from our audit log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from coworkenv.servers.claw_eval import scheduler
from coworkenv.servers.claw_eval.scheduler import ENDPOINTS, NEVER, SERVICE
from tests.servers.claw_eval.ops_parity import (
    NOW,
    Mock,
    audit,
    call,
    claw_env,
    fixture_of,
    kit_checks,
    needs_claw_eval,
    real_fixtures,
    replay,
)

JOBS: list[dict[str, Any]] = [
    {
        "job_id": "JOB-001",
        "name": "daily_backup",
        "cron_expression": "0 2 * * *",
        "action": "Back up the database to /backup/db/",
        "enabled": True,
        "last_run": "2026-03-01T02:00:00+08:00",
        "next_run": "2026-03-02T02:00:00+08:00",
        "last_status": "success",
        "created_by": "admin",
        "tags": ["backup", "database"],
        "created_at": "2025-06-15T10:00:00Z",
        "execution_history": [
            {"run_time": "2026-03-01T02:00:00+08:00", "status": "success", "duration_seconds": 342},
            {"run_time": "2026-02-28T02:00:00+08:00", "status": "failed", "duration_seconds": 12, "error": "disk"},
        ],
    },
    {
        "job_id": "JOB-902",
        "name": "sla_alerts",
        "schedule": "*/15 * * * *",
        "status": "enabled",
        "cron_expression": "every quarter hour",
        "enabled": True,
        "last_status": "failed",
        "error_message": "SMTP timeout after 30s",
        "tags": ["sla"],
        "depends_on": ["JOB-001"],
        "execution_history": [{"run_at": "2026-03-01T08:00:00Z", "status": "failed", "duration_s": 30}],
    },
    {
        "job_id": "JOB-003",
        "name": "cleanup",
        "cron_expression": "0 3 * * *",
        "enabled": False,
        "last_status": None,
        "last_run": None,
        "tags": [],
    },
]
FIXTURES = {"jobs.json": JOBS}


def test_seeding_keeps_ids_and_makes_each_history_entry_a_run_of_ours() -> None:
    tables = scheduler.seed(FIXTURES)
    jobs = {row["id"]: row for row in tables["jobs"]}
    assert list(jobs) == ["JOB-001", "JOB-902", "JOB-003"]
    assert (jobs["JOB-001"]["last_run_at"], jobs["JOB-001"]["custom_fields"]["last_run"]) == (
        "2026-02-28T18:00:00Z",
        "2026-03-01T02:00:00+08:00",
    )
    sla = jobs["JOB-902"]
    assert (sla["cron_expression"], sla["custom_fields"]["cron_expression"]) == (NEVER, "every quarter hour")
    assert sla["custom_fields"]["schedule"] == "*/15 * * * *" and sla["depends_on"] == ["JOB-001"]
    assert (sla["last_error"], sla["action"]) == ("SMTP timeout after 30s", "")
    runs = [(r["id"], r["job_id"], r["status"], r["duration_seconds"]) for r in tables["runs"]]
    assert runs == [
        ("RUN-JOB-001-1", "JOB-001", "success", 342),
        ("RUN-JOB-001-2", "JOB-001", "failed", 12),
        ("RUN-JOB-902-1", "JOB-902", "failed", 30),
    ]


def test_get_and_history_give_each_job_as_the_fixture_has_it_and_list_a_summary() -> None:
    with claw_env(SERVICE, FIXTURES) as env:
        assert call(env, SERVICE, "scheduler_get_job", {"job_id": "JOB-902"}) == JOBS[1]
        history = call(env, SERVICE, "scheduler_job_history", {"job_id": "JOB-001", "limit": 1})
        assert history == {"job_id": "JOB-001", "history": JOBS[0]["execution_history"][:1], "total": 2}
        listed = call(env, SERVICE, "scheduler_list_jobs", {"enabled": True, "status": "failed"})
        assert listed["jobs"] == [
            {
                "job_id": "JOB-902",
                "name": "sla_alerts",
                "cron_expression": "every quarter hour",
                "enabled": True,
                "last_status": "failed",
                "last_run": None,
                "next_run": None,
                "tags": ["sla"],
            }
        ]
        assert call(env, SERVICE, "scheduler_get_job", {"job_id": "JOB-9"}) == {"error": "Job JOB-9 not found"}


def test_update_create_and_delete_change_our_jobs_and_show_in_the_audit() -> None:
    with claw_env(SERVICE, FIXTURES) as env:
        updated = call(env, SERVICE, "scheduler_update_job", {"job_id": "JOB-001", "enabled": False})
        assert updated["job"] == {**JOBS[0], "enabled": False}
        stored = env.state("scheduler").tables["jobs"].get("JOB-001")
        assert stored is not None and (stored["enabled"], stored["updated_at"]) == (False, NOW)
        created = call(
            env, SERVICE, "scheduler_create_job", {"name": "n", "cron_expression": "0 1 * * *", "action": "a"}
        )
        assert created["job"]["job_id"] == "JOB-004" and created["job"]["created_at"] == NOW
        removed = call(env, SERVICE, "scheduler_delete_job", {"job_id": "JOB-001"})
        assert removed["job"] == {**JOBS[0], "enabled": False}
        assert [r["job_id"] for r in env.state("scheduler").dump()["runs"]] == ["JOB-902"]
        data = audit(env, SERVICE)
        assert data["updated_jobs"] == [updated["job"]] and data["deleted_jobs"] == [removed["job"]]
        assert data["created_jobs"] == [created["job"]]
        assert [c["endpoint"] for c in data["calls"]] == [
            "/scheduler/jobs/update",
            "/scheduler/jobs/create",
            "/scheduler/jobs/delete",
        ]


def test_a_job_without_an_id_is_refused_naming_file_and_record() -> None:
    with pytest.raises(ValueError, match=r"jobs\.json: record 1: its 'job_id'"):
        scheduler.seed({"jobs.json": [JOBS[2], {"name": "x"}]})


def test_the_profile_passes_the_kits_checks_for_descriptions_bounds_doors_and_fuzz() -> None:
    kit_checks(SERVICE, FIXTURES)


CALLS = [
    ("scheduler_list_jobs", {}),
    ("scheduler_list_jobs", {"tag": "backup"}),
    ("scheduler_list_jobs", {"enabled": False}),
    ("scheduler_get_job", {"job_id": "JOB-001"}),
    ("scheduler_job_history", {"job_id": "JOB-902"}),
    ("scheduler_job_history", {"job_id": "JOB-001", "limit": -1}),
    ("scheduler_job_history", {"job_id": "JOB-003"}),
    ("scheduler_update_job", {"job_id": "JOB-902", "cron_expression": "*/15 * * * *", "action": "alert"}),
    ("scheduler_update_job", {"job_id": "JOB-3"}),
    ("scheduler_update_job", {"job_id": "JOB-001"}),
    ("scheduler_create_job", {"name": "new", "cron_expression": "bad", "action": "x", "tags": ["t"]}),
    ("scheduler_create_job", {"name": "new", "cron_expression": "0 1 * * *"}),
    ("scheduler_delete_job", {"job_id": "JOB-003"}),
    ("scheduler_delete_job", {"job_id": "JOB-003"}),
    ("scheduler_list_jobs", {"status": "failed"}),
]


@needs_claw_eval
def test_every_tool_answers_as_claw_evals_mock_on_the_same_fixtures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixture = tmp_path / "jobs.json"
    fixture.write_text(json.dumps(JOBS))
    with claw_env(SERVICE, FIXTURES) as env:
        replay(Mock("scheduler", fixture, monkeypatch), env, SERVICE, ENDPOINTS, CALLS)


@needs_claw_eval
def test_every_real_tasks_scheduler_fixture_seeds_and_reads_as_the_mock_gives_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    found = real_fixtures("scheduler")
    assert len(found) >= 18
    for _task, path in found:
        fixtures = fixture_of(path)
        ids = [j["job_id"] for j in fixtures[path.name]]
        calls = [("scheduler_list_jobs", {}), ("scheduler_update_job", {"job_id": ids[0], "enabled": False})]
        calls += [("scheduler_get_job", {"job_id": i}) for i in ids]
        calls += [("scheduler_job_history", {"job_id": i, "limit": 2}) for i in ids]
        calls += [("scheduler_delete_job", {"job_id": ids[-1]}), ("scheduler_list_jobs", {"enabled": False})]
        with claw_env(SERVICE, fixtures) as env:
            replay(Mock("scheduler", path, monkeypatch), env, SERVICE, ENDPOINTS, calls)
