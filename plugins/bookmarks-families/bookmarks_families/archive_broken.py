"""Bookmarks: archive a colleague's broken links, keep their working ones and everybody else's."""

from __future__ import annotations

from coworkenv.synth.generate.families.kit.base import DISTRACTORS, Family, TaskBuilder

LINKS = (
    ("Release checklist", "https://wiki.brightwave.io/release"),
    ("Design tokens", "https://brightwave.io/design/tokens"),
    ("On-call runbook", "https://wiki.brightwave.io/oncall"),
    ("Quarterly goals", "https://docs.brightwave.io/goals"),
    ("Office floor plan", "https://brightwave.io/office"),
    ("Expense policy", "https://docs.brightwave.io/expenses"),
    ("API changelog", "https://dev.brightwave.io/changelog"),
    ("Brand assets", "https://brightwave.io/brand"),
    ("Team calendar", "https://calendar.brightwave.io/team"),
    ("Travel booking", "https://travel.brightwave.io"),
)
PEOPLE = ("dana@brightwave.io", "sam@brightwave.io", "lee@brightwave.io", "ari@brightwave.io")


class ArchiveBroken(Family):
    name = "bookmarks-archive-broken"
    scenario = "archiving a colleague's broken bookmarks"
    capabilities = (DISTRACTORS,)
    service_options = (("bookmarks",),)
    distractors = "the colleague's working bookmarks; other people's broken ones"

    def build(self, b: TaskBuilder) -> str:
        links = b.rng.sample(LINKS, len(LINKS))
        owner, *others = b.rng.sample(PEOPLE, len(PEOPLE))
        folder = str(b.add("bookmarks", "folders", {"id": b.uid("fld_", "shared"), "name": "Shared links"})["id"])

        def bookmark(title: str, url: str, saved_by: str, status: str, days: float) -> str:
            record = {
                "id": b.uid("bm_", title),
                "url": url,
                "title": title,
                "folder_id": folder,
                "status": status,
                "saved_by": saved_by,
                "created_at": b.ago(days),
            }
            return str(b.add("bookmarks", "bookmarks", record)["id"])

        targets = [bookmark(*links.pop(), owner, "broken", 30 + i) for i in range(b.targets)]
        for i in range(b.n_distractors()):
            title, url = links.pop()
            mine = i % 2 == 0
            b.distract(bookmark(title, url, owner if mine else others[i % 3], "ok" if mine else "broken", 5 + i))
        for i in range(min(b.n_filler(), len(links))):
            bookmark(*links.pop(), b.rng.choice(others), "ok", 2 + i)

        b.call("bookmarks", "list_bookmarks", "found", status="broken")
        for target in targets:
            b.call("bookmarks", "update_bookmark", bookmark_id=target, status="archived")
        share = round(0.7 / len(targets), 6)
        weights = [share] * (len(targets) - 1) + [round(0.7 - share * (len(targets) - 1), 6)]
        for i, (target, weight) in enumerate(zip(targets, weights, strict=True)):
            b.check(
                f"archived_{i}",
                weight,
                "One of the colleague's broken bookmarks is archived (kept, not deleted).",
                {"kind": "record_fields", "service": "bookmarks", "table": "bookmarks", "id": target,
                 "fields": {"status": "archived"}},
            )  # fmt: skip
        b.check(
            "others_kept",
            0.3,
            "The colleague's working bookmarks and other people's broken ones are left as they were.",
            {"kind": "records_unchanged", "service": "bookmarks", "table": "bookmarks", "ids": list(b.distractors)},
            tuple(f"archived_{i}" for i in range(len(targets))),
        )
        b.forbid_call(
            "deleted_bookmark",
            "Deleting a bookmark instead of archiving it.",
            "bookmarks",
            "delete_bookmark",
            {},
            {"bookmark_id": targets[0]},
        )
        first = owner.split("@")[0].capitalize()
        return (
            f"{first} is leaving the team. Please archive {first}'s bookmarks whose links are broken; "
            "don't delete anything, and leave everything else alone."
        )
