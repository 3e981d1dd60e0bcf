"""Arguments no tool could take, and arguments past the bounds of the input schema: always an audited
invalid_arguments answer with a short message, never an exception and never a call without its audit row."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from coworkenv.servers.kit import Environment
from coworkenv.servers.kit.audit import MAX_DEPTH, MAX_MESSAGE, argument_problem, clip, safe_value
from coworkenv.servers.kit.tool import MAX_ID, MAX_ITEMS, MAX_LONG_TEXT
from coworkenv.servers.registry import shipped_services
from coworkenv.servers.testing import check_bounds

pytestmark = pytest.mark.anyio
EXAMPLES = Path(__file__).parents[3] / "servers/examples"
NOW = "2026-03-02T09:00:00Z"


def tickets_env() -> Environment:
    return Environment.create({"tickets": json.loads((EXAMPLES / "tickets.json").read_text())}, now=NOW)


def nested(depth: int, make: Any) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = make(value)
    return value


BAD_ARGUMENTS = {
    "a lone surrogate": {"ticket_id": "\ud800"},
    "a lone surrogate in a key": {"\udfff": "x"},
    "3,000-deep lists": {"ticket_id": nested(3000, lambda v: [v])},
    "3,000-deep objects": {"ticket_id": nested(3000, lambda v: {"k": v})},
}


@pytest.mark.parametrize("arguments", BAD_ARGUMENTS.values(), ids=list(BAD_ARGUMENTS))
async def test_unusable_arguments_are_an_audited_invalid_arguments_answer(arguments: dict[str, Any]) -> None:
    with anyio.fail_after(10), tickets_env() as env:
        before = env.state_hash()
        result = await env.call("tickets", "get_ticket", arguments)
        assert result.outcome == "invalid_arguments"
        assert "Invalid arguments for get_ticket" in result.text and "input schema" in result.text
        result.text.encode("utf-8")  # the answer itself is always valid text
        (row,) = env.audit("tickets")
        assert (row.seq, row.tool, row.outcome, row.error) == (
            result.seq,
            "get_ticket",
            "invalid_arguments",
            result.text,
        )
        json.dumps(row.raw_arguments).encode("utf-8")  # a safe copy of what was sent
        assert env.state_hash() == before


def test_the_synchronous_door_answers_the_same_without_raising() -> None:
    with tickets_env() as env:
        state = env.state("tickets")
        lone = state.call_now("get_ticket", {"ticket_id": "\ud800"})
        deep = state.call_now("get_ticket", {"ticket_id": nested(3000, lambda v: [v])})
        name = state.call_now("get_\ud800", {})
        assert [r.outcome for r in (lone, deep, name)] == ["invalid_arguments"] * 3
        assert "not valid Unicode" in lone.text and f"deeper than {MAX_DEPTH}" in deep.text
        assert "tool name" in name.text
        rows = env.audit("tickets")
        assert [r.seq for r in rows] == [lone.seq, deep.seq, name.seq]
        assert rows[0].raw_arguments == {"ticket_id": "\\ud800"} and rows[2].tool == "get_\\ud800"


def test_the_safe_copy_escapes_bad_text_and_cuts_deep_nesting() -> None:
    copy = safe_value({"a": nested(100, lambda v: [v]), "b": "ok \udc80"})
    assert copy["b"] == "ok \\udc80"
    depth, value = 0, copy["a"]
    while isinstance(value, list):
        depth, value = depth + 1, value[0]
    assert depth == MAX_DEPTH - 1 and "nested deeper" in value
    assert argument_problem({"fine": [1, {"x": "ünïcødé ✓"}]}) is None


def test_every_tool_argument_has_bounds_in_its_input_schema() -> None:
    for service in shipped_services().values():
        check_bounds(service)  # the toolkit's check (coworkenv.servers.testing), which names each unbounded argument


async def test_a_one_megabyte_id_is_invalid_arguments_with_a_short_message() -> None:
    with anyio.fail_after(10), tickets_env() as env:
        result = await env.call("tickets", "get_ticket", {"ticket_id": "t" * 1_000_000})
        assert result.outcome == "invalid_arguments" and f"at most {MAX_ID} characters" in result.text
        assert len(result.text) < 500 and len(env.audit("tickets")[0].error or "") < 500


async def test_oversized_bodies_and_lists_are_invalid_arguments() -> None:
    with anyio.fail_after(10), tickets_env() as env:
        body = await env.call("tickets", "add_comment", {"ticket_id": "tkt_1001", "body": "b" * (MAX_LONG_TEXT + 1)})
        tags = await env.call(
            "tickets", "update_ticket", {"ticket_id": "tkt_1001", "add_tags": ["t"] * (MAX_ITEMS + 1)}
        )
        assert [body.outcome, tags.outcome] == ["invalid_arguments", "invalid_arguments"]
        assert "at most" in body.text and "at most" in tags.text


async def test_errors_that_echo_input_are_cut_short() -> None:
    with anyio.fail_after(10), tickets_env() as env:
        when = await env.call("tickets", "search_tickets", {"created_after": "x" * 900})
        unknown = await env.call("tickets", "t" * 100_000, {})
        assert when.outcome == "invalid_arguments" and len(when.text) < 400
        assert unknown.outcome == "unknown_tool" and len(unknown.text) < MAX_MESSAGE + 100
    assert clip("abc", 5) == "abc" and clip("x" * 50, 10) == "x" * 10 + "… (40 more characters)"
