"""An outside MCP client over stdio: `coworkenv workspace`, drive the tools from .mcp.json, `coworkenv grade`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import StdioServerParameters

from coworkenv.servers.kit.door import open_mcp_door
from coworkenv.synth.contract.library import load_example
from coworkenv.synth.contract.runner import play_steps
from coworkenv.synth.contract.task import Step
from tests.synth.test_cli import CLI

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
TASK = "escalate-stale-enterprise-to-account-managers"


async def drive(folder: Path, steps: list[Step]) -> list[str]:
    """Start every server of .mcp.json as a subprocess and play the steps through them."""
    config = json.loads((folder / ".mcp.json").read_text())["mcpServers"]
    with anyio.fail_after(60):
        targets = {
            name: StdioServerParameters(command=entry["command"], args=entry["args"], cwd=str(folder))
            for name, entry in config.items()
        }
        async with open_mcp_door(targets) as door:
            outcomes, said = await play_steps(door, steps)
    assert all(o.ok for o in outcomes), [o.text for o in outcomes if not o.ok]
    return said


def grade(folder: Path, answer: Path | None = None) -> dict[str, Any]:
    args = ["grade", TASK, "--dir", str(folder), "--json"] + (["--answer", str(answer)] if answer else [])
    result = CliRunner().invoke(CLI, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)  # type: ignore[no-any-return]


async def test_a_right_run_over_stdio_grades_1_and_a_wrong_one_lower(tmp_path: Path, anyio_backend: str) -> None:
    task = load_example(TASK)
    right, wrong = tmp_path / "right", tmp_path / "wrong"
    for folder in (right, wrong):
        assert CliRunner().invoke(CLI, ["workspace", TASK, "--dir", str(folder)]).exit_code == 0

    await drive(right, list(task.reference_solution))
    assert grade(right)["score"] == 1.0

    await drive(wrong, list(task.reference_solution[:5]))  # Marco is never told about the Globex tickets
    wrong_grade = grade(wrong)
    assert wrong_grade["score"] < 0.75
    failed = {c["id"] for c in wrong_grade["checks"] if not c["passed"]}
    assert {"marco_told_rate_limit", "marco_told_export"} <= failed
