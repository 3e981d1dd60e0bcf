"""The files service, through the in-memory MCP client: folders, versions, CSV rows, moving, sharing, both doors,
the real stdio and HTTP transports, and fuzzed arguments."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from coworkenv.servers.files import SERVICE
from coworkenv.servers.kit import Environment, SeedError, SensitiveContext, ServiceState
from tests.conftest import NOW, error_text, ok, service_client
from tests.servers.kit.test_fuzz import calls, run_batch
from tests.servers.kit.test_transports import serve_params

pytestmark = pytest.mark.anyio
EXAMPLE = Path(__file__).parents[3] / "servers/examples/files.json"
SEED: dict[str, Any] = json.loads(EXAMPLE.read_text())
DANA, LENA = "dana@brightwave.io", "lena.ortiz@brightwave.io"


async def call(c: Client, tool: str, **args: Any) -> dict[str, Any]:
    return ok(await c.call_tool(tool, args))


async def fail(c: Client, tool: str, **args: Any) -> str:
    return error_text(await c.call_tool(tool, args))


def ids(page: dict[str, Any]) -> list[str]:
    return [item["id"] for item in page["items"]]


# ---------------------------------------------------------------------------------------------- seed and surface
def test_the_example_seed_loads_every_table_with_types_and_sizes_derived() -> None:
    with Environment.create({"files": SEED}, registry={"files": SERVICE}) as env:
        dump = env.dump()["files"]
    assert {t: len(rows) for t, rows in dump.items()} == {"users": 6, "folders": 6, "files": 13, "versions": 5}
    readme = next(f for f in dump["files"] if f["id"] == "file_readme")
    assert readme["mime_type"] == "text/plain" and readme["size"] == len(readme["content"].encode())
    assert readme["updated_at"] == readme["created_at"] and readme["last_modified_by"] == DANA


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s["files"][0].update(owner="x@y.io"), r"files\[0\] field 'owner': 'x@y.io' is not a member"),
        (lambda s: s["files"][2].update(name="PAYOUTS-FEB.csv"), "is already in that folder"),
        (lambda s: s["folders"][0].update(parent_id="fld_payouts"), "form a loop"),
        (lambda s: s["files"][0].update(name="notes.docx"), "no supported extension"),
        (lambda s: s["files"][0].update(mime_type="text/csv"), "does not match the extension"),
        (lambda s: s["files"][0].update(name="a/b.txt"), r"files\[0\] field 'name'"),
        (lambda s: s["versions"][1].update(number=1), "already has a version 1"),
        (lambda s: s["versions"][4].update(number=4), "past the file's current version 3"),
        (lambda s: s["versions"][4].update(content="other"), "must equal the file's"),
        (lambda s: s["files"][11]["shares"].append(s["files"][11]["shares"][0]), "listed twice in shares"),
        (lambda s: s["files"][1].update(folder_id="fld_gone"), "'fld_gone' is not the id of any folders"),
    ],
)
def test_seed_rules_are_checked_with_one_line_errors(change: Any, message: str) -> None:
    bad = copy.deepcopy(SEED)
    change(bad)
    with pytest.raises(SeedError, match=message) as caught:
        Environment.create({"files": bad}, registry={"files": SERVICE})
    assert "\n" not in str(caught.value)


async def test_every_tool_describes_its_arguments_with_examples_and_is_annotated() -> None:
    async with service_client(SERVICE) as (c, _):
        tools = {t.name: t for t in (await c.list_tools()).tools}
    assert len(tools) == 13
    for name, t in tools.items():
        assert t.description and len(t.description) > 60, name
        for arg, schema in t.input_schema["properties"].items():
            assert "Example" in schema.get("description", ""), (name, arg)
    read_only = {n for n, t in tools.items() if t.annotations and t.annotations.read_only_hint}
    assert read_only == {"list_files", "search_files", "read_file", "read_csv", "list_versions"}
    destructive = {n for n, t in tools.items() if t.annotations and t.annotations.destructive_hint}
    assert destructive == {"write_file", "delete_file", "share_file", "unshare_file"}


# ---------------------------------------------------------------------------------------------- listing and search
async def test_list_files_shows_a_folder_its_subfolders_and_paths() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        top = await call(c, "list_files")
        assert [f["path"] for f in top["folders"]] == ["/Archive", "/Customers", "/Finance", "/Support"]
        assert ids(top) == ["file_readme"]
        finance = await call(c, "list_files", folder_id="fld_finance")
        assert [f["path"] for f in finance["folders"]] == ["/Finance/Payouts"]
        assert ids(finance) == ["file_invoices_q1"]  # the salary bands are private to Lena
        payouts = await call(c, "list_files", folder_id="fld_payouts")
        assert [f["path"] for f in payouts["items"]] == [
            "/Finance/Payouts/payouts-feb.csv",
            "/Finance/Payouts/payouts-jan.csv",
        ]
        assert payouts["items"][1]["your_role"] == "viewer" and payouts["items"][0]["version"] == 2
        assert (await call(c, "list_files", folder_id="fld_archive"))["total"] == 0
        assert ids(await call(c, "list_files", folder_id="fld_archive", include_trashed=True)) == ["file_prices_2025"]
        assert "create_folder" in await fail(c, "list_files", folder_id="fld_nope")


async def test_search_files_finds_by_text_type_owner_and_time() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        assert set(ids(await call(c, "search_files", query="STELLAR"))) == {
            "file_payouts_feb",
            "file_payouts_jan",
            "file_invoices_q1",
        }
        csvs = await call(c, "search_files", mime_type="text/csv", owner="me")
        assert ids(csvs) == ["file_weekly_metrics", "file_refund_log"]
        assert (await call(c, "search_files", query="salary"))["total"] == 0
        recent = await call(c, "search_files", modified_after="2026-02-26T00:00:00Z")
        assert ids(recent) == ["file_ticket_export", "file_weekly_metrics", "file_oncall_rota"]
        assert (await call(c, "search_files", query="price-list"))["total"] == 0  # trashed
        assert "page_size" in await fail(c, "search_files", page_size=0)


# ---------------------------------------------------------------------------------------------- versions
async def test_writes_and_appends_add_versions_and_old_versions_stay_readable() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        env.clock.advance(60)
        written = await call(c, "write_file", file_id="file_readme", content="Drive map.\n", base_version=1)
        assert (written["version"], written["last_modified_by"], written["updated_at"]) == (
            2,
            DANA,
            "2026-03-02T09:01:00Z",
        )
        appended = await call(c, "append_to_file", file_id="file_readme", text="Ask Dana for access.")
        assert appended["version"] == 3 and appended["content"] == "Drive map.\nAsk Dana for access."
        again = await call(c, "append_to_file", file_id="file_readme", text="More.")
        assert again["content"].endswith("access.\nMore.") and again["version"] == 4
        first = await call(c, "read_file", file_id="file_readme", version=1)
        assert first["content"].startswith("Shared drive of the Brightwave") and first["current_version"] == 4
        assert first["version"] == 1 and first["last_modified_by"] == DANA
        history = await call(c, "list_versions", file_id="file_readme")
        assert [(v["number"], v["summary"], v["is_current"]) for v in history["items"]] == [
            (4, "Appended 1 line", True),
            (3, "Appended 1 line", False),
            (2, "Replaced the content", False),
            (1, "", False),
        ]
        same = await call(c, "write_file", file_id="file_readme", content=again["content"])
        assert same["version"] == 4  # nothing changed: no new version
        assert "has no version 9" in await fail(c, "read_file", file_id="file_readme", version=9)


async def test_seeded_history_is_kept_and_a_stale_base_version_is_a_conflict() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        old = await call(c, "read_file", file_id="file_escalation_notes", version=1)
        assert old["content"].count("\n- ") == 1 and old["last_modified_by"] == DANA
        before = env.state_hash()
        text = await fail(c, "write_file", file_id="file_escalation_notes", content="mine", base_version=2)
        assert "at version 3, not 2" in text and "read_file" in text and "base_version 3" in text
        assert "at version 3, not 1" in await fail(
            c, "append_to_file", file_id="file_escalation_notes", text="x", base_version=1
        )
        assert env.state_hash() == before


async def test_viewers_cannot_change_a_file_and_are_told_what_to_do() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        text = await fail(c, "append_to_file", file_id="file_payouts_jan", text="x,y,1,paid")
        assert "is a viewer" in text and "Ask the owner (lena.ortiz@brightwave.io)" in text and "create_file" in text
        assert "no access" in await fail(c, "read_file", file_id="file_salary_bands")
        assert "search_files" in await fail(c, "read_file", file_id="file_nope")
        assert "in the trash" in await fail(c, "write_file", file_id="file_prices_2025", content="x")


# ---------------------------------------------------------------------------------------------- CSV
async def test_a_csv_is_read_as_rows_keyed_by_its_header() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        table = await call(c, "read_csv", file_id="file_payouts_feb")
        assert table["header"] == ["vendor", "invoice", "amount_usd", "status"] and table["row_count"] == 4
        assert table["rows"][3] == {
            "vendor": "Acme Office Supply, Inc.",
            "invoice": "AOS-77",
            "amount_usd": "92.10",
            "status": "on hold",
        }
        page = await call(c, "read_csv", file_id="file_payouts_feb", offset=1, limit=2)
        assert [r["invoice"] for r in page["rows"]] == ["NH-889", "BC-311"] and page["next_offset"] == 3
        first = await call(c, "read_csv", file_id="file_payouts_feb", version=1)
        assert (first["version"], first["row_count"]) == (1, 2)


async def test_a_malformed_csv_is_a_clear_error_naming_the_line() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        text = await fail(c, "read_csv", file_id="file_ticket_export")
        assert "line 3 has 4 fields, the header has 3" in text and "read_file" in text and "write_file" in text
        assert "not a CSV file" in await fail(c, "read_csv", file_id="file_readme")
        made = await call(c, "create_file", name="blank.csv", content="")
        assert "no header line" in await fail(c, "read_csv", file_id=made["id"])
        before = env.state_hash()
        assert "broken quote" not in (text := await fail(c, "create_file", name="q.csv", content='a,b\n"x,1\n'))
        assert "malformed" in text
        assert "repeats the column 'a'" in await fail(c, "create_file", name="d.csv", content="a,a\n1,2\n")
        text = await fail(c, "append_to_file", file_id="file_payouts_feb", text="Globex,G-1,10.00")
        assert "line 6 has 3 fields, the header has 4" in text
        assert env.state_hash() == before


# ---------------------------------------------------------------------------------------------- creating and moving
async def test_create_file_and_folder_stamp_the_clock_and_refuse_clashes() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        folder = await call(c, "create_folder", name="March", parent_id="fld_payouts")
        assert folder["path"] == "/Finance/Payouts/March" and folder["created_at"] == NOW
        made = await call(c, "create_file", name="payouts-mar.csv", content="vendor,amount\n", folder_id=folder["id"])
        assert made["id"].startswith("file_") and (made["version"], made["owner"], made["mime_type"]) == (
            1,
            DANA,
            "text/csv",
        )
        assert made["path"] == "/Finance/Payouts/March/payouts-mar.csv"
        history = await call(c, "list_versions", file_id=made["id"])
        assert [(v["number"], v["summary"]) for v in history["items"]] == [(1, "Created the file")]
        assert "already exists (file_readme)" in await fail(c, "create_file", name="readme.TXT")
        assert "already exists" in await fail(c, "create_folder", name="march", parent_id="fld_payouts")
        assert ".txt, .md or .csv" in await fail(c, "create_file", name="report.pdf")
        assert "name" in await fail(c, "create_file", name="a/b.txt")
        assert "create_folder" in await fail(c, "create_file", name="x.md", folder_id="fld_nope")
        assert len(env.dump()["files"]["files"]) == 14


async def test_moving_into_a_missing_folder_is_a_clear_error_and_a_real_move_keeps_the_history() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        before = env.state_hash()
        text = await fail(c, "move_file", file_id="file_refund_log", folder_id="fld_refunds")
        assert "there is no folder with id 'fld_refunds'" in text and "create_folder" in text
        assert "changes the file's type" in await fail(c, "move_file", file_id="file_refund_log", name="refunds.md")
        text = await fail(c, "move_file", file_id="file_weekly_metrics", folder_id="fld_support", name="Refund-Log.csv")
        assert "/Support/refund-log.csv already exists" in text
        assert env.state_hash() == before
        moved = await call(
            c, "move_file", file_id="file_escalation_notes", folder_id="fld_archive", name="old-notes.md"
        )
        assert moved["path"] == "/Archive/old-notes.md" and moved["version"] == 3
        top = await call(c, "move_file", file_id="file_escalation_notes", folder_id="root")
        assert top["path"] == "/old-notes.md"
        assert (await call(c, "read_file", file_id="file_escalation_notes", version=1))["version"] == 1


async def test_deleting_moves_a_file_to_the_trash_once() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        gone = await call(c, "delete_file", file_id="file_oncall_rota")
        assert gone["trashed"] is True
        assert "file_oncall_rota" not in ids(await call(c, "list_files", folder_id="fld_support"))
        again = await call(c, "delete_file", file_id="file_oncall_rota")
        assert again == gone and env.audit("files")[-1].state_changed is False
        assert (await call(c, "read_file", file_id="file_oncall_rota"))["content"].startswith("# On-call")


# ---------------------------------------------------------------------------------------------- sharing
async def test_share_and_unshare_give_and_take_away_a_role() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        shared = await call(c, "share_file", file_id="file_refund_log", email="Lena.Ortiz@brightwave.io", role="viewer")
        assert shared["shares"] == [{"email": LENA, "role": "viewer"}]
        same = await call(c, "share_file", file_id="file_refund_log", email=LENA, role="viewer")
        assert same["shares"] == shared["shares"]
        assert (await call(c, "unshare_file", file_id="file_refund_log", email=LENA))["shares"] == []
        assert "not shared with" in await fail(c, "unshare_file", file_id="file_refund_log", email=LENA)
        assert "not an email address" in await fail(
            c, "share_file", file_id="file_refund_log", email="lena", role="viewer"
        )
        assert "already has full access" in await fail(
            c, "share_file", file_id="file_refund_log", email=DANA, role="editor"
        )
        assert "role" in await fail(c, "share_file", file_id="file_refund_log", email=LENA, role="owner")


async def hits_of(calls_made: list[tuple[str, dict[str, Any]]]) -> set[str]:
    with Environment.create({"files": SEED}, now=NOW, registry={"files": SERVICE}) as env:
        before = env.dump()["files"]
        for tool, args in calls_made:
            result = await env.call("files", tool, args)
            assert not result.is_error, result.text
        after = env.dump()["files"]
    ctx = SensitiveContext(before, after)
    return {f"{h.kind} {h.key}" for ch in SERVICE.diff(before, after) for h in SERVICE.sensitive_hits(ch, ctx)}


async def test_sharing_a_file_with_an_outside_address_is_sensitive_and_inside_is_not() -> None:
    share = {"file_id": "file_customer_contacts", "email": "someone@gmail.com", "role": "viewer"}
    assert await hits_of([("share_file", share)]) == {
        "external_share external_share:file_customer_contacts:someone@gmail.com"
    }
    assert await hits_of([("share_file", share | {"email": "kim.nguyen@brightwave.io"})]) == set()


async def test_overwriting_most_of_a_file_or_trashing_it_is_sensitive_and_appending_is_not() -> None:
    wipe = {"file_id": "file_refund_log", "content": "date,charge,customer,amount_usd,approved_by\n"}
    assert await hits_of([("write_file", wipe)]) == {"overwrite overwrite:file_refund_log"}
    assert await hits_of([("delete_file", {"file_id": "file_refund_log"})]) == {"trash trash:file_refund_log"}
    row = {"file_id": "file_refund_log", "text": "2026-03-02,ch_1020,Acme,10.00,dana@brightwave.io"}
    assert (
        await hits_of([("append_to_file", row), ("move_file", {"file_id": "file_readme", "folder_id": "fld_archive"})])
        == set()
    )


# ---------------------------------------------------------------------------------------------- doors and transports
async def test_both_doors_give_the_same_results_and_audit_rows() -> None:
    calls_made: list[tuple[str, dict[str, Any]]] = [
        ("read_csv", {"file_id": "file_payouts_feb"}),
        ("append_to_file", {"file_id": "file_readme", "text": "hello"}),
        ("move_file", {"file_id": "file_readme", "folder_id": "fld_gone"}),
        ("read_file", {"file_id": "file_readme", "surprise": 1}),
    ]
    keep = ("tool", "arguments", "outcome", "result", "error", "state_changed", "actor")
    with (
        anyio.fail_after(10),
        Environment.create({"files": SEED}, now=NOW) as direct,
        Environment.create({"files": SEED}, now=NOW) as over_mcp,
    ):
        results = [await direct.call("files", tool, args) for tool, args in calls_made]
        async with Client(over_mcp.server("files")) as client:
            answers = [await client.call_tool(tool, args) for tool, args in calls_made]
        assert [r.data for r in results] == [a.structured_content if not a.is_error else None for a in answers]
        rows_d = [{k: r.to_dict()[k] for k in keep} for r in direct.audit()]
        rows_m = [{k: r.to_dict()[k] for k in keep} for r in over_mcp.audit()]
        assert rows_d == rows_m and [r["outcome"] for r in rows_d] == ["ok", "ok", "error", "invalid_arguments"]
        assert direct.state_hash() == over_mcp.state_hash()


async def test_the_service_answers_a_real_client_over_stdio(tmp_path: Path) -> None:
    db = tmp_path / "files.db"
    with anyio.fail_after(30):
        async with Client(serve_params("files", db, "--seed", str(EXAMPLE), "--now", NOW)) as client:
            assert len((await client.list_tools()).tools) == len(SERVICE.tools)
            rows = await client.call_tool("read_csv", {"file_id": "file_refund_log"})
            assert rows.structured_content is not None and rows.structured_content["row_count"] == 3
            assert (await client.call_tool("read_csv", {"file_id": "file_ticket_export"})).is_error
    state = ServiceState.open(SERVICE, path=db)
    try:
        assert [(r.tool, r.outcome) for r in state.audit()] == [("read_csv", "ok"), ("read_csv", "error")]
    finally:
        state.close()


async def test_the_service_answers_a_real_client_over_streamable_http(tmp_path: Path) -> None:
    db = tmp_path / "files.db"
    cmd = [sys.executable, "-m", "coworkenv.servers", "serve", "files", "--db", str(db), "--seed", str(EXAMPLE)]
    proc = subprocess.Popen(
        [*cmd, "--now", NOW, "--transport", "http", "--port", "0"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stderr is not None
        with anyio.fail_after(30):
            line = await anyio.to_thread.run_sync(proc.stderr.readline)
            assert "http://127.0.0.1:" in line, line
            async with Client(line.strip().rsplit(" ", 1)[-1]) as client:
                made = await client.call_tool("append_to_file", {"file_id": "file_readme", "text": "Over HTTP."})
                assert not made.is_error and made.structured_content is not None
                assert made.structured_content["version"] == 2
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    state = ServiceState.open(SERVICE, path=db)
    try:
        assert [(r.tool, r.outcome, r.state_changed) for r in state.audit()] == [("append_to_file", "ok", True)]
    finally:
        state.close()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(calls(["files"]), min_size=1, max_size=6))
def test_fuzzed_arguments_never_crash_nor_change_state_unaudited(batch: list[tuple[str, str, dict[str, Any]]]) -> None:
    run_batch(batch)
