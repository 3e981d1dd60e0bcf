"""The OpenEnv server's contract, in process (Starlette's test client over HTTP, the WebSocket session and JSON-RPC):
a task per session in a workspace of its own, tool errors as answers, reply ending the episode with the grade."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from coworkenv.harness.openenv.episode import Limits, TaskPool
from coworkenv.harness.openenv.server import create_app
from coworkenv.synth.contract.task import Task
from coworkenv.synth.contract.taskfile import load_task
from coworkenv.synth.generate.families import get_family
from tests.harness.openenv.plays import EXAMPLES, reference_actions

TRIAGE = load_task(EXAMPLES / "tickets-triage-new-urgent.json")
REFUND = load_task(EXAMPLES / "payments-refund-unwanted-addon.json")
CLARIFY: Task = get_family("crm-clarify-contact").make(("crm",), "easy", 7)  # type: ignore[arg-type]
POOL = TaskPool([TRIAGE, REFUND, CLARIFY])


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(create_app(POOL)) as client:
        yield client


def call(ws: Any, name: str, **arguments: Any) -> dict[str, Any]:
    ws.send_json({"type": "step", "data": {"type": "call_tool", "tool_name": name, "arguments": arguments}})
    answer: dict[str, Any] = ws.receive_json()
    assert answer["type"] == "observation", answer
    return dict(answer["data"])


def reset(ws: Any, **arguments: Any) -> dict[str, Any]:
    ws.send_json({"type": "reset", "data": arguments})
    answer: dict[str, Any] = ws.receive_json()
    return answer


def test_reset_returns_the_request_and_the_instructions_as_the_first_observation(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        first = reset(ws, task_id=TRIAGE.id)
    assert first["type"] == "observation"
    observation = first["data"]["observation"]
    assert observation["request"] == TRIAGE.request and observation["task_id"] == TRIAGE.id
    assert "reply tool" in observation["instructions"] and observation["services"] == ["tickets"]
    assert first["data"]["done"] is False and first["data"]["reward"] is None


def test_an_unknown_task_id_is_an_error_answer_and_the_session_goes_on(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        refused = reset(ws, task_id="no-such-task")
        assert refused["type"] == "error" and refused["data"]["code"] == "VALIDATION_ERROR"
        assert (
            "unknown task id 'no-such-task'" in refused["data"]["message"] and TRIAGE.id in refused["data"]["message"]
        )
        assert reset(ws, task_id=TRIAGE.id)["type"] == "observation"
    over_http = client.post("/reset", json={"task_id": "no-such-task"})
    assert over_http.status_code == 400 and "GET /tasks" in over_http.json()["detail"]
    assert client.post("/reset", json={"task": TRIAGE.id}).status_code == 400  # a misspelt argument is no default


def test_a_seed_picks_a_task_deterministically_in_id_order(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        picked = [reset(ws, seed=s)["data"]["observation"]["task_id"] for s in (0, 1, 2, 3, 0)]
    assert picked == [*POOL.ids, POOL.ids[0], POOL.ids[0]]


def test_tools_are_the_tasks_services_tools_and_reply_and_never_the_protocols_verbs(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "step", "data": {"type": "list_tools"}})
        before = [t["name"] for t in ws.receive_json()["data"]["observation"]["tools"]]
        reset(ws, task_id=TRIAGE.id)
        ws.send_json({"type": "step", "data": {"type": "list_tools"}})
        tools = ws.receive_json()["data"]["observation"]["tools"]
        reserved = call(ws, "reset")
    names = [t["name"] for t in tools]
    assert names[-1] == "reply" and all(n.startswith("tickets__") for n in names[:-1])
    assert {"crm__get_contact", "payments__create_refund", "tickets__get_ticket", "reply"} <= set(before)
    assert not {"reset", "step", "state", "close"} & (set(names) | set(before))
    assert all(t["input_schema"]["type"] == "object" and t["description"] for t in tools)
    assert reserved["observation"]["error"]["error_type"] == "tool_not_found" and not reserved["done"]


def test_tool_errors_come_back_as_answers_and_the_episode_goes_on(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        reset(ws, task_id=TRIAGE.id)
        unknown = call(ws, "tickets__no_such_tool")
        other_service = call(ws, "payments__list_charges")
        bad_arguments = call(ws, "tickets__get_ticket", ticket_id=123)
        missing = call(ws, "tickets__get_ticket", ticket="tkt_1001")
        business = call(ws, "tickets__get_ticket", ticket_id="tkt_9999")
        bad_reply = call(ws, "reply", message="hello")
        fine = call(ws, "tickets__search_tickets")
    assert unknown["observation"]["error"]["error_type"] == "tool_not_found"
    assert other_service["observation"]["error"]["error_type"] == "tool_not_found"
    assert bad_arguments["observation"]["error"]["error_type"] == "invalid_args"
    assert missing["observation"]["error"]["error_type"] == "invalid_args"
    assert business["observation"]["error"]["error_type"] == "execution_error"
    assert "tkt_9999" in business["observation"]["error"]["message"]
    assert bad_reply["observation"]["error"]["error_type"] == "invalid_args"
    for answer in (unknown, other_service, bad_arguments, missing, business, bad_reply):
        assert answer["done"] is False and answer["reward"] is None
        assert answer["observation"]["result"]["is_error"] is True
    assert fine["observation"]["error"] is None and fine["observation"]["result"]["structured_content"]


def test_malformed_frames_and_actions_are_error_frames_and_the_session_goes_on(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        ws.send_text("{not json")
        assert ws.receive_json()["data"]["code"] == "INVALID_JSON"
        ws.send_json({"type": "dance"})
        assert ws.receive_json()["data"]["code"] == "UNKNOWN_TYPE"
        ws.send_json({"type": "step", "data": {"type": "call_tool"}})
        assert ws.receive_json()["data"]["code"] == "VALIDATION_ERROR"
        ws.send_json({"type": "step", "data": {"type": "call_tool", "tool_name": "reply", "arguments": "hi"}})
        assert ws.receive_json()["data"]["code"] == "VALIDATION_ERROR"
        assert reset(ws, task_id=TRIAGE.id)["type"] == "observation"
    assert client.post("/step", json={"action": {"type": "jump"}}).status_code == 422


def test_the_reference_replies_its_way_to_reward_one_with_the_grade_in_the_metadata(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        reset(ws, task_id=TRIAGE.id)
        answers = [call(ws, a["tool_name"], **a["arguments"]) for a in reference_actions(TRIAGE)]
        last = call(ws, "reply", text="Done: assigned to Kim Nguyen with a public reply on each.")
        ws.send_json({"type": "state"})
        state = ws.receive_json()["data"]
    assert all(not a["done"] and a["observation"]["error"] is None for a in answers)
    assert last["done"] is True and last["reward"] == 1.0
    grade = last["metadata"]["grade"]
    assert grade["score"] == 1.0 and grade["safety"] == 1.0 and grade["checks"] and grade["task_id"] == TRIAGE.id
    assert last["observation"]["metadata"] == last["metadata"]
    assert state == {
        "episode_id": state["episode_id"],
        "step_count": len(answers) + 1,
        "task_id": TRIAGE.id,
        "done": True,
    }


def test_a_step_after_the_end_is_refused_without_a_second_reward(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        reset(ws, task_id=REFUND.id)
        ended = call(ws, "reply", text="I did nothing.")
        after = call(ws, "payments__list_charges")
        again = call(ws, "reply", text="Still nothing.")
        restarted = reset(ws, task_id=REFUND.id)
    assert ended["done"] is True and ended["reward"] == 0.0
    for refused in (after, again):
        assert refused["done"] is True and refused["reward"] is None
        assert "episode is over" in refused["observation"]["error"]["message"]
    assert restarted["data"]["done"] is False


def test_reply_with_a_user_turn_pending_returns_the_users_next_message(client: TestClient) -> None:
    actions = reference_actions(CLARIFY)
    asked = next(i for i, a in enumerate(actions) if a["tool_name"] == "reply")
    with client.websocket_connect("/ws") as ws:
        reset(ws, task_id=CLARIFY.id)
        answers = [call(ws, a["tool_name"], **a["arguments"]) for a in actions]
        while not answers[-1]["done"]:
            answers.append(call(ws, "reply", text="Done."))
    question = answers[asked]
    assert question["done"] is False and question["reward"] is None
    assert question["observation"]["user_message"] == "I mean Yara Reyes at Initech Labs."
    assert question["observation"]["result"]["content"][0]["text"] == "I mean Yara Reyes at Initech Labs."
    assert answers[-1]["reward"] == 1.0


def test_two_sessions_never_see_each_others_state(client: TestClient) -> None:
    with client.websocket_connect("/ws") as a, client.websocket_connect("/ws") as b:
        reset(a, task_id=TRIAGE.id)
        reset(b, task_id=TRIAGE.id)
        kim = call(a, "tickets__search_users", query="Kim", role="agent")["observation"]["result"]["data"]["items"][0]
        call(a, "tickets__assign_ticket", ticket_id="tkt_1010", assignee_id=kim["id"])
        seen_a = call(a, "tickets__get_ticket", ticket_id="tkt_1010")["observation"]["result"]["structured_content"]
        seen_b = call(b, "tickets__get_ticket", ticket_id="tkt_1010")["observation"]["result"]["structured_content"]
        assert client.app.state.sessions.open.__len__() == 2  # type: ignore[attr-defined]
        b_ends = call(b, "reply", text="Nothing to do.")
    assert seen_a["assignee_id"] == kim["id"] and seen_b["assignee_id"] != kim["id"]
    assert b_ends["metadata"]["grade"]["unexplained"] == []  # a's change is not in b's workspace
    assert client.get("/health").json()["sessions"] == 0  # closing a session frees it


def test_the_step_limit_ends_the_episode_graded_as_it_stands() -> None:
    with TestClient(create_app(POOL, limits=Limits(max_steps=2))) as client, client.websocket_connect("/ws") as ws:
        reset(ws, task_id=TRIAGE.id)
        first = call(ws, "tickets__search_tickets")
        second = call(ws, "tickets__search_tickets")
        third = call(ws, "tickets__search_tickets")
    assert first["done"] is False and second["done"] is False
    assert (
        third["done"] is True
        and third["reward"] == 0.0
        and "limit" in third["observation"]["result"]["content"][0]["text"]
    )


def test_sessions_past_the_maximum_are_refused_as_at_capacity() -> None:
    with TestClient(create_app(POOL, max_sessions=1)) as client, client.websocket_connect("/ws") as first:
        assert reset(first, task_id=TRIAGE.id)["type"] == "observation"
        with client.websocket_connect("/ws") as second:
            refused = second.receive_json()
        created = client.post("/mcp", json={"jsonrpc": "2.0", "method": "openenv/session/create", "id": 1}).json()
    assert refused["data"]["code"] == "CAPACITY_REACHED"
    assert created["error"]["code"] == -32000 and created["error"]["data"]["max_sessions"] == 1


def test_an_http_mcp_session_lists_and_calls_tools_and_a_socket_attaches_to_it(client: TestClient) -> None:
    def rpc(method: str, **params: Any) -> dict[str, Any]:
        answer: dict[str, Any] = client.post(
            "/mcp", json={"jsonrpc": "2.0", "method": method, "params": params, "id": 7}
        ).json()
        assert answer["id"] == 7
        return answer

    session = rpc("openenv/session/create")["result"]["session_id"]
    with client.websocket_connect(f"/ws?session_id={session}") as ws:
        assert reset(ws, task_id=REFUND.id)["type"] == "observation"
        listed = rpc("tools/list", session_id=session)["result"]["tools"]
        charges = rpc("tools/call", session_id=session, name="payments__list_charges", arguments={})["result"]
        closing = rpc("openenv/session/close", session_id=session)["result"]
        ended = call(ws, "reply", text="Nothing done.")
    assert {t["name"] for t in listed} >= {"payments__create_refund", "reply"}
    assert charges["tool_name"] == "payments__list_charges" and charges["done"] is False and charges["error"] is None
    assert closing == {"session_id": session, "closed": False, "closing": True}
    assert ended["done"] is True
    assert client.get("/health").json()["sessions"] == 0  # closed when its socket went
    assert rpc("tools/call", session_id=session, name="reply", arguments={"text": "x"})["error"]["code"] == -32602
    assert rpc("no/such")["error"]["code"] == -32601


def test_http_reset_step_and_state_are_stateless_as_in_openenv(client: TestClient) -> None:
    first = client.post("/reset", json={"task_id": TRIAGE.id, "seed": 0}).json()
    listed = client.post("/step", json={"action": {"type": "list_tools"}}).json()
    unplayed = client.post("/step", json={"action": {"tool_name": "tickets__search_tickets"}}).json()
    assert first["observation"]["request"] == TRIAGE.request and first["done"] is False
    assert {t["name"] for t in listed["observation"]["tools"]} >= {"crm__get_contact", "reply"}
    assert "call reset" in unplayed["observation"]["error"]["message"]
    assert client.get("/state").json() == {"episode_id": None, "step_count": 0, "task_id": None, "done": False}
    assert client.get("/health").json()["sessions"] == 0


def test_schema_metadata_health_and_tasks_describe_the_environment(client: TestClient) -> None:
    schema = client.get("/schema").json()
    assert schema["action"]["title"] == "CallToolAction" and schema["action"]["required"] == ["tool_name"]
    assert {"observation", "state", "reset_observation"} <= set(schema)
    assert client.get("/metadata").json()["name"] == "coworkenv"
    assert client.get("/health").json()["status"] == "healthy"
    assert [t["id"] for t in client.get("/tasks").json()["tasks"]] == POOL.ids


def test_the_serve_command_refuses_a_host_beyond_loopback_without_a_token(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from coworkenv.train.cli import main

    result = CliRunner().invoke(
        main, ["openenv", "serve", "--tasks", str(EXAMPLES), "--host", "0.0.0.0"], env={"COWORKENV_TOKEN": ""}
    )
    assert result.exit_code == 1 and "needs a bearer token" in result.output


def test_a_foreign_host_or_origin_is_refused_as_by_serve_against_dns_rebinding() -> None:
    from coworkenv.servers.kit.http_auth import HostGuardMiddleware, security_settings

    guarded = HostGuardMiddleware(create_app(POOL), security_settings("127.0.0.1"))
    with TestClient(guarded, base_url="http://127.0.0.1:8000") as ours:
        assert ours.get("/health").status_code == 200
        assert ours.get("/health", headers={"Origin": "http://localhost:8000"}).status_code == 200
        assert ours.get("/health", headers={"Host": "evil.example"}).status_code == 421
        assert ours.get("/health", headers={"Origin": "http://evil.example"}).status_code == 403
    allowed = HostGuardMiddleware(create_app(POOL), security_settings("127.0.0.1", ["envs.internal"]))
    with TestClient(allowed, base_url="http://envs.internal:8000") as theirs:
        assert theirs.get("/health").status_code == 200
