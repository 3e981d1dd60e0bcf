"""The repository's history: refs, first-parent chains, file contents at a commit, diffs, and the commits of a
pull request. Plain functions over a tool's context; every walk is bounded by the commits that exist."""

from __future__ import annotations

import difflib
from typing import Any

from coworkenv.servers.kit import NotFound, ServiceError, ToolContext
from coworkenv.servers.kit.members import named_member

Row = dict[str, Any]
MAX_DIFF = 20_000
"""The longest diff text a tool returns (longer ones end with a line saying so)."""


def me(ctx: ToolContext) -> str:
    """The login the call acts as: the member the Python API names, else the primary user, else 'me'."""
    named = named_member(ctx)
    if named is not None:
        return str(named["login"])
    rows = ctx.table("users").select("is_primary = 1", limit=1)
    return str(rows[0]["login"]) if rows else "me"


def known_logins(ctx: ToolContext, logins: list[str], what: str) -> list[str]:
    """``logins`` without a leading '@', each a collaborator, or a :class:`ServiceError` naming the first that
    is not."""
    out: list[str] = []
    for raw in logins:
        login = raw.strip().removeprefix("@")
        if not ctx.table("users").select("login = ?", [login], limit=1):
            raise ServiceError(
                f"{raw[:60]!r} is not a collaborator of this repository, so cannot be {what}.",
                "Use list_users to find the login.",
            )
        if login not in out:
            out.append(login)
    return out


def branch(ctx: ToolContext, name: str) -> Row:
    rows = ctx.table("branches").select("name = ?", [name], limit=1)
    if not rows:
        raise ServiceError(f"No branch named {name[:100]!r}.", "Use list_branches to see the branches.")
    return rows[0]


def resolve(ctx: ToolContext, ref: str) -> str:
    """The commit id a ref names: a branch's head, a tag's commit, or a commit id."""
    for table, field in (("branches", "head_commit_id"), ("tags", "commit_id")):
        rows = ctx.table(table).select("name = ?", [ref], limit=1)
        if rows:
            return str(rows[0][field])
    if ctx.table("commits").get(ref) is not None:
        return ref
    raise NotFound(
        "ref", ref, "Give a branch name, a tag name or a commit id (list_branches, list_tags, list_commits)."
    )


def chain(ctx: ToolContext, commit_id: str | None) -> list[Row]:
    """The commits from ``commit_id`` back along first parents, newest first."""
    out: list[Row] = []
    seen: set[str] = set()
    commits = ctx.table("commits")
    while commit_id is not None and commit_id not in seen:
        seen.add(commit_id)
        row = commits.get(commit_id)
        if row is None:
            break
        out.append(row)
        commit_id = row.get("parent_id")
    return out


def _versions(ctx: ToolContext, path: str | None = None) -> dict[str, list[Row]]:
    """File versions by commit id (only the path's, when given)."""
    where, params = ("path = ?", [path]) if path is not None else ("", [])
    by_commit: dict[str, list[Row]] = {}
    for row in ctx.table("file_versions").select(where, params, order_by="path, id"):
        by_commit.setdefault(str(row["commit_id"]), []).append(row)
    return by_commit


def version_at(ctx: ToolContext, commit_id: str | None, path: str) -> Row | None:
    """The version of ``path`` in effect at ``commit_id`` (None where it never existed or was deleted)."""
    by_commit = _versions(ctx, path)
    for commit in chain(ctx, commit_id):
        found = by_commit.get(str(commit["id"]))
        if found:
            return None if found[-1]["deleted"] else found[-1]
    return None


def tree(ctx: ToolContext, commit_id: str | None) -> dict[str, Row]:
    """Every file in effect at ``commit_id``: path → its version row, by path."""
    by_commit = _versions(ctx)
    out: dict[str, Row] = {}
    gone: set[str] = set()
    for commit in chain(ctx, commit_id):
        for version in by_commit.get(str(commit["id"]), []):
            path = str(version["path"])
            if path in out or path in gone:
                continue
            if version["deleted"]:
                gone.add(path)
            else:
                out[path] = version
    return dict(sorted(out.items()))


def content_at(ctx: ToolContext, commit_id: str | None, path: str) -> str | None:
    found = version_at(ctx, commit_id, path)
    return None if found is None else str(found["content"])


def unified(path: str, before: str | None, after: str | None) -> str:
    """A unified diff of one file (``None``: the file is absent on that side)."""
    lines = difflib.unified_diff(
        (before or "").splitlines(keepends=True),
        (after or "").splitlines(keepends=True),
        fromfile="/dev/null" if before is None else f"a/{path}",
        tofile="/dev/null" if after is None else f"b/{path}",
    )
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    return clip(text)


def clip(text: str, limit: int = MAX_DIFF) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n... ({len(text) - limit} more characters not shown)\n"


def commit_diff(ctx: ToolContext, commit: Row) -> str:
    """What a commit changed against its first parent."""
    parts = []
    for path in commit["changed_files"]:
        parts.append(unified(path, content_at(ctx, commit.get("parent_id"), path), content_at(ctx, commit["id"], path)))
    return clip("".join(parts))


def pull_commits(ctx: ToolContext, pr: Row) -> tuple[list[Row], str | None]:
    """(the pull request's commits oldest first, the merge base): the commits on its head's chain down to the
    first one on its base's chain (for a merged pull request, the base as it was before the merge)."""
    head_ref = pr["head_branch"]
    if pr.get("merge_commit_id"):
        merge = ctx.table("commits").get(pr["merge_commit_id"])
        head_id = merge.get("merged_parent_id") if merge else None
        base_id = merge.get("parent_id") if merge else None
    else:
        heads = ctx.table("branches").select("name = ?", [head_ref], limit=1)
        bases = ctx.table("branches").select("name = ?", [pr["base_branch"]], limit=1)
        head_id = heads[0]["head_commit_id"] if heads else None
        base_id = bases[0]["head_commit_id"] if bases else None
    on_base = {str(c["id"]) for c in chain(ctx, base_id)}
    own: list[Row] = []
    merge_base: str | None = None
    for commit in chain(ctx, head_id):
        if str(commit["id"]) in on_base:
            merge_base = str(commit["id"])
            break
        own.append(commit)
    return own[::-1], merge_base


def pull_files(ctx: ToolContext, pr: Row) -> tuple[list[str], str | None, str | None]:
    """(the paths the pull request changes, its merge base, its head commit)."""
    commits, base = pull_commits(ctx, pr)
    paths = sorted({p for c in commits for p in c["changed_files"]})
    return paths, base, (str(commits[-1]["id"]) if commits else None)
