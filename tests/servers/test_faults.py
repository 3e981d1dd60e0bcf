"""The dispatcher's tool-fault switch (Claw-Eval's injected 429 / 500 / slow answers): which calls it touches,
what an injected answer looks like on each door, that it is reproducible at a seed, and that it never changes
state."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mcp import Client

from coworkenv.servers.claw_eval.common import http_status
from coworkenv.servers.kit import Environment
from coworkenv.servers.kit.door import DirectDoor, MCPDoor
from coworkenv.servers.kit.tool_faults import (
    INJECTED,
    FaultSwitch,
    ToolFaults,
    injected_faults,
    parse_slow,
    switch_on,
)
from coworkenv.servers.registry import get_service
from tests.conftest import BIG_CORP_SEED, NOW

pytestmark = pytest.mark.anyio
TICKETS = {"tickets": BIG_CORP_SEED}
ESCALATE = {"ticket_id": "tkt_1", "reason": "Enterprise, waiting."}


def _clean() -> Environment:
    return Environment.create(TICKETS, now=NOW, registry={"tickets": get_service("tickets")})


def _env(rate: float, seed: int | None = 7, slow: tuple[float, float] = (0.0, 0.001)) -> Environment:
    env = _clean()
    switch_on(env.states, ToolFaults(rate, seed, slow))
    return env


async def _calls(env: Environment, n: int) -> list[tuple[str, str]]:
    door = DirectDoor(env)
    out = []
    for _ in range(n):
        result = await door.call("tickets", "get_ticket", {"ticket_id": "tkt_1"})
        out.append((result.outcome, result.text[:8]))
    return out


async def test_at_rate_one_every_agent_call_is_answered_429_or_500_or_runs_after_a_wait() -> None:
    with _env(1.0) as env, anyio.fail_after(10):
        outcomes = await _calls(env, 60)
        switch = env.state("tickets").faults
        assert switch is not None
        counts = switch.counts
    assert sum(counts.values()) == 60 and set(counts) == {"rate_limit", "server_error", "slow"}
    assert sum(o == ("error", "HTTP 429") for o in outcomes) == counts["rate_limit"]
    assert sum(o == ("error", "HTTP 500") for o in outcomes) == counts["server_error"]
    assert sum(o[0] == "ok" for o in outcomes) == counts["slow"]


async def test_an_injected_429_runs_nothing_and_its_audit_row_says_it_was_injected() -> None:
    with _env(1.0) as env, anyio.fail_after(10):
        door = DirectDoor(env)
        results = [await door.call("tickets", "escalate_ticket", ESCALATE) for _ in range(30)]
        injected = [r for r in results if r.text.startswith(("HTTP 429: ", "HTTP 500: "))]
        rows = [r for r in env.audit() if r.result and INJECTED in r.result]
        assert injected and len(rows) == len(injected) == injected_faults(env.audit())
        for row in rows:
            assert row.outcome == "error" and not row.state_changed and row.changes is None
            assert row.actor == "agent" and row.arguments == ESCALATE
            assert http_status(row.outcome, row.error or "") in (429, 500)
        body = json.loads(injected[0].text.split(": ", 1)[1])
        assert body["error"] in ("rate_limit_exceeded", "internal_server_error") and body["message"]
        assert all(r.outcome == "error" for r in injected)


async def test_injected_faults_never_change_state() -> None:
    """The calls that ran (slow ones) played on a clean environment leave the same state as the faulty run."""
    with _env(1.0, 3, (0.0, 0.0)) as faulty, _clean() as clean, anyio.fail_after(10):
        answers = [await DirectDoor(faulty).call("tickets", "escalate_ticket", ESCALATE) for _ in range(20)]
        ran = [a for a in answers if not a.text.startswith(("HTTP 429", "HTTP 500"))]
        assert 0 < len(ran) < len(answers)
        for _ in ran:
            await DirectDoor(clean).call("tickets", "escalate_ticket", ESCALATE)
        assert faulty.dump() == clean.dump()


async def test_the_same_seed_injects_the_same_faults_on_the_same_calls_and_another_seed_does_not() -> None:
    with _env(0.5, 11) as one, _env(0.5, 11) as two, _env(0.5, 12) as other, anyio.fail_after(10):
        first, second, third = await _calls(one, 40), await _calls(two, 40), await _calls(other, 40)
    assert first == second
    assert first != third


async def test_users_members_and_unknown_tools_are_never_faulted() -> None:
    with _env(1.0) as env, anyio.fail_after(10):
        state = env.state("tickets")
        for _ in range(10):
            assert (await state.call("get_ticket", {"ticket_id": "tkt_1"}, actor="user")).outcome == "ok"
            assert (await state.call("no_such_tool", {}, actor="agent")).outcome == "unknown_tool"
        assert state.faults is not None and sum(state.faults.counts.values()) == 0
        assert injected_faults(env.audit()) == 0


async def test_rate_zero_or_no_switch_injects_nothing() -> None:
    with _env(0.0) as env, anyio.fail_after(10):
        assert env.state("tickets").faults is None
        assert {o for o, _ in await _calls(env, 20)} == {"ok"}


async def test_an_injected_fault_over_mcp_is_an_error_result_with_the_http_status() -> None:
    with _env(1.0, 5) as env, anyio.fail_after(10):
        async with Client(env.server("tickets")) as client:
            door = MCPDoor({"tickets": client})
            answers = [await door.call("tickets", "get_ticket", {"ticket_id": "tkt_1"}) for _ in range(20)]
        rows = [r.to_dict() for r in env.audit()]
    errors = [a for a in answers if a.is_error]
    assert errors and all(a.text.startswith(("HTTP 429: ", "HTTP 500: ")) for a in errors)
    assert all(a.outcome == "error" for a in errors)
    assert injected_faults(rows) == len(errors)


def test_a_slow_call_waits_within_the_configured_range() -> None:
    switch = FaultSwitch(ToolFaults(1.0, 1, (0.25, 0.5)))
    slow = [f for f in (switch.draw() for _ in range(200)) if f is not None and f.kind == "slow"]
    assert slow and all(0.25 <= f.delay_s <= 0.5 for f in slow) and not any(f.answers for f in slow)


async def test_the_async_path_waits_for_a_slow_fault() -> None:
    with _env(1.0, 2, (0.05, 0.05)) as env, anyio.fail_after(10):
        state = env.state("tickets")
        switch = state.faults
        assert switch is not None
        t0 = anyio.current_time()
        for _ in range(30):
            await state.call("get_ticket", {"ticket_id": "tkt_1"})
        assert anyio.current_time() - t0 >= 0.05 * switch.counts["slow"] > 0


def test_derived_seeds_are_stable_and_differ_by_key() -> None:
    base = ToolFaults(0.3, 42)
    assert base.derived("t1", 0, "email") == base.derived("t1", 0, "email")
    assert base.derived("t1", 0, "email").seed != base.derived("t1", 1, "email").seed
    assert ToolFaults(0.3).derived("x") == ToolFaults(0.3)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [({"rate": 1.5}, "between 0 and 1"), ({"rate": 0.1, "slow_s": (3.0, 1.0)}, "MIN,MAX")],
)
def test_bad_fault_settings_are_one_clear_error(kwargs: dict[str, Any], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        ToolFaults(**kwargs)


def test_a_slow_range_is_read_from_min_max_or_one_number() -> None:
    assert parse_slow("2,4") == (2.0, 4.0) and parse_slow("0") == (0.0, 0.0)
    for bad in ("4,2", "x", "1,2,3", "-1"):
        with pytest.raises(ValueError, match="MIN,MAX"):
            parse_slow(bad)


def test_the_serve_options_carry_the_settings() -> None:
    args = ToolFaults(0.25, 9, (0.0, 0.01)).serve_args()
    assert args == ["--faults", "0.25", "--fault-slow", "0.0,0.01", "--fault-seed", "9"]
