"""A busy machine on demand, and Messages API replies that play a task's reference solution.

:func:`busy_cores` starts N processes that spin (``while True: pass``) and kills them (by their pids) when the
block ends, however it ends. :func:`reference_replies` turns a task's reference solution into the scripted
replies of :mod:`tests.fakes.messages_api`: one ``tool_use`` block a reply (``mcp__<service>__<tool>``), then the
reference's closing ``say`` as text.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from coworkenv.synth.contract.task import SayStep, Task


@contextmanager
def busy_cores(n: int) -> Iterator[list[int]]:
    """``n`` spinning processes for the duration of the block; yields their pids."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield [p.pid for p in spinners]
    finally:
        for p in spinners:
            p.kill()
        for p in spinners:
            p.wait()


def reference_replies(task: Task) -> list[list[dict[str, Any]]]:
    """The model's replies that solve ``task`` as its reference does (arguments without ``$ref``s)."""
    replies: list[list[dict[str, Any]]] = []
    said = []
    for n, step in enumerate(task.reference_solution):
        if isinstance(step, SayStep):
            said.append(step.say)
            continue
        name = f"mcp__{step.service}__{step.tool}"
        replies.append([{"type": "tool_use", "id": f"toolu_{n}", "name": name, "input": step.arguments}])
    return [*replies, [{"type": "text", "text": " ".join(said) or "Done."}]]
