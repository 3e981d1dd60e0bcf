"""Tools of the repo service for pull requests: find and read them, their files and diffs, request reviewers,
comment, review (approve, request changes), label, merge and close."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from coworkenv.servers.kit import PageSize, PageToken, ServiceError, Timestamp, ToolContext, Where, tool
from coworkenv.servers.repo.common import FIND_PR, FilePath, Labels, Logins, PullRequestId, page_of, write_commit
from coworkenv.servers.repo.history import Row, branch, content_at, known_logins, me, pull_commits, unified
from coworkenv.servers.repo.models import (
    Comment,
    PRState,
    PullFile,
    PullFilePage,
    PullRequest,
    PullRequestDetail,
    PullRequestPage,
    Review,
)

Body = Annotated[str, Field(min_length=1, description="The text (Markdown). Example: 'Looks good, one nit below.'")]


def _pr(ctx: ToolContext, pull_request_id: str) -> Row:
    return ctx.fetch("pull_requests", pull_request_id, "pull request", FIND_PR)


def _open(pr: Row, doing: str) -> None:
    if pr["state"] != "open":
        raise ServiceError(f"Pull request #{pr['number']} is {pr['state']}; it cannot be {doing}.")


def _touch(ctx: ToolContext, pr: Row, changes: dict[str, Any]) -> PullRequest:
    return PullRequest.model_validate(
        ctx.table("pull_requests").update(str(pr["id"]), {**changes, "updated_at": ctx.now_iso()})
    )


@tool(read_only=True)
def list_pull_requests(
    ctx: ToolContext,
    state: Annotated[list[PRState] | None, Field(description="Only these states. Example: ['merged']")] = None,
    base_branch: Annotated[str | None, Field(description="Only into this branch. Example: 'main'")] = None,
    author: Annotated[str | None, Field(description="Only by this login. Example: 'lpatel'")] = None,
    label: Annotated[str | None, Field(description="Only with this label. Example: 'security'")] = None,
    query: Annotated[str | None, Field(description="Text in the title or body. Example: 'retry'")] = None,
    merged_after: Annotated[
        Timestamp | None, Field(description="Merged at or after this time. Example: '2026-03-01T00:00:00Z'")
    ] = None,
    merged_before: Annotated[
        Timestamp | None, Field(description="Merged before this time. Example: '2026-03-15T00:00:00Z'")
    ] = None,
    page_size: PageSize = 30,
    page_token: PageToken = None,
) -> PullRequestPage:
    """List pull requests, newest first. Filters combine (AND)."""
    where = (
        Where()
        .any_of("state", state)
        .eq("base_branch", base_branch)
        .eq("author", author.removeprefix("@") if author else None)
        .has_tag("pull_requests.labels", label)
        .text(["title", "body"], query)
        .gte("merged_at", merged_after)
        .lt("merged_at", merged_before)
    )
    rows, total, nxt = ctx.paginate("pull_requests", where.sql, where.params, "number DESC, id", page_size, page_token)
    return PullRequestPage(items=[PullRequest.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def get_pull_request(ctx: ToolContext, pull_request_id: PullRequestId) -> PullRequestDetail:
    """Read a pull request: its description, the files it changes, its commits, reviews and comments. Use
    list_pull_request_files for the diff."""
    pr = _pr(ctx, pull_request_id)
    commits, _ = pull_commits(ctx, pr)
    reviews = ctx.table("reviews").select("pull_request_id = ?", [pull_request_id], order_by="created_at, id")
    comments = ctx.table("comments").select("pull_request_id = ?", [pull_request_id], order_by="created_at, id")
    return PullRequestDetail.model_validate(
        {
            **pr,
            "changed_files": sorted({p for c in commits for p in c["changed_files"]}),
            "commit_ids": [c["id"] for c in commits],
            "reviews": reviews,
            "comments": comments,
        }
    )


@tool(read_only=True)
def list_pull_request_files(
    ctx: ToolContext, pull_request_id: PullRequestId, page_size: PageSize = 30, page_token: PageToken = None
) -> PullFilePage:
    """The files a pull request changes, each with its patch (a unified diff against the merge base)."""
    pr = _pr(ctx, pull_request_id)
    commits, base = pull_commits(ctx, pr)
    head = str(commits[-1]["id"]) if commits else None
    files = []
    for path in sorted({p for c in commits for p in c["changed_files"]}):
        before, after = content_at(ctx, base, path), content_at(ctx, head, path)
        status: Literal["added", "modified", "removed"] = (
            "added" if before is None else "removed" if after is None else "modified"
        )
        files.append(PullFile(path=path, status=status, patch=unified(path, before, after)))
    items, total, nxt = page_of(files, page_size, page_token)
    return PullFilePage(items=items, total=total, next_page_token=nxt)


@tool(idempotent=True)
def request_reviewers(ctx: ToolContext, pull_request_id: PullRequestId, reviewers: Logins) -> PullRequest:
    """Ask collaborators (by login) to review a pull request; they are added to its requested reviewers. The
    author cannot review their own pull request."""
    pr = _pr(ctx, pull_request_id)
    _open(pr, "sent for review")
    logins = known_logins(ctx, reviewers, "asked to review")
    if pr["author"] in logins:
        raise ServiceError(f"{pr['author']} wrote pull request #{pr['number']} and cannot review it.")
    wanted = list(pr["requested_reviewers"]) + [x for x in logins if x not in pr["requested_reviewers"]]
    if wanted == pr["requested_reviewers"]:
        return PullRequest.model_validate(pr)
    return _touch(ctx, pr, {"requested_reviewers": wanted})


@tool()
def comment_on_pull_request(
    ctx: ToolContext,
    pull_request_id: PullRequestId,
    body: Body,
    path: Annotated[FilePath | None, Field(description="The file the comment is about, if any.")] = None,
) -> Comment:
    """Comment on a pull request (on one of its files with ``path``), as you."""
    pr = _pr(ctx, pull_request_id)
    row = {
        "id": ctx.new_id("comments"),
        "pull_request_id": pull_request_id,
        "author": me(ctx),
        "body": body,
        "path": path,
        "created_at": ctx.now_iso(),
    }
    comment = ctx.table("comments").insert(row)
    _touch(ctx, pr, {})
    return Comment.model_validate(comment)


@tool()
def submit_review(
    ctx: ToolContext,
    pull_request_id: PullRequestId,
    event: Annotated[
        Literal["APPROVE", "REQUEST_CHANGES", "COMMENT"],
        Field(description="APPROVE, REQUEST_CHANGES (blocks merging) or COMMENT. Example: 'REQUEST_CHANGES'"),
    ],
    body: Annotated[
        str, Field(description="What you found; needed unless you approve. Example: 'Remove the key.'")
    ] = "",
) -> Review:
    """Review an open pull request as you: approve it, request changes (merging waits until they are made) or
    comment. You are then no longer a requested reviewer."""
    pr = _pr(ctx, pull_request_id)
    _open(pr, "reviewed")
    login = me(ctx)
    if login == pr["author"]:
        raise ServiceError("You wrote this pull request and cannot review it.", "Comment on it instead.")
    if event != "APPROVE" and not body.strip():
        raise ServiceError(f"A {event} review needs a body saying what you found.")
    state = {"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED"}[event]
    review = ctx.table("reviews").insert(
        {
            "id": ctx.new_id("reviews"),
            "pull_request_id": pull_request_id,
            "author": login,
            "state": state,
            "body": body,
            "created_at": ctx.now_iso(),
        }
    )
    _touch(ctx, pr, {"requested_reviewers": [r for r in pr["requested_reviewers"] if r != login]})
    return Review.model_validate(review)


@tool(idempotent=True)
def label_pull_request(
    ctx: ToolContext,
    pull_request_id: PullRequestId,
    add_labels: Labels = [],  # noqa: B006
    remove_labels: Labels = [],  # noqa: B006
) -> PullRequest:
    """Add or remove labels on a pull request (e.g. 'security', 'do-not-merge')."""
    pr = _pr(ctx, pull_request_id)
    labels = sorted((set(pr["labels"]) | set(add_labels)) - set(remove_labels))
    if labels == sorted(pr["labels"]):
        return PullRequest.model_validate(pr)
    return _touch(ctx, pr, {"labels": labels})


def _merge_blockers(ctx: ToolContext, pr: Row, base: Row, head: str) -> list[str]:
    out = []
    latest: dict[str, str] = {}
    for review in ctx.table("reviews").select("pull_request_id = ?", [pr["id"]], order_by="created_at, id"):
        if review["state"] != "COMMENTED":
            latest[str(review["author"])] = str(review["state"])
    if "CHANGES_REQUESTED" in latest.values():
        out.append("a reviewer requested changes")
    if base["protected"]:
        approvals = sum(1 for s in latest.values() if s == "APPROVED")
        if approvals < base["required_approvals"]:
            out.append(f"{base['name']} needs {base['required_approvals']} approval(s), it has {approvals}")
        runs = ctx.table("ci_runs").select("commit_id = ?", [head], order_by="started_at DESC, id DESC", limit=1)
        if runs and runs[0]["status"] == "failure":
            out.append(f"CI run {runs[0]['id']} failed on its head commit")
    return out


@tool(destructive=True)
def merge_pull_request(
    ctx: ToolContext,
    pull_request_id: PullRequestId,
    commit_title: Annotated[
        str | None, Field(max_length=300, description="The merge commit's title (default: 'Merge pull request #N').")
    ] = None,
) -> PullRequest:
    """Merge an open pull request into its base branch with a merge commit. Refused for drafts, while a reviewer
    requests changes, and for a protected base without its required approvals or with failing CI."""
    pr = _pr(ctx, pull_request_id)
    _open(pr, "merged")
    if pr["draft"]:
        raise ServiceError(f"Pull request #{pr['number']} is a draft.", "It must be marked ready first.")
    base = branch(ctx, pr["base_branch"])
    commits, _ = pull_commits(ctx, pr)
    if not commits:
        raise ServiceError(f"Pull request #{pr['number']} has no commits that {pr['base_branch']} lacks.")
    head = str(commits[-1]["id"])
    blockers = _merge_blockers(ctx, pr, base, head)
    if blockers:
        raise ServiceError(f"Pull request #{pr['number']} cannot be merged: {'; '.join(blockers)}.")
    files = {p: content_at(ctx, head, p) for c in commits for p in c["changed_files"]}
    title = commit_title or f"Merge pull request #{pr['number']} from {pr['head_branch']}"
    merge = write_commit(ctx, base, f"{title}\n\n{pr['title']}", files, merged_parent_id=head)
    now = ctx.now_iso()
    changes = {"state": "merged", "merged_at": now, "merged_by": me(ctx), "merge_commit_id": merge["id"]}
    return _touch(ctx, pr, changes)


@tool(destructive=True, idempotent=True)
def close_pull_request(ctx: ToolContext, pull_request_id: PullRequestId) -> PullRequest:
    """Close an open pull request without merging it."""
    pr = _pr(ctx, pull_request_id)
    _open(pr, "closed")
    return _touch(ctx, pr, {"state": "closed", "closed_at": ctx.now_iso()})


TOOLS = (
    list_pull_requests,
    get_pull_request,
    list_pull_request_files,
    request_reviewers,
    comment_on_pull_request,
    submit_review,
    label_pull_request,
    merge_pull_request,
    close_pull_request,
)
