"""The progress of a run on stderr, drawn with rich (the one progress library of the command line): on a
terminal a live bar (done/total, rate, time left, passed, failures by kind); elsewhere (a log file, CI) the
same facts as a plain line every few seconds and at the end."""

from __future__ import annotations

import sys
import time
from collections import Counter
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TaskProgressColumn, TextColumn, TimeRemainingColumn
from rich.progress import Progress as RichProgress

PLAIN_EVERY_S = 5.0


def console_for(stream: TextIO) -> Console:
    """A rich console on ``stream``: styled on a terminal, plain text (no colour codes) elsewhere."""
    terminal = bool(getattr(stream, "isatty", lambda: False)())
    return Console(file=stream, no_color=not terminal, highlight=False, width=None if terminal else 200)


def progress_bar(console: Console) -> RichProgress:
    """The bar every long command draws: label, bar, done/total, percent, time left, and a status field."""
    return RichProgress(
        TextColumn("{task.description}", style="bold"),
        BarColumn(bar_width=24),
        MofNCompleteColumn(),
        TaskProgressColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[status]}"),
        console=console,
        transient=False,
    )


class Progress:
    def __init__(self, total: int, *, skipped: int = 0, stream: TextIO | None = None, enabled: bool = True) -> None:
        self.total = total
        self.skipped = skipped
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.done = 0
        self.statuses: Counter[str] = Counter()
        self.passed = 0
        self._t0 = time.perf_counter()
        self._last = 0.0
        self._console = console_for(self.stream)
        self._bar: RichProgress | None = None
        if enabled and self._console.is_terminal:
            self._bar = progress_bar(self._console)
            self._task = self._bar.add_task("episodes", total=total, status=self.status())
            self._bar.start()

    def status(self) -> str:
        fails = ", ".join(f"{k} {v}" for k, v in sorted(self.statuses.items()) if k != "completed")
        parts = [f"passed {self.passed}", *([fails] if fails else [])]
        if self.skipped:
            parts.append(f"{self.skipped} already done")
        return " · ".join(parts)

    def update(self, status: str, passed: bool) -> None:
        self.done += 1
        self.statuses[status] += 1
        self.passed += int(passed)
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done, status=self.status())
            return
        now = time.perf_counter()
        if self.done == self.total or now - self._last >= PLAIN_EVERY_S:
            self._last = now
            self._console.print(self.line(), markup=False, soft_wrap=True)

    def line(self) -> str:
        elapsed = max(time.perf_counter() - self._t0, 1e-9)
        rate = self.done / elapsed
        left = (self.total - self.done) / rate if rate > 0 else 0.0
        return (
            f"episodes {self.done}/{self.total} · {rate:.1f} ep/s · eta {int(left) // 60}:{int(left) % 60:02d}"
            f" · {self.status()}"
        )

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
