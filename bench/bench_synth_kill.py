"""``coworkenv synth`` killed with SIGKILL at random moments: how many torn files it leaves (must be 0), and
whether ``--resume`` then gives the bytes of an uninterrupted run.

One uninterrupted run gives the reference folder. Then, ``--kills`` times: a fresh run into its own folder is
killed at a random point (as soon as it holds a random number of task files, 0 included: then it dies while
starting), its folder is read (a task file is torn when it is not byte for byte the reference's file of that
name; a leftover temporary file is counted apart: the resumed run removes it), and ``--resume`` finishes it;
the finished folder is compared with the reference, hidden journal included. Each run is a real ``coworkenv
synth`` process, polled every 20 ms.

Reproduce:  python bench/bench_synth_kill.py [--count 200] [--workers 2] [--kills 10] [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from coworkenv.synth.generate.synth_report import REPORT_FILE

SYNTH = [sys.executable, "-c", "from coworkenv.synth.cli_synth import synth_cmd; synth_cmd()", "--quiet"]


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()} if folder.is_dir() else {}


def synth(out: Path, args: list[str], *extra: str) -> float:
    started = time.perf_counter()
    subprocess.run([*SYNTH, "--out", str(out), *args, *extra], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def task_count(folder: Path) -> int:
    try:
        return sum(1 for p in folder.glob("*.json") if p.name != REPORT_FILE)
    except OSError:
        return 0


def killed_at(out: Path, args: list[str], tasks: int) -> float:
    """Start a run and SIGKILL it once ``out`` holds ``tasks`` task files; the seconds it ran."""
    started = time.perf_counter()
    proc = subprocess.Popen([*SYNTH, "--out", str(out), *args], stdout=subprocess.DEVNULL)
    while task_count(out) < tasks:
        try:
            proc.wait(timeout=0.02)
            break
        except subprocess.TimeoutExpired:
            pass
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    opts = parser.parse_args()
    args = ["--count", str(opts.count), "--seed", str(opts.seed), "--workers", str(opts.workers)]
    rng = random.Random(opts.seed)
    with tempfile.TemporaryDirectory() as tmp:
        whole = Path(tmp) / "whole"
        wall = synth(whole, args)
        reference = files(whole)
        tasks = sum(1 for name in reference if name.endswith(".json") and name != REPORT_FILE)
        print(f"uninterrupted: {tasks} tasks in {wall:.1f} s ({opts.workers} worker(s))\n")
        print(f"{'kill':>4} {'at file':>7} {'ran s':>6} {'task files':>10} {'torn':>5} {'temp left':>9} {'report':>6} "
              f"{'resume s':>8} {'same bytes':>10}")  # fmt: skip
        torn_total = same_total = 0
        for n in range(1, opts.kills + 1):
            out = Path(tmp) / f"killed-{n}"
            point = rng.randrange(tasks)
            ran = killed_at(out, args, point)
            left = files(out)
            task_files = [k for k in left if k.endswith(".json") and k != REPORT_FILE]
            torn = sum(1 for k in task_files if left[k] != reference.get(k))
            temps = sum(1 for k in left if k.endswith(".tmp"))
            resumed = synth(out, args, "--resume")
            same = files(out) == reference
            torn_total += torn
            same_total += same
            print(f"{n:>4} {point:>7} {ran:>6.2f} {len(task_files):>10} {torn:>5} {temps:>9} "
                  f"{'yes' if REPORT_FILE in left else 'no':>6} {resumed:>8.1f} {'yes' if same else 'NO':>10}")  # fmt: skip
        print(f"\ntorn task files over {opts.kills} kills: {torn_total}; resumed runs identical to the "
              f"uninterrupted one: {same_total}/{opts.kills}")  # fmt: skip


if __name__ == "__main__":
    main()
