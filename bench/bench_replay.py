"""Replaying task files' reference calls on the direct door, timing each call (used by ``bench_calls.py``).

As a script it is the baseline's worker: ``python bench/bench_replay.py --root DIR --tasks DIR --rounds N``
imports ``coworkenv.servers`` from ``DIR/servers`` (a ``git archive`` of an older commit) instead of this tree,
replays, and prints the samples as one JSON line.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any

Samples = list[float]
_REF_HEAD = re.compile(r"^([A-Za-z0-9_-]+)(?:\.(.*))?$")


def p50(samples: Samples) -> float:
    return sorted(samples)[len(samples) // 2] if samples else 0.0


def p99(samples: Samples) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] if ordered else 0.0


def merge(into: dict[str, Samples], more: Mapping[str, Samples]) -> None:
    for key, values in more.items():
        into.setdefault(key, []).extend(values)


def _get_path(obj: Any, path: str) -> Any:
    for part in path.split(".") if path else []:
        if isinstance(obj, Mapping):
            obj = obj[part]
        elif part.lstrip("-").isdigit():
            obj = obj[int(part)]
        else:
            obj = [item[part] for item in obj if isinstance(item, Mapping) and part in item]
    return obj


def resolve(value: Any, results: Mapping[str, Any]) -> Any:
    """``{"$ref": "step.path"}`` → that value of an earlier step's result (as the task runner does)."""
    if isinstance(value, Mapping):
        if set(value) == {"$ref"}:
            m = _REF_HEAD.match(value["$ref"])
            assert m is not None
            return _get_path(results[m.group(1)], m.group(2) or "")
        return {k: resolve(v, results) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, results) for v in value]
    return value


def load_tasks(folder: Path) -> list[dict[str, Any]]:
    out = []
    for path in sorted(Path(folder).glob("*.json")):
        doc = json.loads(path.read_text())
        if isinstance(doc, dict) and "reference_solution" in doc:
            out.append(doc)
    return out


def known_services() -> list[str]:
    """The services of the imported ``coworkenv.servers`` (this tree's, or a baseline's after ``_use_root``)."""
    from coworkenv.servers.registry import SERVICES

    return sorted(SERVICES)


def replay_tasks(folder: Path, rounds: int, services: set[str] | None = None) -> dict[str, Samples]:
    """Each round: for every task a fresh environment from its seed, then its reference calls through
    ``Environment.call`` (driven without an event loop: a direct-door call never suspends).
    ``services`` keeps only the tasks that use nothing else (so an older tree replays the same tasks)."""
    from coworkenv.servers import Environment

    tasks = [t for t in load_tasks(folder) if services is None or set(t["services"]) <= services]
    out: dict[str, Samples] = {"all": [], "read": [], "write": [], "env_ms": []}
    clock = time.perf_counter
    for _ in range(rounds):
        for task in tasks:
            seeds = {name: task.get("initial_records", {}).get(name, {}) for name in task["services"]}
            started = clock()
            env = Environment.create(seeds, now=task["now"])
            out["env_ms"].append((clock() - started) * 1000)
            results: dict[str, Any] = {}
            try:
                for step in task["reference_solution"]:
                    if "tool" not in step:
                        continue
                    service, tool = step["service"], step["tool"]
                    args = resolve(step.get("arguments", {}), results)
                    read_only = bool(env.state(service).service.tools_by_name[tool].annotations.read_only_hint)
                    coro = env.call(service, tool, args)
                    t = clock()
                    try:
                        coro.send(None)
                    except StopIteration as stop:
                        result = stop.value
                    ms = (clock() - t) * 1000
                    out["all"].append(ms)
                    out["read" if read_only else "write"].append(ms)
                    if step.get("id") and result.data is not None:
                        results[step["id"]] = result.data
            finally:
                env.close()
    return out


def _use_root(root: Path) -> None:
    """Import ``coworkenv.servers`` and ``coworkenv.synth`` from ``root`` rather than the installed tree."""
    pkg = types.ModuleType("coworkenv")
    pkg.__path__ = [str(root)]
    sys.modules["coworkenv"] = pkg


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--tasks", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--services", help="Comma-separated: replay only tasks using these services")
    parser.add_argument("--list-services", action="store_true", help="Print the tree's services as JSON")
    opts = parser.parse_args()
    _use_root(opts.root.resolve())
    if opts.list_services:
        print(json.dumps(known_services()))
        return
    keep = set(opts.services.split(",")) if opts.services else None
    print(json.dumps(replay_tasks(opts.tasks, opts.rounds, keep)))


if __name__ == "__main__":
    main()
