"""Tools of the repo service for the code itself: collaborators, branches, commits, files, search, tags, and the
two writes (commit a file, revert a commit)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from coworkenv.servers.kit import PageSize, PageToken, ServiceError, Timestamp, ToolContext, Where, tool
from coworkenv.servers.repo.common import (
    FIND_COMMIT,
    BranchName,
    CommitId,
    FilePath,
    Ref,
    page_of,
    write_commit,
)
from coworkenv.servers.repo.history import branch, chain, clip, commit_diff, content_at, resolve, tree, version_at
from coworkenv.servers.repo.models import (
    Branch,
    BranchPage,
    CodeMatch,
    CodeMatchPage,
    Commit,
    CommitDetail,
    CommitPage,
    Deleted,
    FileContent,
    FileEntry,
    FilePage,
    Tag,
    TagPage,
    User,
    UserPage,
)

MAX_FILE = 60_000
"""The most characters of a file get_file returns."""


@tool(read_only=True)
def list_users(
    ctx: ToolContext,
    query: Annotated[str | None, Field(description="Text in the login, name or email. Example: 'kim'")] = None,
    page_size: PageSize = 50,
    page_token: PageToken = None,
) -> UserPage:
    """List the repository's collaborators (their logins are what reviewers, assignees and owners are named by)."""
    where = Where().text(["login", "name", "email"], query)
    rows, total, nxt = ctx.paginate("users", where.sql, where.params, "login, id", page_size, page_token)
    return UserPage(items=[User.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool(read_only=True)
def list_branches(
    ctx: ToolContext,
    query: Annotated[str | None, Field(description="Text in the branch name. Example: 'release'")] = None,
    page_size: PageSize = 50,
    page_token: PageToken = None,
) -> BranchPage:
    """List branches with their head commit and whether they are protected."""
    where = Where().text(["name"], query)
    rows, total, nxt = ctx.paginate("branches", where.sql, where.params, "name, id", page_size, page_token)
    return BranchPage(items=[Branch.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool()
def create_branch(
    ctx: ToolContext,
    name: BranchName,
    source_ref: Annotated[str, Field(min_length=1, max_length=200, description="Where it starts. Example: 'main'")],
) -> Branch:
    """Create a branch pointing at a ref (a branch, tag or commit)."""
    if ctx.table("branches").select("name = ?", [name], limit=1):
        raise ServiceError(f"Branch {name!r} already exists.", "Choose another name.")
    head = resolve(ctx, source_ref)
    row = {"id": ctx.new_id("branches"), "name": name, "head_commit_id": head}
    return Branch.model_validate(ctx.table("branches").insert(row))


@tool(destructive=True, idempotent=True)
def delete_branch(ctx: ToolContext, name: BranchName) -> Deleted:
    """Delete a branch (its commits stay reachable from other refs). Protected branches and branches of open pull
    requests cannot be deleted."""
    row = branch(ctx, name)
    if row["protected"]:
        raise ServiceError(f"Branch {name!r} is protected and cannot be deleted.")
    if ctx.table("pull_requests").select(
        "state = 'open' AND (head_branch = ? OR base_branch = ?)", [name, name], limit=1
    ):
        raise ServiceError(
            f"Branch {name!r} belongs to an open pull request.", "Merge or close the pull request first."
        )
    ctx.table("branches").delete(str(row["id"]))
    return Deleted(id=str(row["id"]), deleted=True)


@tool(read_only=True)
def list_commits(
    ctx: ToolContext,
    ref: Ref = "main",
    path: Annotated[str | None, Field(description="Only commits changing this path. Example: 'src/api.py'")] = None,
    author: Annotated[str | None, Field(description="Only commits by this login. Example: 'dkim'")] = None,
    since: Annotated[Timestamp | None, Field(description="Made at or after. Example: '2026-03-01T00:00:00Z'")] = None,
    until: Annotated[Timestamp | None, Field(description="Made before. Example: '2026-03-08T00:00:00Z'")] = None,
    page_size: PageSize = 30,
    page_token: PageToken = None,
) -> CommitPage:
    """List the commits of a ref's history (first parents), newest first, with the files each changed."""
    found = [
        c
        for c in chain(ctx, resolve(ctx, ref))
        if (path is None or path in c["changed_files"])
        and (author is None or c["author"] == author.removeprefix("@"))
        and (since is None or c["created_at"] >= since)
        and (until is None or c["created_at"] < until)
    ]
    items, total, nxt = page_of(found, page_size, page_token)
    return CommitPage(items=[Commit.model_validate(c) for c in items], total=total, next_page_token=nxt)


@tool(read_only=True)
def get_commit(ctx: ToolContext, commit_id: CommitId) -> CommitDetail:
    """Read one commit: message, author, parent, changed files and its diff."""
    row = ctx.fetch("commits", commit_id, "commit", FIND_COMMIT)
    return CommitDetail.model_validate({**row, "diff": commit_diff(ctx, row)})


@tool(read_only=True)
def get_file(ctx: ToolContext, path: FilePath, ref: Ref = "main") -> FileContent:
    """Read a file's content at a ref (a branch, a tag or a commit id)."""
    commit = resolve(ctx, ref)
    found = version_at(ctx, commit, path)
    if found is None:
        raise ServiceError(f"No file {path!r} at {ref!r}.", "Use list_files or search_code to find the path.")
    return FileContent(path=path, ref=ref, commit_id=str(found["commit_id"]), content=clip(found["content"], MAX_FILE))


@tool(read_only=True)
def list_files(
    ctx: ToolContext,
    ref: Ref = "main",
    prefix: Annotated[str | None, Field(description="Only paths starting with this. Example: 'src/'")] = None,
    page_size: PageSize = 100,
    page_token: PageToken = None,
) -> FilePage:
    """List the files at a ref, by path, with the commit that last changed each."""
    files = [
        FileEntry(path=p, commit_id=str(v["commit_id"]))
        for p, v in tree(ctx, resolve(ctx, ref)).items()
        if prefix is None or p.startswith(prefix)
    ]
    items, total, nxt = page_of(files, page_size, page_token)
    return FilePage(items=items, total=total, next_page_token=nxt)


@tool(read_only=True)
def search_code(
    ctx: ToolContext,
    query: Annotated[str, Field(min_length=1, description="Text to find (case-insensitive). Example: 'retry'")],
    ref: Ref = "main",
    page_size: PageSize = 30,
    page_token: PageToken = None,
) -> CodeMatchPage:
    """Find lines containing some text in the files at a ref."""
    needle = query.casefold()
    matches = [
        CodeMatch(path=p, line=n, text=line[:500])
        for p, v in tree(ctx, resolve(ctx, ref)).items()
        for n, line in enumerate(str(v["content"]).splitlines(), start=1)
        if needle in line.casefold()
    ]
    items, total, nxt = page_of(matches, page_size, page_token)
    return CodeMatchPage(items=items, total=total, next_page_token=nxt)


@tool(read_only=True)
def list_tags(ctx: ToolContext, page_size: PageSize = 30, page_token: PageToken = None) -> TagPage:
    """List release tags, newest first, with the commit each points at."""
    rows, total, nxt = ctx.paginate("tags", "", [], "created_at DESC, id", page_size, page_token)
    return TagPage(items=[Tag.model_validate(r) for r in rows], total=total, next_page_token=nxt)


@tool(destructive=True)
def create_or_update_file(
    ctx: ToolContext,
    path: FilePath,
    content: Annotated[str, Field(description="The file's whole new text. Example: '# Release notes\\n...'")],
    branch_name: Annotated[BranchName, Field(description="The branch to commit to. Example: 'docs/release-notes'")],
    message: Annotated[
        str, Field(min_length=1, max_length=1000, description="The commit message. Example: 'Add release notes'")
    ],
) -> Commit:
    """Write a file (new or replaced) as one commit on a branch; returns the commit."""
    row = branch(ctx, branch_name)
    if content_at(ctx, row["head_commit_id"], path) == content:
        raise ServiceError(f"{path!r} on {branch_name!r} already has this content.", "Nothing to commit.")
    return Commit.model_validate(write_commit(ctx, row, message, {path: content}))


@tool(destructive=True)
def revert_commit(
    ctx: ToolContext,
    commit_id: CommitId,
    branch_name: Annotated[BranchName, Field(description="The branch to revert it on. Example: 'main'")] = "main",
    message: Annotated[
        str | None, Field(max_length=1000, description="The commit message (default: 'Revert \"...\"').")
    ] = None,
) -> Commit:
    """Undo one commit of a branch's history with a new revert commit on that branch (the files it changed go
    back to their content before it). Refused when a later commit changed the same files again (a conflict)."""
    target = ctx.fetch("commits", commit_id, "commit", FIND_COMMIT)
    row = branch(ctx, branch_name)
    history = chain(ctx, row["head_commit_id"])
    if commit_id not in {str(c["id"]) for c in history}:
        raise ServiceError(f"Commit {commit_id} is not in the history of {branch_name!r}.", FIND_COMMIT)
    if any(c["reverts"] == commit_id for c in history):
        raise ServiceError(f"Commit {commit_id} is already reverted on {branch_name!r}.")
    files: dict[str, str | None] = {}
    for path in target["changed_files"]:
        if content_at(ctx, row["head_commit_id"], path) != content_at(ctx, commit_id, path):
            raise ServiceError(
                f"Reverting {commit_id} conflicts: {path!r} changed again after it on {branch_name!r}.",
                "Revert the later commits first, or fix the file by hand.",
            )
        files[path] = content_at(ctx, target.get("parent_id"), path)
    if not files:
        raise ServiceError(f"Commit {commit_id} changed no files; there is nothing to revert.")
    first = str(target["message"]).splitlines()[0]
    text = message or f'Revert "{first}"\n\nThis reverts commit {commit_id}.'
    return Commit.model_validate(write_commit(ctx, row, text, files, reverts=commit_id))


TOOLS = (
    list_users,
    list_branches,
    create_branch,
    delete_branch,
    list_commits,
    get_commit,
    get_file,
    list_files,
    search_code,
    list_tags,
    create_or_update_file,
    revert_commit,
)
