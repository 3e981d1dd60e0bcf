"""The agent acts as its task's user: no tool takes another member to act as, so access control in docs and chat
holds. Acting as another member is a privileged act of the Python API only, and audited as such. (That no tool
of any service takes an argument choosing who acts is tests/servers/test_identity.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from coworkenv.servers.kit import Environment
from tests.conftest import error_text

pytestmark = pytest.mark.anyio
EXAMPLES = Path(__file__).parents[3] / "servers/examples"
LENA = "lena.ortiz@brightwave.io"


def env_of(*services: str) -> Environment:
    return Environment.create({s: json.loads((EXAMPLES / f"{s}.json").read_text()) for s in services})


CROSSINGS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "read a document the user cannot see": ("docs", "get_document", {"document_id": "doc_salary_bands"}),
    "share a document the user cannot see": (
        "docs",
        "share_document",
        {"document_id": "doc_salary_bands", "email": "jamie.lee@northwind.com", "role": "viewer"},
    ),
    "read a private channel": ("chat", "get_channel_history", {"channel": "#payroll"}),
    "search a private channel": ("chat", "search_messages", {"query": "payroll run"}),
}


@pytest.mark.parametrize("crossing", CROSSINGS.values(), ids=list(CROSSINGS))
async def test_an_agent_naming_another_member_is_refused_and_audited(crossing: tuple[str, str, dict[str, Any]]) -> None:
    service, tool, arguments = crossing
    with anyio.fail_after(10), env_of(service) as env:
        before = env.state_hash()
        async with Client(env.server(service)) as client:
            text = error_text(await client.call_tool(tool, arguments | {"as_user": LENA}))
            plain = await client.call_tool(tool, arguments)
        assert "as_user" in text and "Extra inputs are not permitted" in text
        assert "salary" not in text.lower() and "payroll run" not in text.lower()
        assert plain.is_error or (plain.structured_content or {}).get("total") == 0  # as the user: no access
        rows = env.audit(service)
        assert (rows[0].outcome, rows[0].actor) == ("invalid_arguments", "agent")
        assert env.state_hash() == before


def test_the_python_api_can_act_as_another_member_and_the_audit_says_who() -> None:
    with env_of("docs", "chat") as env:
        doc = env.state("docs").call_now("get_document", {"document_id": "doc_salary_bands"}, member=LENA)
        history = env.state("chat").call_now("get_channel_history", {"channel": "#payroll"}, member="U0LENA")
        assert doc.outcome == history.outcome == "ok"
        assert doc.data is not None and doc.data["your_role"] == "owner"
        assert env.audit("docs")[0].actor == f"agent:{LENA}" and env.audit("chat")[0].actor == "agent:U0LENA"
        ghost = env.state("docs").call_now("get_document", {"document_id": "doc_refunds"}, member="ghost@x.io")
        assert ghost.outcome == "error" and "not a member" in ghost.text


async def test_the_user_simulator_acts_as_the_tasks_user_too() -> None:
    with anyio.fail_after(10), env_of("docs") as env:
        result = await env.call("docs", "get_document", {"document_id": "doc_salary_bands"}, actor="user")
        assert result.outcome == "error" and "Ask its owner" in result.text
