"""Checks a service's own test file runs on it: both doors give the same answers and audit rows, ``coworkenv
services NAME --describe --json`` describes every table and tool for task authors, and the sensitive kinds that real
calls trip."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import anyio
from click.testing import CliRunner

from coworkenv.servers.cli import main
from coworkenv.servers.kit import Environment, SensitiveContext, Service
from coworkenv.servers.kit.door import DirectDoor, open_mcp_door
from tests.conftest import NOW

STRIP = ("wall_time", "duration_ms")


def _rows(env: Environment) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.to_dict().items() if k not in STRIP} for r in env.audit()]


async def assert_doors_agree(
    service: Service, seed: Mapping[str, Any], calls: Sequence[tuple[str, dict[str, Any]]]
) -> list[str]:
    """Make ``calls`` through the direct door and through the MCP door (in memory) on two fresh environments of
    ``service``: the same outcomes, results, audit rows and final state. Returns the outcomes."""
    registry = {service.name: service}
    with anyio.fail_after(30):
        with Environment.create({service.name: seed}, now=NOW, registry=registry) as direct_env:
            direct = DirectDoor(direct_env)
            expected = [await direct.call(service.name, name, args) for name, args in calls]
            with Environment.create({service.name: seed}, now=NOW, registry=registry) as mcp_env:
                async with open_mcp_door({service.name: mcp_env.server(service.name)}) as door:
                    got = [await door.call(service.name, name, args) for name, args in calls]
                assert got == expected
                assert _rows(mcp_env) == _rows(direct_env) and len(_rows(direct_env)) == len(calls)
                assert mcp_env.state_hash() == direct_env.state_hash()
    return [o.outcome for o in got]


def assert_described(service: Service) -> None:
    """``coworkenv services NAME --describe --json`` names every table and tool, each field typed and described."""
    result = CliRunner().invoke(main, ["services", service.name, "--describe", "--json"])
    assert result.exit_code == 0, result.output
    described = json.loads(result.output)
    assert [t["name"] for t in described["tables"]] == [t.name for t in service.tables]
    assert [t["name"] for t in described["tools"]] == [t.name for t in service.tools]
    assert all(f["type"] for t in described["tables"] for f in t["fields"])
    assert all(a["description"] for t in described["tools"] for a in t["arguments"])


async def sensitive_keys(
    service: Service, seed: Mapping[str, Any], calls: Sequence[tuple[str, dict[str, Any]]]
) -> set[str]:
    """Make ``calls`` (each must succeed) on a fresh workspace: the keys of the sensitive kinds its changes are of."""
    with Environment.create({service.name: seed}, now=NOW, registry={service.name: service}) as env:
        before = env.dump()[service.name]
        for tool, args in calls:
            result = await env.call(service.name, tool, args)
            assert not result.is_error, result.text
        after = env.dump()[service.name]
    ctx = SensitiveContext(before, after)
    return {h.key for change in service.diff(before, after) for h in service.sensitive_hits(change, ctx)}
