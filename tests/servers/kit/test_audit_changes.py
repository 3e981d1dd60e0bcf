"""Each audit row notes the records its call wrote, as they were right after each write: what a run did, even
where a later call undid it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from coworkenv.servers import SERVICES
from coworkenv.servers.kit import Environment, ServiceState
from coworkenv.servers.kit.audit import replay_changes
from tests.conftest import NOW, drop_audit_column

pytestmark = pytest.mark.anyio
EXAMPLES = Path(__file__).parents[3] / "servers/examples"
FILES = json.loads((EXAMPLES / "files.json").read_text())
CRM = json.loads((EXAMPLES / "crm.json").read_text())
OUTSIDER = "someone@elsewhere-example.com"


async def test_a_write_notes_what_it_changed_and_a_read_notes_nothing() -> None:
    with Environment.create({"files": FILES}, now=NOW) as env:
        before = next(r for r in env.dump()["files"]["files"] if r["id"] == "file_readme")
        await env.call("files", "read_file", {"file_id": "file_readme"})
        await env.call("files", "share_file", {"file_id": "file_readme", "email": OUTSIDER, "role": "viewer"})
        await env.call("files", "unshare_file", {"file_id": "file_readme", "email": OUTSIDER})
        created = await env.call("files", "create_file", {"name": "notes.txt", "content": "hello"})
        read, share, unshare, create = env.audit()
        assert read.changes is None
        [shared] = share.changes or []
        assert (shared["table"], shared["id"], shared["op"]) == ("files", "file_readme", "update")
        assert set(shared["fields"]) <= {"shares", "updated_at"} and OUTSIDER in json.dumps(shared["fields"])
        [made] = create.changes or []
        assert (made["op"], made["id"], made["row"]["content"]) == ("create", created.data["id"], "hello")
        versions = [before]
        for row in (share, unshare):
            versions.append(replay_changes(versions[-1], (row.changes or [])[0]))
        after = next(r for r in env.dump()["files"]["files"] if r["id"] == "file_readme")
        assert versions[-1] == after and OUTSIDER in json.dumps(versions[1]["shares"])


async def test_one_calls_audit_row_reads_as_a_call_pattern_sees_it_without_its_result() -> None:
    with Environment.create({"files": FILES}, now=NOW) as env:
        result = await env.call("files", "share_file", {"file_id": "file_readme", "email": OUTSIDER, "role": "viewer"})
        [row] = env.audit()
        call = env.state("files").audit_call(result.seq)
        assert call == {k: v for k, v in row.to_dict().items() if k in call} and "result" not in (call or {})
        assert set(call or {}) == {"seq", "service", "actor", "tool", "arguments", "outcome", "changes"}
        assert env.state("files").audit_call(result.seq + 1) is None


async def test_a_history_table_is_not_noted_and_a_delete_notes_no_row() -> None:
    with Environment.create({"files": FILES, "crm": CRM}, now=NOW) as env:
        await env.call("files", "write_file", {"file_id": "file_readme", "content": "new text"})
        deleted = await env.call("crm", "delete_contact", {"contact_id": "con_jamie_lee"})
        assert deleted.outcome == "ok", deleted.text
        write = env.audit("files")[-1]
        assert [c["table"] for c in write.changes or []] == ["files"]  # the version it kept is history
        crm_changes = env.audit("crm")[-1].changes or []
        assert {"table": "contacts", "id": "con_jamie_lee", "op": "delete"} in crm_changes


async def test_a_failed_or_invalid_call_notes_no_change() -> None:
    with Environment.create({"files": FILES}, now=NOW) as env:
        await env.call("files", "share_file", {"file_id": "file_missing", "email": OUTSIDER, "role": "viewer"})
        await env.call("files", "share_file", {"file_id": "file_readme", "role": "owner-of-all"})
        assert [(r.outcome, r.changes) for r in env.audit()] == [("error", None), ("invalid_arguments", None)]


async def test_both_doors_note_the_same_changes() -> None:
    args = {"file_id": "file_readme", "email": OUTSIDER, "role": "viewer"}
    with Environment.create({"files": FILES}, now=NOW) as direct, Environment.create({"files": FILES}, now=NOW) as mcp:
        await direct.call("files", "share_file", args)
        async with Client(mcp.server("files")) as client:
            await client.call_tool("share_file", args)
        assert direct.audit()[0].changes == mcp.audit()[0].changes is not None


async def test_an_old_database_without_the_changes_column_opens_and_notes_from_then_on(tmp_path: Path) -> None:
    db = tmp_path / "files.db"
    state = ServiceState.open(SERVICES["files"], FILES, NOW, db)
    await state.call("share_file", {"file_id": "file_readme", "email": OUTSIDER, "role": "viewer"})
    state.close()
    drop_audit_column(db, "changes")  # as an older version wrote it
    again = ServiceState.open(SERVICES["files"], path=db)
    await again.call("unshare_file", {"file_id": "file_readme", "email": OUTSIDER})
    old, new = again.audit()
    again.close()
    assert old.changes is None and [c["id"] for c in new.changes or []] == ["file_readme"]
