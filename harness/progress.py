"""A one-line progress bar on stderr: done/total, rate, time left, and failures by kind."""

from __future__ import annotations

import sys
import time
from collections import Counter
from typing import TextIO

WIDTH = 24


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
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def update(self, status: str, passed: bool) -> None:
        self.done += 1
        self.statuses[status] += 1
        self.passed += int(passed)
        now = time.perf_counter()
        if self.enabled and (self.done == self.total or now - self._last >= (0.1 if self._tty else 5.0)):
            self._last = now
            self._draw()

    def line(self) -> str:
        elapsed = max(time.perf_counter() - self._t0, 1e-9)
        rate = self.done / elapsed
        left = (self.total - self.done) / rate if rate > 0 else 0.0
        filled = int(WIDTH * self.done / self.total) if self.total else WIDTH
        bar = "#" * filled + "." * (WIDTH - filled)
        fails = ", ".join(f"{k} {v}" for k, v in sorted(self.statuses.items()) if k != "completed")
        parts = [
            f"[{bar}] {self.done}/{self.total}",
            f"{rate:.1f} ep/s",
            f"eta {int(left) // 60}:{int(left) % 60:02d}",
            f"passed {self.passed}",
        ]
        if fails:
            parts.append(fails)
        if self.skipped:
            parts.append(f"{self.skipped} already done")
        return " · ".join(parts)

    def _draw(self) -> None:
        end = "" if self._tty and self.done < self.total else "\n"
        prefix = "\r" if self._tty else ""
        self.stream.write(prefix + self.line() + end)
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self._tty and self.done < self.total:
            self.stream.write("\n")
            self.stream.flush()
