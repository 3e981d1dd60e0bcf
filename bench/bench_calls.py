"""Same-workload call benchmark: every reference call of N synthesized tasks, fresh environment per task.

Run:  python bench/bench_calls.py                          (about two minutes on 2 cores)
      python bench/bench_calls.py --quick                  (fewer rounds and calls)
      python bench/bench_calls.py --baseline 6eb35d3       (the kit before issue 15, side by side; the default)
      python bench/bench_calls.py --tau2-python /tmp/tau2venv/bin/python --tau2-src /tmp/tau2src

It measures, in this one run:
- the direct door (``Environment.call``) replaying each task's reference calls, reads and writes apart, p50/p99,
  for this tree and for a baseline commit of it (``git archive`` of ``servers/`` and ``synth/``, imported in a
  subprocess), rounds alternating so both see the same machine load;
- tau2-bench's retail tools replaying its tasks' actions the same way (plain Python, no LLM), when given a
  Python with tau2's few light dependencies and a tau2 source tree (see ``bench_tau2.py``);
- the MCP doors against the SDK's floor: a no-op tool on a bare ``MCPServer`` vs ours, in-process, stdio and
  streamable HTTP.
Nothing here passes or fails: it reports.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_mcp_floor import floor_figures
from bench_replay import Samples, known_services, load_tasks, merge, p50, p99, replay_tasks

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "6eb35d3"  # the last commit before issue 15's work on the call path


def synth_tasks(count: int, seed: int, out: Path) -> Path:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "coworkenv.train.cli",
            "synth",
            "--count",
            str(count),
            "--seed",
            str(seed),
            "--out",
            str(out),
            "-q",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    if not any(out.glob("*.json")):
        raise SystemExit(
            f"synthesis wrote no task files to {out}: run `coworkenv synth --count {count} --out DIR` by hand"
        )
    return out


def baseline_tree(rev: str, into: Path) -> Path:
    """``servers/`` and ``synth/`` of ``rev``, laid out as the folder a ``coworkenv`` package path points at."""
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "servers", "synth"], check=True, capture_output=True
    )
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def run_worker(args: list[str], python: str = sys.executable) -> dict[str, Any]:
    proc = subprocess.run(
        [python, str(Path(__file__).resolve().parent / "bench_replay.py"), *args],
        check=True,
        capture_output=True,
        text=True,
    )
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def line(label: str, samples: list[float], base: float | None = None, note: str = "") -> str:
    if not samples:
        return f"  {label:<34} (no calls)"
    ratio = f"   {p50(samples) / base:5.2f}x" if base else ""
    return f"  {label:<34} p50 {p50(samples):7.4f} ms   p99 {p99(samples):7.4f} ms   n={len(samples):<6}{ratio}{note}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--tasks", type=Path, help="A folder of task files (default: synthesize --count of them)")
    parser.add_argument("--count", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--baseline", default=BASELINE, help="A git revision to compare with ('' for none)")
    parser.add_argument("--tau2-python", help="A Python with tau2's light dependencies (pydantic, loguru, ...)")
    parser.add_argument("--tau2-src", type=Path, help="A tau2-bench tree: src/tau2 and data/tau2/domains/retail")
    parser.add_argument("--no-floor", action="store_true", help="Skip the MCP floor comparison")
    opts = parser.parse_args()
    rounds, alternations, n_floor, n_remote = (2, 2, 300, 150) if opts.quick else (5, 3, 2000, 600)

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        tasks = opts.tasks or synth_tasks(opts.count, opts.seed, tmp / "tasks")
        base_root = baseline_tree(opts.baseline, tmp / "base") if opts.baseline else None
        # Both trees replay the same tasks: those using only services the baseline already had.
        shared = set(known_services())
        if base_root is not None:
            listed = subprocess.run(
                [
                    sys.executable,
                    str(Path(__file__).resolve().parent / "bench_replay.py"),
                    "--root",
                    str(base_root),
                    "--tasks",
                    str(tasks),
                    "--list-services",
                ],
                check=True,
                capture_output=True,
                text=True,
            )
            shared &= set(json.loads(listed.stdout.strip().splitlines()[-1]))
        n_tasks = sum(1 for t in load_tasks(Path(tasks)) if set(t["services"]) <= shared)
        if not n_tasks:
            raise SystemExit("no task to replay: every task uses a service the baseline lacks (try --baseline '')")
        ours: dict[str, Samples] = {}
        base: dict[str, Samples] = {}
        tau2: dict[str, Samples] = {}
        worker_args = ["--tasks", str(tasks), "--rounds", str(rounds), "--services", ",".join(sorted(shared))]
        for _ in range(alternations):
            merge(ours, replay_tasks(tasks, rounds, shared))
            if base_root is not None:
                merge(base, run_worker(["--root", str(base_root), *worker_args]))
            if opts.tau2_python and opts.tau2_src:
                worker = [str(Path(__file__).resolve().parent / "bench_tau2.py"), "--src", str(opts.tau2_src)]
                proc = subprocess.run(
                    [opts.tau2_python, *worker, "--rounds", str(max(1, rounds // 2))],
                    check=True,
                    capture_output=True,
                    text=True,
                )
                merge(tau2, json.loads(proc.stdout.strip().splitlines()[-1]))
        floor = {} if opts.no_floor else floor_figures(n_floor, n_remote, tmp)
        if base_root is not None:
            shutil.rmtree(base_root, ignore_errors=True)

    print(f"coworkenv same-workload call benchmark — {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
    print(
        f"\nReplaying every reference call of {n_tasks} tasks (services: {', '.join(sorted(shared))}),"
        " fresh environment per task, direct door:"
    )
    ref = p50(ours.get("all", [])) or None
    for kind in ("all", "read", "write"):
        print(line(f"ours {kind}", ours.get(kind, [])))
        if base:
            before = base.get(kind, [])
            gain = f"   before/after {p50(before) / p50(ours[kind]):4.2f}x" if before and ours.get(kind) else ""
            print(line(f"  baseline {opts.baseline} {kind}", before, note=gain))
        if tau2:
            t = tau2.get(kind, [])
            gain = f"   tau2/ours {p50(t) / p50(ours[kind]):4.2f}x" if t and ours.get(kind) else ""
            print(line(f"  tau2 retail {kind}", t, note=gain))
    for label, data in (("ours", ours), ("baseline", base), ("tau2 retail", tau2)):
        if data.get("env_ms"):
            print(line(f"environment per task, {label}", data["env_ms"]))
    if not tau2:
        print("  (tau2 not run: pass --tau2-python and --tau2-src; see bench_tau2.py)")
    if floor:
        print("\nMCP doors vs the SDK floor (a no-op tool on a bare MCPServer), same run:")
        for transport in ("in-process", "stdio", "http"):
            f = floor[f"floor {transport}"]
            print(line(f"SDK floor {transport}", f))
            for key in (f"ours no-op {transport}", f"ours get_ticket {transport}"):
                if key in floor:
                    print(line(key, floor[key], p50(f), "  of floor"))
    del ref
    cmd = "python bench/bench_calls.py" + (" --quick" if opts.quick else "")
    if opts.baseline != BASELINE:
        cmd += f" --baseline {opts.baseline!r}"
    if opts.tau2_python:
        cmd += f" --tau2-python {opts.tau2_python} --tau2-src {opts.tau2_src}"
    print(f"\nReproduce: {cmd}")


if __name__ == "__main__":
    main()
