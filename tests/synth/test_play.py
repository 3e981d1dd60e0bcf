"""The contract's player (``synth/contract/play.py``) plays steps and the user's edits through any kit door: the
direct door and the MCP door give the same outcomes, audit rows and state."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from coworkenv.servers.kit import Environment
from coworkenv.servers.kit.door import DirectDoor, memory_targets, open_mcp_door
from coworkenv.synth.contract.baseline import Baseline
from coworkenv.synth.contract.play import StepOutcome, play_steps, user_script
from coworkenv.synth.contract.task import Task
from tests.harness.conftest import multi_turn_dict

pytestmark = pytest.mark.anyio


def played(outcomes: list[StepOutcome]) -> list[tuple[Any, ...]]:
    return [(o.index, o.ok, o.data, o.text, o.actor, o.edit) for o in outcomes]


def audited(env: Environment) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.to_dict().items() if k not in ("wall_time", "duration_ms")} for r in env.audit()]


async def test_steps_and_the_user_s_edits_play_alike_through_the_direct_door_and_the_mcp_door() -> None:
    task = Task.model_validate(multi_turn_dict())
    steps = task.reference_solution
    baseline = Baseline.seeded(task)
    direct, over_mcp = baseline.fork(), baseline.fork()
    try:
        with anyio.fail_after(30):
            by_direct = await play_steps(
                DirectDoor(direct), steps, user=user_script(task), user_door=DirectDoor(direct, actor="user")
            )
            async with (
                open_mcp_door(memory_targets(over_mcp)) as door,
                open_mcp_door(memory_targets(over_mcp, "user")) as as_user,
            ):
                by_mcp = await play_steps(door, steps, user=user_script(task), user_door=as_user)
        assert played(by_mcp[0]) == played(by_direct[0]) and by_mcp[1] == by_direct[1]
        assert all(o.ok for o in by_direct[0]) and {o.actor for o in by_direct[0]} == {"agent", "user"}
        assert audited(over_mcp) == audited(direct) and {r["actor"] for r in audited(direct)} == {"agent", "user"}
        assert over_mcp.state_hash() == direct.state_hash()
    finally:
        direct.close()
        over_mcp.close()
