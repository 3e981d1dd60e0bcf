"""Code repository: main's CI is red; find the failing test, open an issue naming it, label it and assign it to
the author of the commit where it first failed (not the author of the latest commit, which only inherited it)."""

from __future__ import annotations

from coworkenv.synth.generate.families.kit.base import DISTRACTORS, MULTISTEP, Family, TaskBuilder, rx
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.repo_common import MODULES, RedMain, Repo, red_main, short_name


@register_family
class CIFailureIssue(Family):
    name = "repo-ci-failure-issue"
    scenario = "triaging a failing CI run into an issue"
    capabilities = (DISTRACTORS, MULTISTEP)
    service_options = (("repo",),)
    distractors = (
        "the author of the latest red commit (it only inherited the failure); a failed run of an open pull "
        "request's branch with another failing test; (medium+) an open issue about another flaky test"
    )

    def build(self, b: TaskBuilder) -> str:
        repo = Repo(b)
        red = red_main(b, repo, b.rng.sample(MODULES, 4 + b.targets))
        test = short_name(red.test)
        self._reference(b, red)
        self._checks(b, red, test)
        b.forbid_call(
            "changed_code",
            "Reverting a commit when asked only to open an issue.",
            "repo",
            "revert_commit",
            {},
            {"commit_id": red.breaking, "branch_name": "main"},
        )
        return compose(b, self._ask(b))

    @staticmethod
    def _checks(b: TaskBuilder, red: RedMain, test: str) -> None:
        where = {"title|body": {"regex": rx(test)}, "state": "open"}
        b.check(
            "issue_opened",
            0.4,
            f"An open issue names the failing test {test}.",
            {"kind": "record_exists", "service": "repo", "table": "issues", "where": where},
        )
        b.check(
            "labelled_ci",
            0.2,
            "That issue is labelled 'ci'.",
            {
                "kind": "record_exists",
                "service": "repo",
                "table": "issues",
                "where": {**where, "labels": {"contains": "ci"}},
            },
            ("issue_opened",),
        )
        b.check(
            "assigned_culprit",
            0.4,
            f"That issue is assigned to {red.culprit.login}, who made the commit where the test first failed.",
            {
                "kind": "record_exists",
                "service": "repo",
                "table": "issues",
                "where": {**where, "assignees": {"contains": red.culprit.login}},
            },
            ("issue_opened",),
        )

    @staticmethod
    def _ask(b: TaskBuilder) -> Ask:
        return Ask(
            steps=(
                b.pick("find out which test is failing on main", "work out which test keeps failing in main's CI"),
                b.pick(
                    "open an issue with that test's name in the title and the 'ci' label",
                    "file an issue for it (test name in the title, label 'ci')",
                ),
                b.pick(
                    "assign it to whoever made the commit where it first went red",
                    "assign it to the author of the commit that first broke it",
                ),
            ),
            context=b.pick("CI on main has been red since yesterday.", "The main branch build is failing."),
            avoid=b.pick("Don't change any code yet.", "No reverts for now, just the issue."),
            topic="main is red",
        )

    @staticmethod
    def _reference(b: TaskBuilder, red: RedMain) -> None:
        test = short_name(red.test)
        b.call("repo", "list_ci_runs", "runs", branch_name="main")
        b.call("repo", "get_ci_run_log", run_id=red.latest_run)
        b.call("repo", "get_commit", commit_id=red.breaking)
        body = f"`{red.test}` fails on main since commit {red.breaking} (CI run {red.first_run})."
        b.call(
            "repo",
            "create_issue",
            title=f"{test} fails on main",
            body=body,
            labels=["ci"],
            assignees=[red.culprit.login],
        )
        b.say(f"Opened an issue for {test}, labelled ci and assigned to {red.culprit.login}.")
        with b.alternative():  # the first failing run read directly, the issue assigned in a second step
            b.call("repo", "list_ci_runs", "failed", status="failure")
            b.call("repo", "get_ci_run", run_id=red.first_run)
            b.call("repo", "create_issue", "issue", title=f"Failing test: {test}", labels=["ci", "bug"])
            b.call("repo", "update_issue", issue_id={"$ref": "issue.id"}, assignees=[red.culprit.login])
            b.say(f"Issue opened for {test} and assigned to {red.culprit.login}.")
