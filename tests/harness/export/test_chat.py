"""Export: chat records with tool calls that datasets loads, and the filters, each counted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coworkenv.harness.export.chat import ExportParams, chat_messages, export
from coworkenv.harness.messages import Message, ToolCall
from coworkenv.harness.trajectory import TrajectoryWriter
from tests.harness.conftest import conversation, record


def test_a_trajectory_becomes_openai_style_messages_with_tool_calls() -> None:
    messages = chat_messages(record("t", messages=conversation(calls=2, answer="All done.")))
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant"]
    call = messages[2]["tool_calls"][0]
    assert call == {"id": "c0", "type": "function",
                    "function": {"name": "tickets__get_ticket", "arguments": {"ticket_id": "tkt_0"}}}  # fmt: skip
    assert messages[3] == {"role": "tool", "tool_call_id": "c0", "content": '{"id": "tkt"}'}
    assert messages[-1] == {"role": "assistant", "content": "All done."}
    assert chat_messages(record("t"), system=False)[0]["role"] == "user"


def test_user_messages_after_the_last_assistant_turn_are_cut() -> None:
    msgs = [*conversation(), Message(role="user", content="Thanks!")]
    assert chat_messages(record("t", messages=msgs))[-1]["role"] == "assistant"


def crafted(tmp_path: Path) -> Path:
    orphan = conversation()
    orphan.insert(2, Message(role="tool", content="{}", tool_call_id="nobody"))
    empty_turn = conversation()
    empty_turn.insert(2, Message(role="assistant"))
    many = conversation(calls=6)
    long_answer = conversation(answer="x" * 5000)
    no_user = [Message(role="system", content="s"), Message(role="assistant", content="Hello.")]
    records = [
        record("good-1", messages=conversation(calls=2)),
        record("good-2", messages=conversation(calls=1)),
        record("orphan", messages=orphan),
        record("empty-turn", messages=empty_turn),
        record("no-user", messages=no_user),
        record("short", messages=[*conversation(calls=0)]),
        record("many-calls", messages=many),
        record("long", messages=long_answer),
        record("low", completion=0.2),
        record("timeout", status="timeout"),
        record("infra", status="infra_error"),
    ]
    path = tmp_path / "trajectories.jsonl"
    with TrajectoryWriter(path) as w:
        for r in records:
            w.write(r)
    return path


def test_export_drops_by_rule_and_reports_each_count(tmp_path: Path) -> None:
    source = crafted(tmp_path)
    out = tmp_path / "sft.jsonl"
    params = ExportParams(min_score=0.5, min_assistant_turns=2, max_tool_calls=4, max_chars=3000)
    report = export([source], out, params)
    assert report.dropped == {
        "not_completed": 2,
        "below_score": 1,
        "not_chat": 3,
        "too_short": 1,
        "too_many_tool_calls": 1,
        "over_budget": 1,
        "ends_on_tool": 0,
    }
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["task_id"] for r in rows] == ["good-1", "good-2"] and report.written == 2
    tools = json.loads(rows[0]["tools"])
    assert tools[0]["type"] == "function" and tools[0]["function"]["name"].startswith("tickets__")
    assert "parameters" in tools[0]["function"]
    meta = json.loads((tmp_path / "sft.jsonl.report.json").read_text())
    assert meta["written"] == 2 and meta["params"]["max_tool_calls"] == 4


def test_datasets_loads_the_export(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    out = tmp_path / "sft.jsonl"
    export([crafted(tmp_path)], out, ExportParams(max_tool_calls=10))
    data = datasets.Dataset.from_json(str(out))
    assert {"messages", "tools"} <= set(data.column_names)
    first = data[0]["messages"]
    assert first[2]["tool_calls"][0]["function"]["arguments"] == {"ticket_id": "tkt_0"}
    assert isinstance(data[0]["tools"], str)


def test_rows_with_different_argument_shapes_load_together(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    a, b = conversation(), conversation()
    a[2].tool_calls = [ToolCall(id="c0", name="tickets__search_tickets", arguments={"status": ["open"]})]
    b[2].tool_calls = [ToolCall(id="c0", name="tickets__update_ticket", arguments={"status": "solved", "n": 1})]
    path = tmp_path / "trajectories.jsonl"
    with TrajectoryWriter(path) as w:
        w.write(record("a", messages=a))
        w.write(record("b", messages=b))
    out = tmp_path / "sft.jsonl"
    assert export([path], out).written == 2
    data = datasets.Dataset.from_json(str(out))
    assert data[1]["messages"][2]["tool_calls"][0]["function"]["arguments"] == {"status": "solved", "n": 1}


def test_a_missing_source_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="run folder"):
        export([tmp_path / "nothing"], tmp_path / "out.jsonl")


def test_an_export_that_fails_midway_leaves_the_earlier_export_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, out = crafted(tmp_path), tmp_path / "sft.jsonl"
    export([source], out)
    before = out.read_bytes()
    calls = []

    def scrub_then_fail(text: str) -> str:
        calls.append(text)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return text

    monkeypatch.setattr("coworkenv.harness.export.chat.scrub_env_values", scrub_then_fail)
    with pytest.raises(OSError, match="No space left"):
        export([source], out)
    assert out.read_bytes() == before and len(calls) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sft.jsonl", "sft.jsonl.report.json", "trajectories.jsonl"]
