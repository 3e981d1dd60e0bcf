"""To-do list: closing the tasks entered twice by completing the later copy (never deleting), and keeping the first
one and the look-alike tasks for other customers open."""

from __future__ import annotations

from coworkenv.synth.generate.families.kit.base import DISTRACTORS, Family, Json, TaskBuilder, shares
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family

CHORES = (
    "Send {company} the renewal quote",
    "Schedule the onboarding call with {company}",
    "Prepare the quarterly review deck for {company}",
    "Chase {company} about the unpaid invoice",
    "Draft the security questionnaire answers for {company}",
    "Book the gateway install at {company}",
)
OWN_LIST = ("terse", "detailed", "bullets", "typo", "non_native")
"""The request styles in which the list is the user's own (a manager's or forwarded request would make it theirs)."""
OTHER = (
    "Submit the monthly expenses",
    "Review the support metrics",
    "Renew the status page certificate",
    "Plan the team offsite",
    "Update the on-call rota",
    "Clean up the shared drive",
    "Write the release notes",
)


@register_family
class DuplicateTodos(Family):
    name = "todo-duplicate-cleanup"
    scenario = "cleaning up a to-do list"
    capabilities = (DISTRACTORS,)
    service_options = (("todo",),)
    distractors = (
        "the first entry of each duplicate; the same chore for another customer; (hard) the copy is worded in "
        "other case and punctuation"
    )

    def build(self, b: TaskBuilder) -> str:
        companies = [b.names.company().name for _ in range(b.targets * 2 + 2)]
        chores = b.rng.sample(CHORES, len(CHORES))
        serial = iter(range(b.rng.randrange(100, 700, 10), 10_000))
        priorities = ("low", "medium", "high")

        def task(title: str, days: float, priority: str, due: int | None) -> Json:
            record: Json = {
                "id": f"TODO-{next(serial)}",
                "title": title,
                "priority": priority,
                "status": "pending",
                "due_date": None if due is None else b.ahead(days=due)[:10],
                "assignee": "me",
                "created_at": b.ago(days=days),
                "updated_at": b.ago(days=days),
            }
            return b.add("todo", "tasks", record)

        originals, copies = [], []
        for i in range(b.targets):
            title = chores[i].format(company=companies[i])
            priority, due = b.rng.choice(priorities), b.rng.randint(1, 10)
            originals.append(task(title, b.rng.randint(6, 12) + i / 10, priority, due))
            worded = title.lower().rstrip(".") + "!" if b.hard else title
            copies.append(task(worded, b.rng.randint(1, 4) + i / 10, priority, due))
        b.distract(*(t["id"] for t in originals))
        for n in range(b.n_distractors()):
            chore = chores[n % b.targets].format(company=companies[b.targets + n % (len(companies) - b.targets)])
            b.distract(task(chore, b.rng.randint(2, 9), b.rng.choice(priorities), b.rng.randint(1, 10))["id"])
        for title in b.rng.sample(OTHER, min(b.n_filler(), len(OTHER))):
            task(title, b.rng.randint(1, 20), b.rng.choice(priorities), b.rng.choice((None, 3, 7, 14)))

        b.call("todo", "list_tasks", "open", status=["pending", "in_progress"], page_size=100)
        for copy in copies:
            b.call("todo", "complete_task", task_id=copy["id"])
        with b.alternative():  # found one by one by text, closed with update_task
            for copy in copies:
                b.call("todo", "list_tasks", query=copy["title"].split()[-1].strip("!"))
                b.call("todo", "update_task", task_id=copy["id"], status="completed")
        self._checks(b, originals, copies)
        ask = Ask(
            steps=(
                b.pick(
                    "clean up my to-do list: some tasks got entered twice",
                    "go through my to-dos and close the ones I added twice",
                    "tidy my task list, there are duplicates in it",
                ),
                b.pick(
                    "mark the later copy of each as completed and keep the first one",
                    "for each pair, complete the newer entry and leave the older one open",
                ),
            ),
            avoid=b.pick("Don't delete anything.", "Please don't delete any task, just complete the copies.", ""),
            topic="duplicate to-dos",
            styles=OWN_LIST,
        )
        return compose(b, ask)

    @staticmethod
    def _checks(b: TaskBuilder, originals: list[Json], copies: list[Json]) -> None:
        for n, (copy, weight) in enumerate(zip(copies, shares(0.7, len(copies)), strict=True)):
            b.check(
                f"copy_{n + 1}_completed",
                weight,
                f"The later copy of '{originals[n]['title']}' is completed.",
                {
                    "kind": "record_exists",
                    "service": "todo",
                    "table": "tasks",
                    "where": {"id": copy["id"], "status": "completed"},
                },
            )
        b.check(
            "others_open",
            0.3,
            "The first entries and the same chores for other customers are left as they were.",
            {"kind": "records_unchanged", "service": "todo", "table": "tasks", "ids": list(b.distractors)},
            ("copy_1_completed",),
        )
        b.forbid_call(
            "deleted_a_task",
            "Deleting a task, which the user asked not to do.",
            "todo",
            "delete_task",
            {},
            {"task_id": copies[0]["id"]},
        )
        b.forbid_call(
            "completed_the_original",
            "Completing the first entry of a duplicate instead of (or as well as) the later copy.",
            "todo",
            "complete_task",
            {"task_id": {"in": [t["id"] for t in originals]}},
            {"task_id": originals[0]["id"]},
        )
