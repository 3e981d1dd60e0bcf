"""Tasks hold a workplace, not a handful of records: at the default plan's mix of levels a task has a median
of at least 60 seed records, and no background text (a mail, a ticket, a note, a document, a chat line)
appears twice in one task."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterator
from typing import Any

from coworkenv.synth.contract.task import Task
from coworkenv.synth.generate.families import shipped_families
from coworkenv.synth.generate.families.kit.vocabulary import Phrasebook
from coworkenv.synth.generate.plan import coverage_plan, load_plan
from coworkenv.synth.generate.procedural import build_task, derive_seed

TEXTS = {
    ("email", "messages"): ("subject", "body"),
    ("tickets", "tickets"): ("subject", "description"),
    ("tickets", "comments"): ("ticket_id", "body"),
    ("crm", "activities"): ("subject", "body"),
    ("docs", "documents"): ("title",),
    ("chat", "messages"): ("text",),
}


def _plan_tasks(count: int, seed: int) -> list[Task]:
    cells = [c for c in coverage_plan(load_plan(), count, seed) for _ in range(c.quota)]
    return [build_task(c, derive_seed(seed, c.key, i)) for i, c in enumerate(cells)]


def _records(task: Task) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for service, tables in task.initial_records.items():
        for table, rows in tables.items():
            for row in rows:
                yield service, table, row


def _repeats(task: Task) -> list[tuple[str, ...]]:
    """Texts that occur twice among the records a task does not list as distractors (look-alikes repeat on
    purpose)."""
    distractors = set(task.metadata.get("distractors", []))
    seen: Counter[tuple[str, ...]] = Counter()
    for service, table, row in _records(task):
        fields = TEXTS.get((service, table))
        if fields and row["id"] not in distractors:
            seen[(service, table, *(str(row.get(f)) for f in fields))] += 1
    return [k for k, n in seen.items() if n > 1]


def test_the_default_plan_makes_tasks_with_a_median_of_sixty_records_or_more() -> None:
    tasks = _plan_tasks(200, 3)
    sizes = [sum(1 for _ in _records(t)) for t in tasks]
    print(f"\nseed records per task over {len(tasks)} tasks: median {statistics.median(sizes)}, min {min(sizes)}")
    assert statistics.median(sizes) >= 60


def test_no_background_text_repeats_within_a_task() -> None:
    for name, family in shipped_families().items():
        for services in family.service_options:
            for level in ("easy", "medium", "hard"):
                for seed in (1, 2):
                    task = family.make(services, level, seed)  # type: ignore[arg-type]
                    assert not _repeats(task), (name, level, seed, _repeats(task)[:3])


def test_the_phrasebook_never_gives_the_same_text_twice() -> None:
    import random

    book = Phrasebook(random.Random(5))
    drawn = [book.internal_mail() for _ in range(150)] + [book.crm_note() for _ in range(150)]
    drawn += [book.document() for _ in range(150)]
    assert len(set(drawn)) == len(drawn)
    chats = [book.chat() for _ in range(200)]
    assert len(set(chats)) == len(chats)
