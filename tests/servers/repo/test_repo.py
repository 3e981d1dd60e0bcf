"""The repo service, through the in-memory MCP client: files at refs, history, pull requests and their merge rules,
reverts, issues, CI logs, CODEOWNERS, its sensitive kinds and the checks every service gets."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from coworkenv.servers.kit import SeedError, SensitiveContext, parse_seed
from coworkenv.servers.repo import SERVICE
from coworkenv.servers.repo.codeowners import matches, owners_of
from coworkenv.servers.testing import check_service
from tests.conftest import error_text, ok, service_client

pytestmark = pytest.mark.anyio
EXAMPLE = Path(__file__).parents[3] / "servers/examples/repo.json"
SEED: dict[str, Any] = json.loads(EXAMPLE.read_text())
NOW = "2026-03-07T09:00:00Z"


async def test_a_file_reads_as_it_was_at_a_branch_a_tag_or_a_commit() -> None:
    async with service_client(SERVICE, SEED, NOW) as (c, _):
        at_main = ok(await c.call_tool("get_file", {"path": "src/app/config.py"}))
        at_tag = ok(await c.call_tool("get_file", {"path": "src/app/config.py", "ref": "v1.0.0"}))
        at_commit = ok(await c.call_tool("get_file", {"path": "src/app/config.py", "ref": "c_2b3c4d5"}))
        assert "os.environ['TIMEOUT']" in at_main["content"] and at_main["commit_id"] == "c_3c4d5e6"
        assert at_tag["content"] == at_commit["content"] and ".get('TIMEOUT', '30')" in at_tag["content"]
        assert "ref" in error_text(await c.call_tool("get_file", {"path": "README.md", "ref": "nope"}))
        assert "list_files" in error_text(await c.call_tool("get_file", {"path": "src/app/settings.py"}))
        on_branch = ok(await c.call_tool("get_file", {"path": "src/app/settings.py", "ref": "fix/debug-token"}))
        assert "API_TOKEN" in on_branch["content"]


async def test_history_lists_first_parents_newest_first_and_filters_by_path_and_author() -> None:
    async with service_client(SERVICE, SEED, NOW) as (c, _):
        page = ok(await c.call_tool("list_commits", {}))
        assert [x["id"] for x in page["items"]] == ["c_4d5e6f7", "c_3c4d5e6", "c_2b3c4d5", "c_1a2b3c4"]
        by_path = ok(await c.call_tool("list_commits", {"path": "src/app/config.py"}))
        assert [x["id"] for x in by_path["items"]] == ["c_3c4d5e6", "c_1a2b3c4"]
        by_author = ok(await c.call_tool("list_commits", {"author": "@ohaddad", "since": "2026-03-02T00:00:00Z"}))
        assert [x["id"] for x in by_author["items"]] == ["c_3c4d5e6"]
        commit = ok(await c.call_tool("get_commit", {"commit_id": "c_3c4d5e6"}))
        assert "-TIMEOUT = int(os.environ.get('TIMEOUT', '30'))" in commit["diff"]


async def test_a_pull_request_shows_the_files_it_changes_with_their_patches() -> None:
    async with service_client(SERVICE, SEED, NOW) as (c, _):
        pr = ok(await c.call_tool("get_pull_request", {"pull_request_id": "pr_13"}))
        assert pr["changed_files"] == [".github/workflows/ci.yml", "src/app/settings.py"]
        assert pr["commit_ids"] == ["c_6f7a8b9"]
        files = {
            f["path"]: f
            for f in ok(await c.call_tool("list_pull_request_files", {"pull_request_id": "pr_13"}))["items"]
        }
        assert (
            files["src/app/settings.py"]["status"] == "added" and "+API_TOKEN" in files["src/app/settings.py"]["patch"]
        )
        assert "+      - run: pytest -q || true" in files[".github/workflows/ci.yml"]["patch"]
        merged = ok(
            await c.call_tool("list_pull_requests", {"state": ["merged"], "merged_after": "2026-03-02T00:00:00Z"})
        )
        assert [p["number"] for p in merged["items"]] == [9]


async def test_merging_needs_the_approvals_of_a_protected_base_and_no_requested_changes() -> None:
    async with service_client(SERVICE, SEED, NOW) as (c, env):
        assert "1 approval" in error_text(await c.call_tool("merge_pull_request", {"pull_request_id": "pr_12"}))
        body = {"pull_request_id": "pr_12", "event": "REQUEST_CHANGES"}
        assert "body" in error_text(await c.call_tool("submit_review", body))
        ok(await c.call_tool("submit_review", {**body, "body": "Name the counter."}))
        assert "requested changes" in error_text(await c.call_tool("merge_pull_request", {"pull_request_id": "pr_12"}))
        ok(await c.call_tool("submit_review", {"pull_request_id": "pr_12", "event": "APPROVE"}))
        merged = ok(await c.call_tool("merge_pull_request", {"pull_request_id": "pr_12"}))
        assert merged["state"] == "merged" and merged["merged_by"] == "dkim"
        metrics = ok(await c.call_tool("get_file", {"path": "src/app/metrics.py"}))
        assert metrics["commit_id"] == merged["merge_commit_id"]
        assert "merged" in error_text(await c.call_tool("merge_pull_request", {"pull_request_id": "pr_12"}))
        assert env.dump()["repo"]["branches"][0]["head_commit_id"] == merged["merge_commit_id"]


async def test_review_requests_take_collaborators_other_than_the_author() -> None:
    async with service_client(SERVICE, SEED, NOW) as (c, _):
        args = {"pull_request_id": "pr_13"}
        assert "cannot review" in error_text(await c.call_tool("request_reviewers", {**args, "reviewers": ["jchen"]}))
        assert "list_users" in error_text(await c.call_tool("request_reviewers", {**args, "reviewers": ["ghost"]}))
        pr = ok(await c.call_tool("request_reviewers", {**args, "reviewers": ["@dkim", "ohaddad", "dkim"]}))
        assert pr["requested_reviewers"] == ["dkim", "ohaddad"]
        ok(await c.call_tool("submit_review", {**args, "event": "COMMENT", "body": "A token in code?"}))
        assert ok(await c.call_tool("get_pull_request", args))["requested_reviewers"] == ["ohaddad"]
        labelled = ok(await c.call_tool("label_pull_request", {**args, "add_labels": ["security"]}))
        assert labelled["labels"] == ["security"]
        closed = ok(await c.call_tool("close_pull_request", args))
        assert closed["state"] == "closed"
        assert "closed" in error_text(await c.call_tool("submit_review", {**args, "event": "APPROVE"}))


async def test_a_revert_restores_the_files_of_one_commit_and_refuses_conflicts_and_repeats() -> None:
    async with service_client(SERVICE, SEED, NOW) as (c, _):
        revert = ok(await c.call_tool("revert_commit", {"commit_id": "c_3c4d5e6", "branch_name": "main"}))
        assert revert["reverts"] == "c_3c4d5e6" and revert["changed_files"] == ["src/app/config.py"]
        assert revert["message"].startswith('Revert "Read TIMEOUT strictly')
        config = ok(await c.call_tool("get_file", {"path": "src/app/config.py"}))
        assert ".get('TIMEOUT', '30')" in config["content"]
        assert "already reverted" in error_text(await c.call_tool("revert_commit", {"commit_id": "c_3c4d5e6"}))
        assert "not in the history" in error_text(await c.call_tool("revert_commit", {"commit_id": "c_6f7a8b9"}))
        assert "conflicts" in error_text(await c.call_tool("revert_commit", {"commit_id": "c_1a2b3c4"}))


async def test_an_issue_is_opened_labelled_assigned_commented_and_closed() -> None:
    async with service_client(SERVICE, SEED, NOW) as (c, _):
        new = {"title": "test_default_timeout fails on main", "body": "See run_103.", "labels": ["ci", "bug"]}
        assert "list_users" in error_text(await c.call_tool("create_issue", {**new, "assignees": ["ghost"]}))
        issue = ok(await c.call_tool("create_issue", {**new, "assignees": ["ohaddad"]}))
        assert issue["number"] == 14 and issue["labels"] == ["bug", "ci"] and issue["author"] == "dkim"
        ref = {"issue_id": issue["id"]}
        updated = ok(await c.call_tool("update_issue", {**ref, "add_labels": ["p1"], "assignees": ["lpatel"]}))
        assert updated["labels"] == ["bug", "ci", "p1"] and updated["assignees"] == ["lpatel"]
        ok(await c.call_tool("comment_on_issue", {**ref, "body": "Reverting c_3c4d5e6."}))
        assert [x["body"] for x in ok(await c.call_tool("get_issue", ref))["comments"]] == ["Reverting c_3c4d5e6."]
        closed = ok(await c.call_tool("close_issue", {**ref, "reason": "completed"}))
        assert closed["state"] == "closed"
        assert "already closed" in error_text(await c.call_tool("close_issue", ref))
        found = ok(await c.call_tool("list_issues", {"state": "closed", "label": "ci"}))
        assert [x["id"] for x in found["items"]] == [issue["id"]]


async def test_a_ci_run_lists_its_failing_tests_and_reads_its_log_a_window_at_a_time() -> None:
    async with service_client(SERVICE, SEED, NOW) as (c, _):
        failed = ok(await c.call_tool("list_ci_runs", {"status": "failure", "branch_name": "main"}))
        assert [r["id"] for r in failed["items"]] == ["run_103", "run_102"]
        assert failed["items"][0]["failing_tests"] == ["tests/test_config.py::test_default_timeout"]
        log = ok(await c.call_tool("get_ci_run_log", {"run_id": "run_102", "first_line": 16, "max_lines": 5}))
        assert log["total_lines"] == 17 and log["log"].startswith("FAILED tests/test_config.py::test_default_timeout")


@pytest.mark.parametrize(
    ("path", "owners"),
    [
        ("src/app/upload.py", ["lpatel"]),
        ("src/app/config.py", ["ohaddad"]),
        ("docs/upload.md", ["jchen"]),
        (".github/workflows/ci.yml", ["dkim", "ohaddad"]),
        ("README.md", ["dkim"]),
    ],
)
def test_the_last_matching_codeowners_rule_names_a_files_owners(path: str, owners: list[str]) -> None:
    assert owners_of(SEED["codeowners"], path) == owners


def test_codeowners_patterns_anchor_at_a_leading_slash_and_match_names_anywhere_otherwise() -> None:
    assert matches("/docs/", "docs/a/b.md") and not matches("/docs/", "src/docs/b.md")
    assert matches("docs/", "src/docs/b.md") and matches("*.sql", "db/migrations/001.sql")
    assert matches("src/**/test_*.py", "src/a/b/test_x.py") and not matches("src/*.py", "src/a/x.py")


async def test_merging_approving_closing_and_pushing_are_sensitive_kinds() -> None:
    async with service_client(SERVICE, SEED, NOW) as (c, env):
        before = env.dump()["repo"]
        ok(await c.call_tool("submit_review", {"pull_request_id": "pr_12", "event": "APPROVE"}))
        ok(await c.call_tool("merge_pull_request", {"pull_request_id": "pr_12"}))
        ok(await c.call_tool("close_pull_request", {"pull_request_id": "pr_13"}))
        ok(await c.call_tool("close_issue", {"issue_id": "iss_11"}))
        ok(await c.call_tool("revert_commit", {"commit_id": "c_3c4d5e6"}))
        ok(await c.call_tool("comment_on_issue", {"issue_id": "iss_11", "body": "Closing as done."}))
        after = env.dump()["repo"]
    context = SensitiveContext(before, after)
    keys = {h.key for change in SERVICE.diff(before, after) for h in SERVICE.sensitive_hits(change, context)}
    assert keys == {"approve:pr_12", "merge:pr_12", "close:pr_13", "close:iss_11", "push:main"}


@pytest.mark.parametrize(
    ("table", "field", "says"),
    [("branches", "name", "used twice"), ("users", "is_primary", "more than one"), ("issues", "number", "#7")],
)
def test_a_seed_that_breaks_a_rule_across_records_is_refused_naming_it(table: str, field: str, says: str) -> None:
    seed = copy.deepcopy(SEED)
    twin = {**seed[table][0], "id": seed[table][0]["id"] + "_twin"}
    if field == "is_primary":
        twin["login"] = "twin"
    seed[table].append(twin)
    if table == "issues":
        seed[table][-1]["number"] = 7
    with pytest.raises(SeedError, match=says):
        parse_seed(SERVICE, seed)


def test_the_service_toolkit_finds_nothing_wrong_with_it() -> None:
    check_service(SERVICE, SEED, stdio=False)  # stdio is tests/servers/kit/test_transports.py's, from `coworkenv serve`
