"""The service kit: seeds, clock, ids, transactions, the audit log, the privileged API (its two doors:
``test_door.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from coworkenv.servers.kit import (
    Environment,
    EnvironmentConfigError,
    Record,
    SeedError,
    Service,
    ServiceError,
    ServiceState,
    Table,
    ToolContext,
    tool,
)
from coworkenv.servers.registry import shipped_services
from coworkenv.servers.tickets import SERVICE as TICKETS

pytestmark = pytest.mark.anyio
EXAMPLES = Path(__file__).parents[3] / "servers/examples"
SEED = json.loads((EXAMPLES / "tickets.json").read_text())


class Note(Record):
    text: str
    n: int = 0


class Done(BaseModel):
    id: str


@tool()
def add_then_fail(ctx: ToolContext, text: Annotated[str, Field(description="x")]) -> Done:
    """Inserts a note, then fails as a business error."""
    ctx.table("notes").insert({"id": ctx.new_id("notes"), "text": text})
    raise ServiceError("refused after writing", "Do something else.")


@tool()
def add_then_crash(ctx: ToolContext, text: Annotated[str, Field(description="x")]) -> Done:
    """Inserts a note, then crashes."""
    ctx.table("notes").insert({"id": ctx.new_id("notes"), "text": text})
    raise RuntimeError("bug")


@tool()
def add_note(ctx: ToolContext, text: Annotated[str, Field(description="x")]) -> Done:
    """Inserts a note."""
    note_id = ctx.new_id("notes")
    ctx.table("notes").insert({"id": note_id, "text": text})
    return Done(id=note_id)


NOTES = Service(
    name="notes",
    title="Notes",
    instructions="test",
    tables=(Table("notes", Note, "nt_"),),
    tools=(add_then_fail, add_then_crash, add_note),
)


def test_a_bad_seed_record_is_named_by_table_index_and_field_and_nothing_loads(tmp_path: Path) -> None:
    bad = json.loads(json.dumps(SEED))
    bad["tickets"][3]["priority"] = "asap"
    with pytest.raises(SeedError, match=r"tickets\.tickets\[3\] field 'priority'"):
        ServiceState.open(TICKETS, bad, path=tmp_path / "t.db")
    assert not (tmp_path / "t.db").exists()


@pytest.mark.parametrize(
    ("seed", "message"),
    [
        ({"tickettes": []}, "unknown table 'tickettes'"),
        ({"tickets": {"id": "x"}}, "expected a list"),
        (
            {"users": [{"id": "u", "name": "n", "email": "e"}, {"id": "u", "name": "m", "email": "f"}]},
            "duplicate id 'u'",
        ),
        ({"users": ["not an object"]}, r"users\[0\]: expected an object"),
        ({"users": [{"id": "u", "name": "n", "email": "e", "shoe_size": 9}]}, "field 'shoe_size'"),
        ([1, 2], "must be an object"),
    ],
)
def test_malformed_seeds_fail_with_a_message_that_says_where(seed: Any, message: str) -> None:
    with pytest.raises(SeedError, match=message):
        Environment.create({"tickets": seed})


def test_seed_times_in_any_iso_form_are_stored_canonically() -> None:
    seed = {
        "users": [{"id": "u", "name": "n", "email": "e"}],
        "tickets": [
            {
                "id": "t",
                "subject": "s",
                "requester_id": "u",
                "created_at": "2026-03-01T10:00:00+02:00",
                "updated_at": "2026-03-01T08:00:00.000Z",
            }
        ],
    }
    with Environment.create({"tickets": seed}) as env:
        row = env.dump()["tickets"]["tickets"][0]
        assert (row["created_at"], row["updated_at"]) == ("2026-03-01T08:00:00Z", "2026-03-01T08:00:00Z")


def test_unknown_services_and_bad_clocks_are_clear_errors() -> None:
    with pytest.raises(EnvironmentConfigError, match="unknown service"):
        Environment.create({"spreadsheets": {}})
    with pytest.raises(EnvironmentConfigError, match="ISO 8601"):
        Environment.create({"tickets": {}}, now="yesterday")
    with Environment.create(["tickets"]) as env, pytest.raises(EnvironmentConfigError, match="not in this environment"):
        env.state("email")


async def test_a_business_error_rolls_back_the_tools_writes_but_keeps_its_audit_row() -> None:
    with Environment.create({"notes": {}}, registry={"notes": NOTES}) as env:
        result = await env.call("notes", "add_then_fail", {"text": "a"})
        assert result.is_error and result.text == "refused after writing Do something else."
        crashed = await env.call("notes", "add_then_crash", {"text": "b"})
        assert crashed.outcome == "internal_error" and "nothing was changed" in crashed.text
        assert env.dump() == {"notes": {"notes": []}}
        assert [(r.tool, r.outcome, r.state_changed) for r in env.audit()] == [
            ("add_then_fail", "error", False),
            ("add_then_crash", "internal_error", False),
        ]


async def test_ids_do_not_advance_when_a_call_is_rolled_back() -> None:
    with (
        Environment.create({"notes": {}}, registry={"notes": NOTES}) as a,
        Environment.create({"notes": {}}, registry={"notes": NOTES}) as b,
    ):
        await a.call("notes", "add_then_fail", {"text": "x"})
        first_a = (await a.call("notes", "add_note", {"text": "x"})).data
        first_b = (await b.call("notes", "add_note", {"text": "x"})).data
        assert first_a == first_b and first_a is not None and first_a["id"].startswith("nt_")


async def test_reset_returns_to_the_seed_with_an_empty_audit_log_and_the_first_clock() -> None:
    with Environment.create({"tickets": SEED}, now="2026-03-02T09:00:00Z") as env:
        fresh = env.state_hash()
        await env.call("tickets", "escalate_ticket", {"ticket_id": "tkt_1002", "reason": "x"})
        env.clock.advance(3600)
        assert env.state_hash() != fresh
        env.reset()
        assert env.state_hash() == fresh and env.audit() == [] and env.clock.iso() == "2026-03-02T09:00:00Z"


async def test_the_state_hash_is_stable_and_tracks_every_change() -> None:
    with Environment.create({"tickets": SEED}) as a, Environment.create({"tickets": SEED}) as b:
        assert a.state_hash() == b.state_hash()
        await a.call("tickets", "get_ticket", {"ticket_id": "tkt_1001"})
        assert a.state_hash() == b.state_hash()
        await a.call("tickets", "update_ticket", {"ticket_id": "tkt_1001", "add_tags": ["x"]})
        assert a.state_hash() != b.state_hash()
        assert json.loads(a.dump_json()) == a.dump()


async def test_the_clock_stamps_records_and_moves_only_when_told() -> None:
    with Environment.create({"tickets": SEED}, now="2026-03-02T09:00:00Z") as env:
        env.clock.advance(90)
        res = await env.call("tickets", "add_comment", {"ticket_id": "tkt_1002", "body": "hi"})
        assert res.data is not None and res.data["created_at"] == "2026-03-02T09:01:30Z"
        assert env.audit()[-1].sim_time == "2026-03-02T09:01:30Z"
        with pytest.raises(EnvironmentConfigError):
            env.clock.advance(-1)


async def test_a_file_database_reopens_with_its_clock_and_refuses_a_second_seed(tmp_path: Path) -> None:
    db = tmp_path / "tickets.db"
    state = ServiceState.open(TICKETS, SEED, "2026-03-05T12:00:00Z", db)
    await state.call("add_comment", {"ticket_id": "tkt_1002", "body": "persisted"})
    state.close()
    again = ServiceState.open(TICKETS, path=db)
    assert again.clock.iso() == "2026-03-05T12:00:00Z" and len(again.audit()) == 1
    assert [c["body"] for c in again.dump()["comments"] if c["ticket_id"] == "tkt_1002"] == ["persisted"]
    again.close()
    with pytest.raises(EnvironmentConfigError, match="already seeded"):
        ServiceState.open(TICKETS, SEED, path=db)
    with pytest.raises(EnvironmentConfigError, match="holds the 'tickets' service"):
        ServiceState.open(NOTES, path=db)


def test_nothing_privileged_is_a_tool_in_any_service() -> None:
    privileged = ("seed", "reset", "dump", "audit", "grade", "state_hash", "sql", "execute")
    for service in shipped_services().values():
        for spec in service.tools:
            assert not any(word in spec.name for word in privileged), f"{service.name}.{spec.name}"


def test_every_service_tool_describes_itself_and_each_argument() -> None:
    for service in shipped_services().values():
        assert len(service.tools) >= 8, service.name
        for spec in service.tools:
            assert len(spec.description) > 20, f"{service.name}.{spec.name}"
            props = spec.input_schema().get("properties", {})
            for arg, schema in props.items():
                assert schema.get("description"), f"{service.name}.{spec.name}({arg}) has no description"
            assert spec.annotations.read_only_hint is not None


def test_the_tool_decorator_refuses_functions_it_cannot_describe() -> None:
    async def awaiting_tool(ctx: ToolContext) -> Done:
        """doc"""
        return Done(id="x")

    def no_doc(ctx: ToolContext) -> Done:
        return Done(id="x")

    def untyped_result(ctx: ToolContext):  # type: ignore[no-untyped-def]
        """doc"""

    def no_ctx(x: int) -> Done:
        """doc"""
        return Done(id="x")

    for fn, message in (
        (awaiting_tool, "plain function"),
        (no_doc, "docstring"),
        (untyped_result, "pydantic model"),
        (no_ctx, "ctx"),
    ):
        with pytest.raises(TypeError, match=message):
            tool()(fn)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("table", "index", "field", "value"),
    [
        ("tickets", 2, "requester_id", "usr_ghost"),
        ("comments", 0, "ticket_id", "tkt_gone"),
        ("users", 4, "organization_id", "org_x"),
    ],
)
def test_a_seed_reference_to_a_missing_record_is_named(table: str, index: int, field: str, value: str) -> None:
    bad = json.loads(json.dumps(SEED))
    bad[table][index][field] = value
    with pytest.raises(SeedError, match=rf"tickets\.{table}\[{index}\] field '{field}': '{value}' is not the id"):
        Environment.create({"tickets": bad})


def test_service_rules_across_records_are_checked_on_the_seed() -> None:
    seed = json.loads((EXAMPLES / "email.json").read_text())
    seed["mailboxes"][1]["is_primary"] = True
    seed["mailboxes"][0]["is_primary"] = True
    with pytest.raises(SeedError, match="only one mailbox can be the primary"):
        Environment.create({"email": seed})
