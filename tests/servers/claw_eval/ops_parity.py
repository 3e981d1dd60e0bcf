"""What the tests of the inventory, todo, scheduler, config and rss Claw-Eval profiles share: our service with the
profile, seeded from fixtures; Claw-Eval's own mock of the service loaded in-process (only where ``CLAW_EVAL_PATH``
names a Claw-Eval checkout); JSON compared with ISO times normalised; the real tasks' fixture files."""

from __future__ import annotations

import importlib
import importlib.util
import itertools
import json
import os
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from coworkenv.servers.claw_eval import ClawService, profiled
from coworkenv.servers.claw_eval.common import http_status
from coworkenv.servers.kit import Environment, Service
from coworkenv.servers.testing import check_bounds, check_described, check_doors, check_fuzz

CLAW_EVAL = os.environ.get("CLAW_EVAL_PATH", "")
needs_claw_eval = pytest.mark.skipif(not CLAW_EVAL, reason="CLAW_EVAL_PATH does not name a Claw-Eval checkout")
NOW = "2026-03-02T09:00:00Z"
Call = tuple[str, dict[str, Any]]


@contextmanager
def claw_env(claw: ClawService, fixtures: Mapping[str, Any], now: str = NOW) -> Iterator[Environment]:
    """A fresh environment of the service ``claw`` is served on, with its tools, seeded from ``fixtures``."""
    base: Service = importlib.import_module(f"coworkenv.servers.{claw.serves_on}").SERVICE
    service = profiled(base, [claw.name])
    env = Environment.create({service.name: claw.seed(fixtures)}, now=now, registry={service.name: service})
    try:
        yield env
    finally:
        env.close()


def kit_checks(claw: ClawService, fixtures: Mapping[str, Any]) -> None:
    """The checks every service of ours gets that hold for a Claw-Eval profile too: every tool and argument
    described and bounded, both doors agreeing, and random hostile calls crashing nothing and changing nothing
    unaudited. (Not ``outcomes``: a Claw-Eval lookup that finds nothing answers 200 with ``{"error": ...}``.)"""
    base: Service = importlib.import_module(f"coworkenv.servers.{claw.serves_on}").SERVICE
    service = profiled(base, [claw.name])
    seed = claw.seed(fixtures)
    check_described(service)
    check_bounds(service)
    check_doors(service, seed)
    check_fuzz(service, seed)


def call(env: Environment, claw: ClawService, tool: str, args: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The JSON answer of a call that must succeed."""
    result = env.state(claw.serves_on).call_now(tool, dict(args or {}))
    assert not result.is_error and result.data is not None, result.text
    return result.data


def audit(env: Environment, claw: ClawService) -> dict[str, Any]:
    """What the mock's ``/audit`` would answer now."""
    state = env.state(claw.serves_on)
    return claw.audit_data(state.dump(), [row.to_dict() for row in state.audit()])


_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")


def normal(value: Any) -> Any:
    """``value`` with every ISO time made ``<time>`` (the mock stamps wall-clock times, we the simulated clock) and
    the ``categories`` of a feed sorted (the mock lists a set)."""
    if isinstance(value, str) and _TIME.fullmatch(value):
        return "<time>"
    if isinstance(value, dict):
        return {k: sorted(v) if k == "categories" and isinstance(v, list) else normal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normal(v) for v in value]
    return value


class Mock:
    """Claw-Eval's mock of one service, in-process, on one fixture file."""

    _loaded = itertools.count()

    def __init__(self, service: str, fixture: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        from fastapi.testclient import TestClient

        monkeypatch.setenv(f"{service.upper()}_FIXTURES", str(fixture))
        monkeypatch.setenv("ERROR_RATE", "0")
        monkeypatch.setattr(sys, "path", list(sys.path))  # the mock puts its checkout first; undone after the test
        path = Path(CLAW_EVAL) / "mock_services" / service / "server.py"
        spec = importlib.util.spec_from_file_location(f"claw_eval_mock_{service}_{next(self._loaded)}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        self.service = service
        self.client = TestClient(module.app)

    def post(self, endpoint: str, args: Mapping[str, Any]) -> tuple[int, Any]:
        answer = self.client.post(endpoint, json=dict(args))
        return answer.status_code, answer.json()

    def audit(self) -> Any:
        return self.client.get(f"/{self.service}/audit").json()


def replay(
    mock: Mock, env: Environment, claw: ClawService, endpoints: Mapping[str, str], calls: Sequence[Call]
) -> None:
    """Each call on the mock and on ours gives the same answer (the same JSON, times normalised; or the same HTTP
    error status), and then both ``/audit``s are the same."""
    for tool, args in calls:
        status, theirs = mock.post(endpoints.get(tool, f"/{claw.name}/no-such-route"), args)
        ours = env.state(claw.serves_on).call_now(tool, dict(args))
        where = f"{tool}({json.dumps(args, ensure_ascii=False)})"
        if status == 200:
            assert not ours.is_error, f"{where}: the mock answered, we said {ours.text}"
            assert normal(ours.data) == normal(theirs), where
        else:
            assert ours.is_error and http_status(ours.outcome, ours.text) == status, f"{where}: {status} {ours.text}"
    assert normal(audit(env, claw)) == normal(mock.audit())


def real_fixtures(service: str) -> list[tuple[str, Path]]:
    """(task id, fixture file) of every real task that uses ``service``: the file its task.yaml points the mock at,
    or the mock's default file, and any file of the task's own fixtures folder."""
    tasks = Path(CLAW_EVAL) / "tasks"
    default = {
        "inventory": "T019zh_inventory_check",
        "todo": "T007zh_todo_management",
        "scheduler": "T041zh_scheduled_task_management",
        "config": "T027zh_api_config_audit",
        "rss": "T021zh_newsletter_curation",
    }[service]
    found: list[tuple[str, Path]] = []
    for task_yaml in sorted(tasks.glob("*/task.yaml")):
        spec = yaml.safe_load(task_yaml.read_text())
        for declared in spec.get("services") or []:
            if declared.get("name") != service:
                continue
            pointed = (declared.get("env") or {}).get(f"{service.upper()}_FIXTURES")
            files = {Path(CLAW_EVAL) / pointed} if pointed else set((tasks / default / "fixtures" / service).glob("*"))
            files |= set((task_yaml.parent / "fixtures" / service).glob("*.json"))
            found += [(task_yaml.parent.name, path) for path in sorted(files)]
    return found


def fixture_of(path: Path) -> dict[str, Any]:
    return {path.name: json.loads(path.read_text())}
