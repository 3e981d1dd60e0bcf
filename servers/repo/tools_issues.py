"""Tools of the repo service for issues, CI runs and CODEOWNERS."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from coworkenv.servers.kit import PageSize, PageToken, ServiceError, ToolContext, Where, tool
from coworkenv.servers.repo.common import FIND_ISSUE, IssueId, Labels, RunId, next_number
from coworkenv.servers.repo.history import Row, known_logins, me
from coworkenv.servers.repo.models import (
    CIRunLog,
    CIRunPage,
    CIRunSummary,
    CodeOwnerPage,
    CodeOwnerRule,
    Comment,
    Issue,
    IssueDetail,
    IssuePage,
    IssueState,
    RunStatus,
)

Title = Annotated[str, Field(min_length=1, max_length=256, description="One line. Example: 'test_retry fails on main'")]
Assignees = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=40)]],
    Field(max_length=10, description="Logins to assign. Example: ['dkim']"),
]
MAX_LOG_LINES = 400


def _issue(ctx: ToolContext, issue_id: str) -> Row:
    return ctx.fetch("issues", issue_id, "issue", FIND_ISSUE)


def _touch(ctx: ToolContext, issue: Row, changes: dict[str, Any]) -> Issue:
    return Issue.model_validate(ctx.table("issues").update(str(issue["id"]), {**changes, "updated_at": ctx.now_iso()}))


@tool(read_only=True)
def list_issues(
    ctx: ToolContext,
    state: Annotated[IssueState | None, Field(description="open or closed (default: both). Example: 'open'")] = None,
    label: Annotated[str | None, Field(description="Only with this label. Example: 'bug'")] = None,
    assignee: Annotated[str | None, Field(description="Only assigned to this login. Example: 'dkim'")] = None,
    query: Annotated[str | None, Field(description="Text in the title or body. Example: 'flaky'")] = None,
    page_size: PageSize = 30,
    page_token: PageToken = None,
) -> IssuePage:
    """List issues, newest first. Filters combine (AND)."""
    where = (
        Where()
        .eq("state", state)
        .has_tag("issues.labels", label)
        .has_tag("issues.assignees", assignee.removeprefix("@") if assignee else None)
        .text(["title", "body"], query)
    )
    rows, total, nxt = ctx.paginate("issues", where.sql, where.params, "number DESC, id", page_size, page_token)
    return IssuePage(items=[Issue.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def get_issue(ctx: ToolContext, issue_id: IssueId) -> IssueDetail:
    """Read an issue with its comments."""
    issue = _issue(ctx, issue_id)
    comments = ctx.table("comments").select("issue_id = ?", [issue_id], order_by="created_at, id")
    return IssueDetail.model_validate({**issue, "comments": comments})


@tool()
def create_issue(
    ctx: ToolContext,
    title: Title,
    body: Annotated[str, Field(description="The description (Markdown). Example: 'Failing since c_9f3a21.'")] = "",
    labels: Labels = [],  # noqa: B006
    assignees: Assignees = [],  # noqa: B006
) -> Issue:
    """Open a new issue as you, optionally labelled and assigned; it gets the next number."""
    people = known_logins(ctx, assignees, "assigned")
    now = ctx.now_iso()
    row = {
        "id": ctx.new_id("issues"),
        "number": next_number(ctx),
        "title": title,
        "body": body,
        "author": me(ctx),
        "labels": sorted(set(labels)),
        "assignees": people,
        "state": "open",
        "created_at": now,
        "updated_at": now,
    }
    return Issue.model_validate(ctx.table("issues").insert(row))


@tool(idempotent=True)
def update_issue(
    ctx: ToolContext,
    issue_id: IssueId,
    title: Annotated[str | None, Field(max_length=256, description="A new title, or leave out.")] = None,
    body: Annotated[str | None, Field(description="A new description, or leave out.")] = None,
    add_labels: Labels = [],  # noqa: B006
    remove_labels: Labels = [],  # noqa: B006
    assignees: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=40)]] | None,
        Field(max_length=10, description="The new assignees (replacing the old); [] unassigns. Example: ['dkim']"),
    ] = None,
) -> Issue:
    """Edit an issue: title, description, labels, assignees (what is left out stays as it is)."""
    issue = _issue(ctx, issue_id)
    changes: dict[str, Any] = {}
    if title is not None and title.strip():
        changes["title"] = title
    if body is not None:
        changes["body"] = body
    if add_labels or remove_labels:
        changes["labels"] = sorted((set(issue["labels"]) | set(add_labels)) - set(remove_labels))
    if assignees is not None:
        changes["assignees"] = known_logins(ctx, assignees, "assigned")
    changes = {k: v for k, v in changes.items() if v != issue[k]}
    if not changes:
        return Issue.model_validate(issue)
    return _touch(ctx, issue, changes)


@tool()
def comment_on_issue(
    ctx: ToolContext,
    issue_id: IssueId,
    body: Annotated[str, Field(min_length=1, description="The text (Markdown). Example: 'Fixed by #1044.'")],
) -> Comment:
    """Comment on an issue as you."""
    issue = _issue(ctx, issue_id)
    row = {"id": ctx.new_id("comments"), "issue_id": issue_id, "author": me(ctx), "body": body}
    comment = ctx.table("comments").insert({**row, "created_at": ctx.now_iso()})
    _touch(ctx, issue, {})
    return Comment.model_validate(comment)


@tool(destructive=True, idempotent=True)
def close_issue(
    ctx: ToolContext,
    issue_id: IssueId,
    reason: Annotated[
        Literal["completed", "not_planned"], Field(description="completed or not_planned. Example: 'completed'")
    ] = "completed",
) -> Issue:
    """Close an open issue, as completed or as not planned."""
    issue = _issue(ctx, issue_id)
    if issue["state"] == "closed":
        raise ServiceError(f"Issue #{issue['number']} is already closed.")
    return _touch(ctx, issue, {"state": "closed", "state_reason": reason, "closed_at": ctx.now_iso()})


def _summary(row: Row) -> CIRunSummary:
    return CIRunSummary.model_validate({k: v for k, v in row.items() if k != "log"})


@tool(read_only=True)
def list_ci_runs(
    ctx: ToolContext,
    status: Annotated[RunStatus | None, Field(description="Only runs in this status. Example: 'failure'")] = None,
    branch_name: Annotated[str | None, Field(description="Only runs on this branch. Example: 'main'")] = None,
    commit_id: Annotated[str | None, Field(description="Only runs on this commit. Example: 'c_9f3a21'")] = None,
    pull_request_id: Annotated[str | None, Field(description="Only runs for this pull request.")] = None,
    workflow: Annotated[str | None, Field(description="Only this workflow. Example: 'unit-tests'")] = None,
    page_size: PageSize = 30,
    page_token: PageToken = None,
) -> CIRunPage:
    """List CI runs, newest first, with their status and failing tests (read a run's log with get_ci_run_log)."""
    where = (
        Where()
        .eq("status", status)
        .eq("branch", branch_name)
        .eq("commit_id", commit_id)
        .eq("pull_request_id", pull_request_id)
        .eq("workflow", workflow)
    )
    rows, total, nxt = ctx.paginate("ci_runs", where.sql, where.params, "started_at DESC, id", page_size, page_token)
    return CIRunPage(items=[_summary(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def get_ci_run(ctx: ToolContext, run_id: RunId) -> CIRunSummary:
    """Read one CI run: its commit, branch, status and failing tests."""
    return _summary(ctx.fetch("ci_runs", run_id, "CI run", "Use list_ci_runs to find the run's id."))


@tool(read_only=True)
def get_ci_run_log(
    ctx: ToolContext,
    run_id: RunId,
    first_line: Annotated[int, Field(ge=1, le=1_000_000, description="1-based line to start at. Example: 1")] = 1,
    max_lines: Annotated[int, Field(ge=1, le=MAX_LOG_LINES, description="Lines to return. Example: 200")] = 200,
) -> CIRunLog:
    """Read a CI run's console log, a window of lines at a time."""
    row = ctx.fetch("ci_runs", run_id, "CI run", "Use list_ci_runs to find the run's id.")
    lines = str(row["log"]).splitlines()
    window = lines[first_line - 1 : first_line - 1 + max_lines]
    return CIRunLog(id=run_id, log="\n".join(window), total_lines=len(lines), first_line=first_line)


@tool(read_only=True)
def list_codeowners(ctx: ToolContext, page_size: PageSize = 100, page_token: PageToken = None) -> CodeOwnerPage:
    """The CODEOWNERS rules in file order. A path's owners are those of the LAST rule whose pattern matches it
    ('/docs/' a folder from the root, '*.sql' a file name anywhere, 'src/api/' a folder anywhere, '*' everything)."""
    rows, total, nxt = ctx.paginate("codeowners", "", [], "line, id", page_size, page_token)
    return CodeOwnerPage(items=[CodeOwnerRule.model_validate(r) for r in rows], total=total, next_page_token=nxt)


TOOLS = (
    list_issues,
    get_issue,
    create_issue,
    update_issue,
    comment_on_issue,
    close_issue,
    list_ci_runs,
    get_ci_run,
    get_ci_run_log,
    list_codeowners,
)
