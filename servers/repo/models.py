"""Records of the repo service (a GitHub-like code host: one repository, its history, reviews, CI and issues).

History is a first-parent chain: each commit names its ``parent_id`` (a merge commit also names the pull
request's head as ``merged_parent_id``). A file's content is kept per commit in ``file_versions``: the content at
a ref is the version of the newest commit on the ref's first-parent chain that holds the path (a merge commit
holds a version of every file its pull request changed). People are named by their login (``dkim``), as GitHub
names them.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field

from coworkenv.servers.kit import Page, Record, SeedError, Table, Timestamp

LOGIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,38}$")
PRState = Literal["open", "merged", "closed"]
IssueState = Literal["open", "closed"]
ReviewState = Literal["APPROVED", "CHANGES_REQUESTED", "COMMENTED"]
RunStatus = Literal["queued", "in_progress", "success", "failure", "cancelled"]


def _strip(value: Any) -> Any:
    return value.strip() if isinstance(value, str) else value


Login = Annotated[str, BeforeValidator(_strip), Field(pattern=LOGIN.pattern, max_length=39)]


class User(Record):
    """A collaborator of the repository."""

    id: str = Field(description="The user's id. Example: 'usr_dkim'")
    login: Login = Field(description="The handle others mention and request. Example: 'dkim'")
    name: str = Field(default="", description="Full name. Example: 'Dana Kim'")
    email: str = Field(default="", description="Work address. Example: 'dana.kim@brightwave.io'")
    is_primary: bool = Field(default=False, description="The user the tools act as: the person the agent works for.")


class Branch(Record):
    id: str = Field(description="The branch's id. Example: 'br_main'")
    name: str = Field(min_length=1, max_length=200, description="Example: 'main', 'feature/retry-backoff'")
    head_commit_id: str = Field(description="The newest commit of the branch. Example: 'c_9f3a21'")
    protected: bool = Field(default=False, description="Protected: cannot be deleted; merges into it need reviews.")
    required_approvals: int = Field(default=0, ge=0, le=10, description="Approvals a pull request into it needs.")


class Commit(Record):
    id: str = Field(description="The commit's id (its sha). Example: 'c_9f3a21'")
    branch: str = Field(description="The branch it was made on. Example: 'main'")
    parent_id: str | None = Field(default=None, description="The previous commit (none for the first one).")
    merged_parent_id: str | None = Field(default=None, description="For a merge commit: the merged branch's head.")
    author: str = Field(description="The author's login. Example: 'dkim'")
    message: str = Field(min_length=1, description="Example: 'Retry uploads with backoff'")
    changed_files: list[str] = Field(default=[], description="Paths it changed. Example: ['src/upload.py']")
    reverts: str | None = Field(default=None, description="For a revert commit: the commit it undoes.")
    created_at: Timestamp


class FileVersion(Record):
    id: str = Field(description="Example: 'fv_1042'")
    commit_id: str = Field(description="The commit that wrote this version.")
    path: str = Field(min_length=1, max_length=500, description="Example: 'src/upload.py'")
    content: str = Field(default="", description="The whole text of the file at that commit.")
    deleted: bool = Field(default=False, description="True: the commit removed the file.")


class PullRequest(Record):
    id: str = Field(description="The pull request's id. Example: 'pr_1042'")
    number: int = Field(ge=1, le=10_000_000, description="Its number, as in '#1042'.")
    title: str = Field(min_length=1)
    body: str = ""
    author: str = Field(description="The author's login. Example: 'lpatel'")
    head_branch: str = Field(description="The branch with the changes. Example: 'feature/retry-backoff'")
    base_branch: str = Field(default="main", description="The branch it merges into. Example: 'main'")
    state: PRState = "open"
    draft: bool = False
    labels: list[str] = []
    requested_reviewers: list[str] = Field(default=[], description="Logins asked to review and not yet reviewed.")
    created_at: Timestamp
    updated_at: Timestamp
    merged_at: Timestamp | None = None
    merged_by: str | None = None
    merge_commit_id: str | None = None
    closed_at: Timestamp | None = None


class Review(Record):
    id: str = Field(description="Example: 'rev_2201'")
    pull_request_id: str
    author: str = Field(description="The reviewer's login.")
    state: ReviewState
    body: str = ""
    created_at: Timestamp


class Comment(Record):
    id: str = Field(description="Example: 'com_3301'")
    pull_request_id: str | None = Field(default=None, description="The pull request commented on, if any.")
    issue_id: str | None = Field(default=None, description="The issue commented on, if any.")
    author: str = Field(description="The author's login.")
    body: str = Field(min_length=1)
    path: str | None = Field(default=None, description="For a review comment: the file it is about.")
    created_at: Timestamp


class CIRun(Record):
    id: str = Field(description="The run's id. Example: 'run_5521'")
    workflow: str = Field(default="ci", description="The workflow's name. Example: 'unit-tests'")
    commit_id: str = Field(description="The commit it ran on.")
    branch: str = Field(description="The branch of that commit. Example: 'main'")
    pull_request_id: str | None = Field(default=None, description="The pull request it ran for, if any.")
    status: RunStatus
    failing_tests: list[str] = Field(default=[], description="Example: ['tests/test_upload.py::test_retry']")
    log: str = Field(default="", description="The run's console output.")
    started_at: Timestamp
    finished_at: Timestamp | None = None


class Issue(Record):
    id: str = Field(description="The issue's id. Example: 'iss_311'")
    number: int = Field(ge=1, le=10_000_000, description="Its number, as in '#311'.")
    title: str = Field(min_length=1)
    body: str = ""
    author: str = Field(description="Who opened it (a login).")
    labels: list[str] = []
    assignees: list[str] = []
    state: IssueState = "open"
    state_reason: Literal["completed", "not_planned"] | None = None
    created_at: Timestamp
    updated_at: Timestamp
    closed_at: Timestamp | None = None


class CodeOwnerRule(Record):
    id: str = Field(description="Example: 'own_api'")
    pattern: str = Field(min_length=1, max_length=300, description="A CODEOWNERS path pattern. Example: '/src/api/'")
    owners: list[str] = Field(description="Logins or teams that own it. Example: ['@dkim', '@brightwave/platform']")
    line: int = Field(ge=1, le=10_000, description="Its line in CODEOWNERS: of the rules that match, the last wins.")


class Tag(Record):
    id: str = Field(description="Example: 'tag_v2_3_0'")
    name: str = Field(min_length=1, max_length=100, description="Example: 'v2.3.0'")
    commit_id: str
    created_at: Timestamp


TABLES = (
    Table("users", User, "usr_", indexes=(("login",),)),
    Table("branches", Branch, "br_", indexes=(("name",),), refs=(("head_commit_id", "commits"),)),
    Table(
        "commits",
        Commit,
        "c_",
        indexes=(("branch",), ("parent_id",)),
        refs=(("parent_id", "commits"), ("merged_parent_id", "commits"), ("reverts", "commits")),
    ),
    Table("file_versions", FileVersion, "fv_", indexes=(("commit_id",), ("path",)), refs=(("commit_id", "commits"),)),
    Table(
        "pull_requests",
        PullRequest,
        "pr_",
        indexes=(("state",), ("number",)),
        refs=(("merge_commit_id", "commits"),),
        volatile=("updated_at",),
    ),
    Table("reviews", Review, "rev_", indexes=(("pull_request_id",),), refs=(("pull_request_id", "pull_requests"),)),
    Table(
        "comments",
        Comment,
        "com_",
        indexes=(("pull_request_id",), ("issue_id",)),
        refs=(("pull_request_id", "pull_requests"), ("issue_id", "issues")),
    ),
    Table(
        "ci_runs",
        CIRun,
        "run_",
        indexes=(("commit_id",), ("status",)),
        refs=(("commit_id", "commits"), ("pull_request_id", "pull_requests")),
    ),
    Table("issues", Issue, "iss_", indexes=(("state",), ("number",)), volatile=("updated_at",)),
    Table("codeowners", CodeOwnerRule, "own_", indexes=(("line",),)),
    Table("tags", Tag, "tag_", indexes=(("name",),), refs=(("commit_id", "commits"),)),
)


def check_seed(seed: dict[str, list[dict[str, Any]]]) -> None:
    """Rules that span records: branch, tag and login names unique; at most one primary user; numbers shared by
    issues and pull requests unique."""
    for table, field in (("branches", "name"), ("tags", "name"), ("users", "login")):
        seen: set[str] = set()
        for row in seed.get(table, []):
            if row[field] in seen:
                raise SeedError(f"{table} record {row['id']!r} field {field!r}: {row[field]!r} is used twice")
            seen.add(row[field])
    if sum(1 for u in seed.get("users", []) if u.get("is_primary")) > 1:
        raise SeedError("users: more than one record has is_primary true; the tools act as one user")
    numbers: set[int] = set()
    for table in ("issues", "pull_requests"):
        for row in seed.get(table, []):
            if row["number"] in numbers:
                raise SeedError(f"{table} record {row['id']!r} field 'number': #{row['number']} is used twice")
            numbers.add(row["number"])


# ---------------------------------------------------------------------------------------------- views
class CommitDetail(Commit):
    diff: str = Field(description="What the commit changed, as a unified diff against its parent.")


class FileContent(BaseModel):
    path: str
    ref: str = Field(description="The ref read (a branch, tag or commit).")
    commit_id: str = Field(description="The commit the content was last changed in.")
    content: str


class FileEntry(BaseModel):
    path: str
    commit_id: str = Field(description="The commit that last changed it on the ref.")


class CodeMatch(BaseModel):
    path: str
    line: int = Field(description="1-based line number.")
    text: str = Field(description="The matching line.")


class PullFile(BaseModel):
    path: str
    status: Literal["added", "modified", "removed"]
    patch: str = Field(description="The change, as a unified diff.")


class PullRequestDetail(PullRequest):
    changed_files: list[str] = Field(description="Every path the pull request changes.")
    commit_ids: list[str] = Field(description="Its commits, oldest first.")
    reviews: list[Review]
    comments: list[Comment]


class IssueDetail(Issue):
    comments: list[Comment]


class CIRunSummary(BaseModel):
    id: str
    workflow: str
    commit_id: str
    branch: str
    pull_request_id: str | None
    status: RunStatus
    failing_tests: list[str]
    started_at: str
    finished_at: str | None


class CIRunLog(BaseModel):
    id: str
    log: str = Field(description="The requested lines of the log.")
    total_lines: int
    first_line: int = Field(description="1-based number of the first line returned.")


class Deleted(BaseModel):
    id: str
    deleted: bool


class UserPage(Page[User]):
    pass


class BranchPage(Page[Branch]):
    pass


class CommitPage(Page[Commit]):
    pass


class FilePage(Page[FileEntry]):
    pass


class CodeMatchPage(Page[CodeMatch]):
    pass


class PullRequestPage(Page[PullRequest]):
    pass


class PullFilePage(Page[PullFile]):
    pass


class CIRunPage(Page[CIRunSummary]):
    pass


class IssuePage(Page[Issue]):
    pass


class CodeOwnerPage(Page[CodeOwnerRule]):
    pass


class TagPage(Page[Tag]):
    pass
