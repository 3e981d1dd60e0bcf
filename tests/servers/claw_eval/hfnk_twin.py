"""Shared by the helpdesk, finance, notes and kb profile tests: an environment of one Claw-Eval service on ours,
calls through the in-process door, and (where ``CLAW_EVAL_PATH`` names a Claw-Eval checkout) its real mock app
loaded in-process on the same fixtures, to compare answers and ``/audit`` with."""

from __future__ import annotations

import importlib.util
import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest

from coworkenv.servers.claw_eval import ClawService, claw_service, profiled
from coworkenv.servers.kit import Environment
from coworkenv.servers.kit.door import DirectDoor
from coworkenv.servers.registry import get_service

CLAW = os.environ.get("CLAW_EVAL_PATH", "")
needs_claw = pytest.mark.skipif(not CLAW, reason="set CLAW_EVAL_PATH to a Claw-Eval checkout to compare with its mocks")
NOW = "2026-03-02T09:00:00Z"

_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?$")


def normalised(value: Any) -> Any:
    """``value`` with every ISO time replaced by ``<time>`` (the mocks stamp the real now, we the simulated one)."""
    if isinstance(value, dict):
        return {k: normalised(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalised(v) for v in value]
    if isinstance(value, str) and _TIME.match(value):
        return "<time>"
    return value


def merged(*seeds: Mapping[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """Seeds of several Claw-Eval services served on one of ours, as one seed (tables concatenated)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for seed in seeds:
        for table, rows in seed.items():
            out.setdefault(table, []).extend(rows)
    return out


@contextmanager
def claw_env(
    names: Sequence[str], fixtures: Mapping[str, Mapping[str, Any]], now: str = NOW
) -> Iterator[tuple[Environment, str]]:
    """An environment of the one service of ours that serves the Claw-Eval services ``names``, seeded from their
    fixtures (service → file name → JSON), with their tools in place of its own; and that service's name."""
    claws = [claw_service(n) for n in names]
    ours = claws[0].serves_on
    service = profiled(get_service(ours), names)
    seed = merged(*(c.seed(fixtures.get(c.name, {})) for c in claws))
    with Environment.create({ours: seed}, now=now, registry={ours: service}) as env:
        yield env, ours


async def call(env: Environment, service: str, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """A successful call's JSON through the in-process door (10 s budget)."""
    with anyio.fail_after(10):
        got = await DirectDoor(env).call(service, tool, args)
    assert got.ok and got.data is not None, got.text
    return got.data


def audit(claw: ClawService, env: Environment, service: str) -> dict[str, Any]:
    """What ``claw``'s ``/audit`` would say of this environment, from our tables and audit rows."""
    state = env.state(service)
    tables = {name: store.dump() for name, store in state.tables.items()}
    return claw.audit_data(tables, [row.to_dict() for row in state.audit()])


def now_iso() -> str:
    """The real now (the mocks stamp days with it), as our clock takes it."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Mock:
    """A Claw-Eval mock app loaded in-process on one fixture file (its FIXTURES variable set before import)."""

    def __init__(self, service: str, fixture: Path) -> None:
        from fastapi.testclient import TestClient

        os.environ[f"{service.upper()}_FIXTURES"] = str(fixture)
        os.environ["ERROR_RATE"] = "0"
        path = Path(CLAW) / "mock_services" / service / "server.py"
        spec = importlib.util.spec_from_file_location(f"claw_mock_{service}_{abs(hash(str(fixture)))}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        self.client = TestClient(module.app)
        self.service = service

    def post(self, endpoint: str, body: Mapping[str, Any]) -> Any:
        answer = self.client.post(endpoint, json=dict(body))
        assert answer.status_code == 200, answer.text
        return answer.json()

    def audit(self) -> Any:
        return self.client.get(f"/{self.service}/audit").json()


def write_fixture(folder: Path, name: str, records: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(records, ensure_ascii=False))
    return path


async def compare_with_mock(
    tmp_path: Path,
    claw: ClawService,
    fixture: str,
    records: Any,
    calls: Sequence[tuple[str, dict[str, Any]]],
    endpoints: Mapping[str, str],
) -> None:
    """Play ``calls`` on the real mock and on ours from the same fixture file: each answer, then ``/audit``, alike
    (times normalised)."""
    path = write_fixture(tmp_path / claw.name, fixture, records)
    mock = Mock(claw.name, path)
    with claw_env([claw.name], {claw.name: {fixture: records}}, now=now_iso()) as (env, ours):
        for tool, args in calls:
            want = mock.post(endpoints[tool], args)
            got = await call(env, ours, tool, args)
            assert normalised(got) == normalised(want), (tool, args)
        assert normalised(audit(claw, env, ours)) == normalised(mock.audit())


def real_fixtures(service: str) -> list[tuple[str, dict[str, dict[str, Any]]]]:
    """(task id, its fixtures: service → file → JSON) of every real task that names ``service``."""
    found = []
    for task in sorted((Path(CLAW) / "tasks").iterdir()):
        spec = task / "task.yaml"
        if not spec.exists() or not re.search(rf"^\s*-?\s*name:\s*{service}\s*$", spec.read_text(), re.M):
            continue
        files: dict[str, dict[str, Any]] = {}
        for folder in sorted((task / "fixtures").glob("*")):
            if folder.is_dir():
                files[folder.name] = {f.name: json.loads(f.read_text()) for f in sorted(folder.glob("*.json"))}
        found.append((task.name, files))
    return found
