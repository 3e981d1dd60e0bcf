"""Code repository: write release notes as an issue listing every pull request merged into main since the last
tag, and none of the others (merged before the tag, still open, closed unmerged)."""

from __future__ import annotations

from dataclasses import dataclass

from coworkenv.synth.generate.families.kit.base import DISTRACTORS, WINDOW, Family, Json, TaskBuilder, rx
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.repo_common import MODULES, Repo

CHANGES = (
    "Add CSV export", "Retry failed webhooks", "Speed up search indexing", "Fix timezone in reports",
    "Paginate the audit log", "Cache session lookups", "Validate upload size", "Support SSO login",
    "Drop Python 3.9", "Rate-limit the public API", "Archive old invoices", "Localise error messages",
    "Stream large downloads", "Dark mode for settings",
)  # fmt: skip


@dataclass
class _Release:
    """The pull requests of the coming release and those that are not in it, and the two tags' names."""

    targets: list[Json]
    others: list[Json]
    open_pr: Json
    old: str
    new: str


@register_family
class ReleaseNotes(Family):
    name = "repo-release-notes"
    scenario = "release notes from the pull requests merged since the last tag"
    capabilities = (WINDOW, DISTRACTORS)
    service_options = (("repo",),)
    distractors = (
        "pull requests merged before the last tag; an open pull request; a pull request closed without merging "
        "after the tag"
    )

    def build(self, b: TaskBuilder) -> str:
        r = self._seed(b)
        self._reference(b, r.targets, r.old, r.new)
        self._checks(b, r.targets, r.others, r.new)
        b.forbid_call(
            "merged_open",
            "Merging the open pull request to get it into the release.",
            "repo",
            "merge_pull_request",
            {},
            {"pull_request_id": r.open_pr["id"]},
        )
        ask = Ask(
            steps=(
                b.pick("write the release notes for {new}", "draft the {new} release notes"),
                b.pick(
                    "open an issue titled 'Release notes {new}' listing every PR merged since {old} (number and title)",
                    "put them in a new issue called 'Release notes {new}', one line per PR merged since {old}",
                ),
            ),
            avoid=b.pick("Only what actually got merged.", "Leave out anything that isn't merged."),
            topic="{new} release notes",
        )
        return compose(b, ask, new=r.new, old=r.old)

    @staticmethod
    def _seed(b: TaskBuilder) -> _Release:
        repo = Repo(b)
        modules = b.rng.sample(MODULES, 6)
        repo.start(modules, days=60)
        devs = [repo.dev() for _ in range(3)]
        titles = b.rng.sample(CHANGES, 5 + b.targets)
        minor = b.rng.randrange(2, 9)
        old, new = f"v1.{minor}.0", f"v1.{minor + 1}.0"
        version = 1
        before = []
        for i in range(2):
            version += 1
            pr = repo.merged(titles.pop(), b.rng.choice(devs), repo.change("", modules[i], version), 30 - 3 * i)
            before.append(pr)
        b.add(
            "repo",
            "tags",
            {"id": b.uid("tag_", old), "name": old, "commit_id": repo.heads["main"], "created_at": b.ago(20)},
        )
        targets = []
        for i in range(1 + b.targets):
            version += 1
            module = modules[2 + i % 3]
            targets.append(repo.merged(titles.pop(), b.rng.choice(devs), repo.change("", module, version), 15 - 3 * i))
        branch = "feature/next"
        repo.commit(branch, devs[0].login, "Next thing", repo.change("", modules[5], 9), 2)
        open_pr = repo.pull(titles.pop(), devs[0], branch, 2)
        when = b.ago(5)
        closed = repo.pull(
            titles.pop(), devs[1], "feature/abandoned", 6, state="closed", closed_at=when, updated_at=when
        )
        others = [*before, open_pr, closed]
        b.distract(*(p["id"] for p in others))
        repo.finish()
        return _Release(targets, others, open_pr, old, new)

    @staticmethod
    def _reference(b: TaskBuilder, targets: list[Json], old: str, new: str) -> None:
        lines = "\n".join(f"- #{p['number']} {p['title']}" for p in targets)
        b.call("repo", "list_tags")
        b.call("repo", "list_pull_requests", "merged", state=["merged"], merged_after=b.ago(20))
        b.call(
            "repo",
            "create_issue",
            title=f"Release notes {new}",
            body=f"Changes since {old}:\n{lines}",
            labels=["release"],
        )
        b.say(f"Opened the release notes for {new} with {len(targets)} pull requests.")
        with b.alternative():  # every merged pull request read, the notes by title only
            b.call("repo", "list_pull_requests", state=["merged"])
            b.call("repo", "list_tags")
            titles_only = "\n".join(f"* {p['title']}" for p in targets)
            b.call("repo", "create_issue", title=f"Release notes {new}", body=titles_only)
            b.say(f"The {new} notes are in a new issue.")

    @staticmethod
    def _checks(b: TaskBuilder, targets: list[Json], others: list[Json], new: str) -> None:
        notes = {"title": {"regex": rx(new)}}
        for i, p in enumerate(targets):
            b.check(
                f"lists_{i + 1}",
                0.6 / len(targets),
                f"The {new} release notes mention #{p['number']} ({p['title']}).",
                {
                    "kind": "record_exists",
                    "service": "repo",
                    "table": "issues",
                    "where": {
                        **notes,
                        "body": {"regex": rf"#{p['number']}\b|{rx(p['title'])}", "case_insensitive": True},
                    },
                },
            )
        wrong = "|".join(rf"#{p['number']}\b|{rx(p['title'])}" for p in others)
        b.check(
            "nothing_else",
            0.4,
            "The notes mention no pull request merged before the tag, still open or closed unmerged.",
            {
                "kind": "record_absent",
                "service": "repo",
                "table": "issues",
                "where": {**notes, "body": {"regex": wrong, "case_insensitive": True}},
            },
            tuple(f"lists_{i + 1}" for i in range(len(targets))),
        )
