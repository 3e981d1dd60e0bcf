"""De-duplication of synthesized tasks.

Two tasks are near-identical when they have the same **normalised request prefix** (lower case,
punctuation dropped, the first ``PREFIX_WORDS`` words) and the same **record fingerprint** (a hash of
the seed records with what varies without changing the situation left out: ids, references to ids and
timestamps). The first one seen is kept; later ones are dropped and counted.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from coworkenv.synth.contract.task import Task

PREFIX_WORDS = 12
_WORD = re.compile(r"[a-z0-9]+")
_TIME = re.compile(r"^\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?$")


def normalise_request(text: str, words: int = PREFIX_WORDS) -> str:
    """'Please escalate EVERY ticket, now!' → 'please escalate every ticket now' (first ``words`` words)."""
    return " ".join(_WORD.findall(text.casefold())[:words])


def _volatile(key: str) -> bool:
    return key == "id" or key.endswith(("_id", "_ids")) or key in ("thread_id", "internet_message_id", "in_reply_to")


def _stable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if not _volatile(k)}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    if isinstance(value, str) and _TIME.match(value):
        return "<time>"
    return value


def record_fingerprint(task: Task) -> str:
    """A hash of the seed records, blind to ids and times; the order of records in a table does not matter."""
    return records_fingerprint(task.initial_records)


def records_fingerprint(initial_records: dict[str, dict[str, list[dict[str, Any]]]]) -> str:
    """:func:`record_fingerprint` of a task's ``initial_records`` as they stand (e.g. in a task file's JSON)."""
    canon: dict[str, dict[str, list[str]]] = {}
    for service, tables in sorted(initial_records.items()):
        canon[service] = {
            table: sorted(json.dumps(_stable(r), sort_keys=True, ensure_ascii=False) for r in rows)
            for table, rows in sorted(tables.items())
        }
    return hashlib.sha256(json.dumps(canon, sort_keys=True).encode()).hexdigest()[:16]


def dedup_key(task: Task) -> tuple[str, str]:
    return normalise_request(task.request), record_fingerprint(task)


def dedup_key_of(data: dict[str, Any]) -> tuple[str, str]:
    """:func:`dedup_key` of a task as its file's JSON (``task_dict``), without loading it as a task."""
    return normalise_request(data["request"]), records_fingerprint(data.get("initial_records", {}))


@dataclass
class Deduplicator:
    """Remembers the tasks kept so far; ``admit`` says whether a new one is a near-duplicate of one of them."""

    seen: dict[tuple[str, str], str] = field(default_factory=dict)
    dropped: list[tuple[str, str]] = field(default_factory=list)
    """(dropped task id, id of the task it duplicates)."""

    def duplicate_of(self, task: Task) -> str | None:
        return self.seen.get(dedup_key(task))

    def admit(self, task: Task) -> bool:
        """Keep the task (True) unless it is a near-duplicate of one kept earlier (then it is counted)."""
        return self.admit_key(task.id, dedup_key(task))

    def admit_key(self, task_id: str, key: tuple[str, str]) -> bool:
        """:meth:`admit` for a task known by its id and :func:`dedup_key`."""
        earlier = self.seen.get(key)
        if earlier is not None:
            self.dropped.append((task_id, earlier))
            return False
        self.seen[key] = task_id
        return True

    @property
    def duplicates(self) -> int:
        return len(self.dropped)


def deduplicate(tasks: Iterable[Task]) -> tuple[list[Task], list[tuple[str, str]]]:
    """The tasks without near-duplicates (first kept), and (dropped id, kept id) for each one dropped."""
    d = Deduplicator()
    kept = [t for t in tasks if d.admit(t)]
    return kept, d.dropped
