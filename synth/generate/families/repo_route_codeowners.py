"""Code repository: request reviews on a pull request from the code owners of the files it touches, reading
CODEOWNERS as GitHub does (of the rules that match a path, the last wins; the author never reviews their own)."""

from __future__ import annotations

from coworkenv.servers.repo.codeowners import owners_of
from coworkenv.synth.generate.families.kit.base import CROSS, DISTRACTORS, Family, Json, TaskBuilder
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.repo_common import MODULES, WORKFLOW, Repo


@register_family
class RouteToCodeOwners(Family):
    name = "repo-route-pr-codeowners"
    scenario = "routing a pull request to the code owners of what it touches"
    capabilities = (CROSS, DISTRACTORS)
    service_options = (("repo",),)
    distractors = (
        "the owner of the folder whose rule a later, narrower rule overrides; the catch-all owner; other open "
        "pull requests touching other files (one, two, three by level); (hard) the author, who owns one of the touched "
        "files"
    )

    def build(self, b: TaskBuilder) -> str:
        repo = Repo(b)
        modules = b.rng.sample(MODULES, 5)
        repo.start(modules, days=30)
        author, lead, folder, narrow, docs, ci = (repo.dev() for _ in range(6))
        pkg = f"/src/{repo.package}/"
        rules = [
            ("*", [lead.login]),
            (pkg, [folder.login]),
            (f"{pkg}{modules[0]}.py", [narrow.login]),
            ("/docs/", [docs.login]),
            ("/.github/", [ci.login, author.login] if b.hard else [ci.login]),
        ]
        repo.owners(rules)
        files = {
            f"src/{repo.package}/{modules[0]}.py": repo.change("", modules[0], 3)[f"src/{repo.package}/{modules[0]}.py"]
        }
        files[f"docs/{modules[0]}.md"] = f"# {modules[0]}\n\nHow {modules[0]} works.\n"
        if b.difficulty != "easy":
            files |= repo.change("", modules[1], 2)
        if b.hard:
            files[".github/workflows/ci.yml"] = WORKFLOW.replace("pytest -q", "pytest -q -x")
        branch = f"feature/{modules[0]}-rework"
        repo.commit(branch, author.login, f"Rework {modules[0]}", files, 1)
        pr = repo.pull(f"Rework {modules[0]}", author, branch, 1, body=f"Reworks {modules[0]} and documents it.")
        for ago, other in enumerate(modules[2 : 2 + {"easy": 1, "medium": 2}.get(b.difficulty, 3)], 2):
            other_branch = f"fix/{other}-typo"  # other open pull requests, one more at each level
            repo.commit(other_branch, folder.login, f"Fix a typo in {other}", repo.change("", other, 1), ago)
            b.distract(repo.pull(f"Fix a typo in {other}", folder, other_branch, ago)["id"])
        repo.finish()
        table = [{"pattern": p, "owners": [f"@{o}" for o in who], "line": i} for i, (p, who) in enumerate(rules, 1)]
        wanted = sorted({o for path in files for o in owners_of(table, path)} - {author.login})
        everyone = [d.login for d in (lead, folder, narrow, docs, ci, author)]
        wrong = [x for x in everyone if x not in wanted]
        self._reference(b, pr, wanted)
        self._checks(b, pr, wanted, wrong)
        ask = Ask(
            steps=(
                b.pick(
                    "request reviews on PR #{n} from the code owners of the files it changes",
                    "route pull request #{n} to whoever owns the code it touches, per CODEOWNERS",
                ),
            ),
            context=b.pick("{who} just opened it.", "{who} asked for reviewers."),
            avoid=b.pick("Only the owners, nobody else.", "Don't add anyone who doesn't own those files."),
            topic="reviewers for PR #{n}",
        )
        return compose(b, ask, n=pr["number"], who=author.first)

    @staticmethod
    def _reference(b: TaskBuilder, pr: Json, wanted: list[str]) -> None:
        b.call("repo", "get_pull_request", "pr", pull_request_id=pr["id"])
        b.call("repo", "list_codeowners")
        b.call("repo", "request_reviewers", pull_request_id=pr["id"], reviewers=wanted)
        b.say(f"Requested reviews on #{pr['number']} from {', '.join(wanted)}.")
        with b.alternative():  # the files listed first, one request per owner
            b.call("repo", "list_pull_request_files", pull_request_id=pr["id"])
            b.call("repo", "list_codeowners")
            for login in wanted:
                b.call("repo", "request_reviewers", pull_request_id=pr["id"], reviewers=[login])
            b.say(f"Asked {', '.join(wanted)} to review #{pr['number']}.")

    @staticmethod
    def _checks(b: TaskBuilder, pr: Json, wanted: list[str], wrong: list[str]) -> None:
        where = {"kind": "record_fields", "service": "repo", "table": "pull_requests", "id": pr["id"]}
        b.check(
            "owners_requested",
            0.7,
            f"The code owners of the touched files ({', '.join(wanted)}) are requested as reviewers.",
            {**where, "fields": {"requested_reviewers": {"contains": wanted}}},
        )
        b.check(
            "no_one_else",
            0.3,
            "No one who owns none of the touched files (nor the author) is requested.",
            {**where, "fields": {"requested_reviewers": {"not": {"any": {"in": wrong}}}}},
            ("owners_requested",),
        )
        b.forbid_call(
            "merged_it",
            "Merging the pull request, when asked only to route it for review.",
            "repo",
            "merge_pull_request",
            {},
            {"pull_request_id": pr["id"]},
        )
