"""What the tests of the gmail, calendar, contacts and crm Claw-Eval profiles share beside ``ops_parity``: the real
tasks' fixture files of these services, and an environment of our crm service holding both contacts and crm."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from coworkenv.servers.claw_eval import SeedTables, claw_service, profiled
from coworkenv.servers.crm import SERVICE as CRM
from coworkenv.servers.kit import Environment
from tests.servers.claw_eval.ops_parity import CLAW_EVAL, NOW

DEFAULT_TASK = {
    "gmail": "T001zh_email_triage",
    "calendar": "T003zh_calendar_scheduling",
    "contacts": "T009zh_contact_lookup",
    "crm": "T023zh_crm_data_export",
}
"""The task whose fixture file a mock loads when the task.yaml names none."""


def real_fixtures(service: str) -> list[tuple[str, Path]]:
    """(task id, fixture file) of every real task that uses ``service``: the file its task.yaml points the mock at
    (or the mock's default file) and the files of the task's own fixtures folder."""
    tasks = Path(CLAW_EVAL) / "tasks"
    found: list[tuple[str, Path]] = []
    for task_yaml in sorted(tasks.glob("*/task.yaml")):
        spec = yaml.safe_load(task_yaml.read_text())
        for declared in spec.get("services") or []:
            if declared.get("name") != service:
                continue
            pointed = (declared.get("env") or {}).get(f"{service.upper()}_FIXTURES")
            default = tasks / DEFAULT_TASK[service] / "fixtures" / service
            files = {Path(CLAW_EVAL) / pointed} if pointed else set(default.glob("*.json"))
            files |= set((task_yaml.parent / "fixtures" / service).glob("*.json"))
            found += [(task_yaml.parent.name, path) for path in sorted(files)]
    return found


def merged(*seeds: SeedTables) -> SeedTables:
    """Seeds of one service (from several Claw-Eval services it serves) as one: each table's records together."""
    out: SeedTables = {}
    for seed in seeds:
        for table, records in seed.items():
            out.setdefault(table, []).extend(records)
    return out


@contextmanager
def crm_env(contacts: Mapping[str, Any], customers: Mapping[str, Any], now: str = NOW) -> Iterator[Environment]:
    """Our crm service with the contacts and crm tools, seeded from both fixture sets."""
    service = profiled(CRM, ["contacts", "crm"])
    seed = merged(claw_service("contacts").seed(contacts), claw_service("crm").seed(customers))
    env = Environment.create({"crm": seed}, now=now, registry={"crm": service})
    try:
        yield env
    finally:
        env.close()
