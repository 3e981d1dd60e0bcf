"""Code repository: main's CI is red; find the commit that first broke the failing test and revert it on main,
and only it (the later commits are red by inheritance; the open pull request's red run is its own)."""

from __future__ import annotations

from coworkenv.synth.generate.families.kit.base import DISTRACTORS, REPORT, Family, TaskBuilder, rx
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.repo_common import MODULES, RedMain, Repo, red_main


@register_family
class RevertBreakingCommit(Family):
    name = "repo-revert-breaking-commit"
    scenario = "reverting the commit that broke the build"
    capabilities = (DISTRACTORS, REPORT)
    service_options = (("repo",),)
    distractors = (
        "the later commits on main whose runs are red only by inheritance; an open pull request whose branch "
        "fails another test; (hard) an earlier red run that went green again"
    )

    def build(self, b: TaskBuilder) -> str:
        repo = Repo(b)
        red = red_main(b, repo, b.rng.sample(MODULES, 4 + b.targets))
        b.distract(*red.later)
        b.call("repo", "list_ci_runs", "runs", branch_name="main")
        b.call("repo", "list_commits", "history", ref="main")
        b.call("repo", "get_commit", commit_id=red.breaking)
        b.call("repo", "revert_commit", commit_id=red.breaking, branch_name="main")
        b.say(f"Commit {red.breaking} (by {red.culprit.login}) broke {red.test}; I reverted it on main.")
        with b.alternative():  # from the history to the runs of each commit, with a message of its own
            b.call("repo", "list_commits", ref="main")
            b.call("repo", "list_ci_runs", commit_id=red.breaking)
            b.call(
                "repo", "revert_commit", commit_id=red.breaking, branch_name="main", message=f"Revert {red.breaking}"
            )
            b.say(f"Reverted {red.breaking} on main; it is where {red.test} started failing.")
        self._checks(b, red)
        ask = Ask(
            steps=(
                b.pick("find the commit that broke the build on main", "figure out which commit made main go red"),
                b.pick("revert it on main", "revert just that commit on main"),
            ),
            context=b.pick("main has been failing CI since yesterday.", "The build on main is broken."),
            avoid=b.pick("Leave the other commits alone.", "Don't revert anything else."),
            report=b.pick("tell me which commit it was", "let me know which one you reverted"),
            topic="broken build on main",
        )
        return compose(b, ask)

    @staticmethod
    def _checks(b: TaskBuilder, red: RedMain) -> None:
        b.check(
            "reverted",
            0.4,
            f"A commit on main reverts {red.breaking}, the commit where the test first failed.",
            {
                "kind": "record_exists",
                "service": "repo",
                "table": "commits",
                "where": {"reverts": red.breaking, "branch": "main"},
            },
        )
        b.check(
            "only_that_one",
            0.3,
            "No other commit is reverted.",
            {
                "kind": "record_absent",
                "service": "repo",
                "table": "commits",
                "where": {"reverts": {"in": [*red.later, *red.earlier]}},
            },
            ("reverted",),
        )
        b.check(
            "named_it",
            0.3,
            "The reply names the reverted commit.",
            {"kind": "said_matches", "pattern": rx(red.breaking)},
            ("reverted",),
        )
        b.forbid_call(
            "reverted_latest",
            "Reverting the latest red commit, which only inherited the failure.",
            "repo",
            "revert_commit",
            {"commit_id": {"in": red.later}},
            {"commit_id": red.later[-1], "branch_name": "main"},
        )
