"""One CPU per synthesis worker: with one busy worker per CPU the scheduler otherwise moves them about, and each
move starts on a cold cache (measured on 2 CPUs: two unpinned workers spend ~5 % more CPU time on the same
tasks). Work still goes to whichever worker is free, so a CPU that something else keeps busy only means its
worker takes fewer jobs; a machine that forbids pinning runs the workers unpinned."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections.abc import Sequence
from typing import Any


def cores_for(workers: int) -> list[int]:
    """The CPUs to pin the workers to, one each: when there are at least as many as workers (else none)."""
    try:
        cores = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return []
    return cores if 1 < workers <= len(cores) else []


def start_counter(cores: Sequence[int]) -> Any:
    """The count of workers started so far, shared with them (None when nothing is pinned)."""
    return multiprocessing.Value("i", 0) if cores else None


def pin(started: Any, cores: Sequence[int]) -> None:
    """Keep this worker on a CPU of its own: the n-th worker started on the n-th CPU."""
    if not cores or started is None:
        return
    with started.get_lock():
        n = started.value
        started.value += 1
    with contextlib.suppress(OSError):  # not allowed here: run unpinned
        os.sched_setaffinity(0, {cores[n % len(cores)]})
