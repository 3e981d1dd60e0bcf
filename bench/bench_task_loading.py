"""Loading a task with many checks, and refusing a YAML alias bomb.

Builds a task from the shipped example ``tickets-triage-new-urgent`` with N completion checks (default 100,000;
a 20 MB JSON file), then loads it with ``load_task`` as every command does (read, parse, depth check, validation
with the unique-id check) and prints the wall and CPU time of each run; then times the refusal of a ~430-byte
YAML alias bomb (9 levels of 9 aliases, which PyYAML's ``safe_load`` expands to 9^9 values).
CPU time is the figure to compare on a shared machine: wall time grows with the other processes' load.

Reproduce:  python bench/bench_task_loading.py [--checks N] [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from coworkenv.servers.kit.files import DocumentError, read_document
from coworkenv.synth.contract.library import examples_dir
from coworkenv.synth.contract.taskfile import load_task

ALIAS_BOMB = "\n".join(
    ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
)


def big_task(folder: Path, checks: int) -> Path:
    data = json.loads((examples_dir() / "tickets-triage-new-urgent.json").read_text(encoding="utf-8"))
    check = data["completion_checks"][0]
    data["completion_checks"] = [{**check, "id": f"c{i}", "weight": 1 / checks} for i in range(checks)]
    path = folder / "big.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checks", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = big_task(Path(tmp), args.checks)
        size_mb = path.stat().st_size / 2**20
        for run in range(args.repeat):
            wall, cpu = time.perf_counter(), time.process_time()
            task = load_task(path)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            print(
                f"load {len(task.completion_checks):,} checks ({size_mb:.1f} MB) run {run + 1}: "
                f"{wall:.2f} s wall, {cpu:.2f} s CPU"
            )
        bomb = Path(tmp) / "bomb.yaml"
        bomb.write_text(ALIAS_BOMB, encoding="utf-8")
        wall = time.perf_counter()
        try:
            read_document(bomb, "task")
            outcome = "loaded (aliases were not refused)"
        except DocumentError as exc:
            outcome = f"refused: {exc}"
        print(f"alias bomb ({len(ALIAS_BOMB)} bytes): {(time.perf_counter() - wall) * 1000:.2f} ms, {outcome}")


if __name__ == "__main__":
    main()
