"""What the repo service's tools share: argument types, paging a computed list, and writing a commit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, TypeVar

from pydantic import Field

from coworkenv.servers.kit import ServiceError, ToolContext
from coworkenv.servers.repo.history import Row, me

T = TypeVar("T")

Ref = Annotated[
    str,
    Field(min_length=1, max_length=200, description="A branch name, a tag name or a commit id. Example: 'main'"),
]
BranchName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=200,
        pattern=r"^[A-Za-z0-9._/-]+$",
        description="A branch's name. Example: 'main'",
    ),
]
FilePath = Annotated[
    str,
    Field(
        min_length=1,
        max_length=500,
        pattern=r"^[^\s/][^\n]*$",
        description="A file's path from the repository root. Example: 'src/upload.py'",
    ),
]
PullRequestId = Annotated[str, Field(min_length=1, description="The pull request's id. Example: 'pr_1042'")]
IssueId = Annotated[str, Field(min_length=1, description="The issue's id. Example: 'iss_311'")]
CommitId = Annotated[str, Field(min_length=1, description="The commit's id (its sha). Example: 'c_9f3a21'")]
RunId = Annotated[str, Field(min_length=1, description="The CI run's id. Example: 'run_5521'")]
Logins = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=40)]],
    Field(min_length=1, max_length=20, description="Collaborators' logins. Example: ['dkim', 'lpatel']"),
]
Labels = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=50)]],
    Field(max_length=20, description="Label names. Example: ['bug', 'ci']"),
]
FIND_PR = "Use list_pull_requests to find the pull request's id (ids start with 'pr_')."
FIND_ISSUE = "Use list_issues to find the issue's id (ids start with 'iss_')."
FIND_COMMIT = "Use list_commits to find the commit's id."


def page_of(items: Sequence[T], page_size: int, page_token: str | None) -> tuple[list[T], int, str | None]:
    """One page of a list worked out in Python: (items, total, next page token)."""
    offset = 0
    if page_token:
        if not page_token.isdigit():
            raise ServiceError(f"page_token {page_token[:40]!r} is not valid.", "Pass the previous next_page_token.")
        offset = int(page_token)
    found = list(items[offset : offset + page_size])
    nxt = offset + len(found)
    return found, len(items), (str(nxt) if nxt < len(items) else None)


def next_number(ctx: ToolContext) -> int:
    """The next number issues and pull requests share (#1 upward)."""
    top = 0
    for table in ("issues", "pull_requests"):
        rows = ctx.table(table).select(order_by="number DESC", limit=1)
        if rows:
            top = max(top, int(rows[0]["number"]))
    return top + 1


def write_commit(
    ctx: ToolContext,
    branch: Row,
    message: str,
    files: Mapping[str, str | None],
    *,
    reverts: str | None = None,
    merged_parent_id: str | None = None,
) -> Row:
    """A new commit on ``branch`` writing ``files`` (path → new content, None: removed), the branch moved to it."""
    commit_id = ctx.new_id("commits")
    row: dict[str, Any] = {
        "id": commit_id,
        "branch": branch["name"],
        "parent_id": branch["head_commit_id"],
        "merged_parent_id": merged_parent_id,
        "author": me(ctx),
        "message": message,
        "changed_files": sorted(files),
        "reverts": reverts,
        "created_at": ctx.now_iso(),
    }
    commit = ctx.table("commits").insert(row)
    for path, content in sorted(files.items()):
        ctx.table("file_versions").insert(
            {
                "id": ctx.new_id("file_versions"),
                "commit_id": commit_id,
                "path": path,
                "content": content or "",
                "deleted": content is None,
            }
        )
    ctx.table("branches").update(str(branch["id"]), {"head_commit_id": commit_id})
    return commit
