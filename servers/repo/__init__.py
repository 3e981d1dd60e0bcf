"""repo: a GitHub-like code host — one repository's files with their history, branches, commits, pull requests
with reviews and comments, CI runs with logs, issues, CODEOWNERS and release tags."""

from coworkenv.servers.kit import Service
from coworkenv.servers.repo.models import TABLES, check_seed
from coworkenv.servers.repo.sensitive import SENSITIVE
from coworkenv.servers.repo.tools import TOOLS

SERVICE = Service(
    name="repo",
    title="Code repository",
    instructions=(
        "A GitHub-like repository. Read files at any ref (branch, tag or commit), browse commits and their diffs, "
        "pull requests with their files, reviews and comments, CI runs and their logs, issues and the CODEOWNERS "
        "rules. You act as the repository's primary user: open, comment on, label, assign and close issues; "
        "request reviewers, comment, review and merge pull requests; revert a commit on a branch. People are "
        "named by their login (see list_users). Merging ships code and cannot be undone."
    ),
    tables=TABLES,
    check_seed=check_seed,
    tools=TOOLS,
    sensitive=SENSITIVE,
)
