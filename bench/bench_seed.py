"""Cold seeding at scale: an environment from a seed of about 1, 3 and 7 MB of JSON, and its memory.

Run:  python bench/bench_seed.py                        (this tree vs the kit before issue 15, alternated)
      python bench/bench_seed.py --baseline REV         (this tree vs any revision, e.g. before a change)
      python bench/bench_seed.py --quick
      python bench/bench_seed.py --shuffle --baseline a0f2589     (records in random order; before sorted inserts)
      python bench/bench_seed.py --tau2-python /tmp/tau2venv/bin/python --tau2-src /tmp/tau2src

A service's example seed (tickets by default) is copied with fresh ids (references follow their copy) until
its JSON reaches each size. For each size it times, in this one run:
- cold: ``Environment.create`` from a seed never seen (the seed cache cleared): validation of the whole seed,
  the inserts, and keeping the seeded image;
- again: a second environment from the same seed (a copy of the cached image);
- fork: ``Environment.fork`` of a live one;
- memory: what one more live environment holds (its database pages, and Python objects by tracemalloc), and the
  process's resident memory per live environment, fresh and once every row was read;
and the same create for a baseline commit (``--baseline``, in a subprocess importing its ``servers/``), and
tau2's retail database (2.7 MB) load and size when given a tau2 Python and tree (see ``bench_tau2.py``).
Nothing here passes or fails: it reports.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_replay import _use_root, p50

HERE = Path(__file__).resolve()
EXAMPLES = HERE.parents[1] / "servers/examples"
BASELINE = "6eb35d3"
SIZES_MB = (1.0, 2.7, 6.8)


def scaled(service_name: str, megabytes: float, shuffle: bool = False) -> dict[str, list[dict[str, Any]]]:
    """The example seed copied with suffixed ids (and references) until its JSON is about ``megabytes``; with
    ``shuffle`` each table's records in a random order (always the same), as an export may give them."""
    from coworkenv.servers.registry import SERVICES

    service = SERVICES[service_name]
    base = json.loads((EXAMPLES / f"{service_name}.json").read_text())
    copies = max(1, round(megabytes * 2**20 / len(json.dumps(base))))
    refs = {t.name: dict(t.refs) for t in service.tables}
    out: dict[str, list[dict[str, Any]]] = {}
    for table, rows in base.items():
        ref_fields = refs.get(table, {})
        out[table] = [
            {
                k: (f"{v}_{i}" if i and isinstance(v, str) and (k == "id" or k in ref_fields) else v)
                for k, v in row.items()
            }
            for i in range(copies)
            for row in rows
        ]
        if shuffle:
            random.Random(table).shuffle(out[table])
    return out


def measure(service: str, sizes: tuple[float, ...], runs: int, shuffle: bool = False) -> dict[str, Any]:
    from coworkenv.servers import Environment

    try:
        from coworkenv.servers.kit.images import IMAGES
    except ImportError:  # a baseline without the seed cache
        IMAGES = None
    out: dict[str, Any] = {}
    for mb in sizes:
        seed = {service: scaled(service, mb, shuffle)}
        row: dict[str, Any] = {
            "bytes": len(json.dumps(seed[service])),
            "records": sum(map(len, seed[service].values())),
        }
        cold, cold_cpu, again, fork = [], [], [], []
        for _ in range(runs):
            if IMAGES is not None:
                IMAGES.clear()
            c, t = time.process_time(), time.perf_counter()
            env = Environment.create(seed)
            cold.append((time.perf_counter() - t) * 1000)
            cold_cpu.append((time.process_time() - c) * 1000)
            t = time.perf_counter()
            Environment.create(seed).close()
            again.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            env.fork().close()
            fork.append((time.perf_counter() - t) * 1000)
            env.close()
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        live = [Environment.create(seed) for _ in range(4)]
        gc.collect()
        heap = (tracemalloc.get_traced_memory()[0] - before) / len(live) / 2**20
        tracemalloc.stop()
        pages = [s.conn.execute("PRAGMA page_count").fetchone()[0] * 4096 for s in live[0].states.values()]
        for env in live:
            env.close()
        gc.collect()
        _trim()
        rss0 = _rss_mb()
        live = [Environment.create(seed) for _ in range(RSS_ENVS)]
        rss1 = _rss_mb()
        for env in live:
            env.dump()  # every row read once, as a grader does: SQLite's page cache fills
        gc.collect()
        rss2 = _rss_mb()
        row.update(
            cold_ms=cold, cold_cpu_ms=cold_cpu, again_ms=again, fork_ms=fork, heap_mb=heap, db_mb=sum(pages) / 2**20
        )
        if rss0 is not None and rss1 is not None and rss2 is not None:
            row.update(rss_mb=(rss1 - rss0) / RSS_ENVS, rss_read_mb=(rss2 - rss0) / RSS_ENVS)
        for env in live:
            env.close()
        out[str(mb)] = row
    return out


RSS_ENVS = 16


def _trim() -> None:
    """Hand the memory that closed environments freed back to the system (glibc), so that new ones are not counted
    as reusing it."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _rss_mb() -> float | None:
    """This process's resident memory (Linux), which sees SQLite's own allocations that tracemalloc does not."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _merge(into: dict[str, Any], more: dict[str, Any]) -> None:
    """Pool the timing samples of two measurements by size (memory figures: the later one)."""
    for size, row in more.items():
        mine = into.setdefault(size, {})
        for key, value in row.items():
            mine[key] = mine.get(key, []) + value if isinstance(value, list) else value


def run_json(cmd: list[str]) -> Any:
    proc = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--service", default="tickets")
    parser.add_argument("--baseline", default=BASELINE, help="A git revision to compare with ('' for none)")
    parser.add_argument("--shuffle", action="store_true", help="Each table's records in a random order")
    parser.add_argument("--tau2-python")
    parser.add_argument("--tau2-src", type=Path)
    parser.add_argument("--root", type=Path, help=argparse.SUPPRESS)  # worker: import coworkenv from here
    opts = parser.parse_args()
    runs = 3 if opts.quick else 5
    if opts.root:
        _use_root(opts.root.resolve())
        print(json.dumps(measure(opts.service, SIZES_MB, runs, opts.shuffle)))
        return
    base: dict[str, Any] = {}
    ours: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = None
        if opts.baseline:
            from bench_calls import baseline_tree

            root = baseline_tree(opts.baseline, Path(tmp) / "base")
        for _ in range(2):  # alternate, so that both see the same load on shared cores
            if root is not None:
                worker = [sys.executable, str(HERE), "--root", str(root), "--service", opts.service]
                flags = [*(["--quick"] if opts.quick else []), *(["--shuffle"] if opts.shuffle else [])]
                _merge(base, run_json([*worker, *flags]))
            _merge(ours, measure(opts.service, SIZES_MB, runs, opts.shuffle))
    tau2 = None
    if opts.tau2_python and opts.tau2_src:
        worker = [opts.tau2_python, str(HERE.parent / "bench_tau2.py"), "--src", str(opts.tau2_src)]
        tau2 = run_json([*worker, "--seeding", str(runs)])

    order = ", records shuffled" if opts.shuffle else ""
    print(
        f"coworkenv seeding benchmark — {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, {opts.service}{order}"
    )
    for mb, row in ours.items():
        print(f"\n{row['bytes'] / 2**20:.1f} MB of JSON, {row['records']} records:")
        print(f"  cold create        p50 {p50(row['cold_ms']):8.2f} ms   (CPU {p50(row['cold_cpu_ms']):8.2f} ms)")
        print(f"  again (cached)     p50 {p50(row['again_ms']):8.2f} ms")
        print(f"  fork               p50 {p50(row['fork_ms']):8.2f} ms")
        print(
            f"  memory per live environment  {row['db_mb'] + row['heap_mb']:6.1f} MB"
            f" (database {row['db_mb']:.1f} MB, Python objects {row['heap_mb']:.1f} MB)"
        )
        if "rss_mb" in row:
            print(
                f"  resident memory per live environment  {row['rss_mb']:6.1f} MB fresh,"
                f" {row['rss_read_mb']:6.1f} MB once every row was read (SQLite page cache)"
            )
        if mb in base:
            b = base[mb]
            cold = p50(b["cold_ms"])
            cpu = f" (CPU {p50(b['cold_cpu_ms']):8.2f} ms)" if "cold_cpu_ms" in b else ""
            cpu_ratio = f" (CPU {p50(b['cold_cpu_ms']) / p50(row['cold_cpu_ms']):5.2f}x)" if "cold_cpu_ms" in b else ""
            print(
                f"  baseline {opts.baseline} create p50 {cold:8.2f} ms{cpu}   before/after cold"
                f" {cold / p50(row['cold_ms']):5.2f}x{cpu_ratio}, again {p50(b['again_ms']) / p50(row['again_ms']):5.1f}x;"
                f"  memory {b['db_mb'] + b['heap_mb']:6.1f} MB"
            )
    if tau2:
        print(f"\ntau2 retail database, {tau2['bytes'] / 2**20:.1f} MB of JSON:")
        print(f"  load               p50 {p50(tau2['load_ms']):8.2f} ms")
        print(f"  memory of one environment    {tau2['env_mb']:6.1f} MB (tracemalloc)")
    else:
        print("\n(tau2 not run: pass --tau2-python and --tau2-src; see bench_tau2.py)")
    cmd = "python bench/bench_seed.py" + (" --quick" if opts.quick else "") + (" --shuffle" if opts.shuffle else "")
    if opts.baseline != BASELINE:
        cmd += f" --baseline {opts.baseline!r}"
    if opts.tau2_python:
        cmd += f" --tau2-python {opts.tau2_python} --tau2-src {opts.tau2_src}"
    print(f"\nReproduce: {cmd}")


if __name__ == "__main__":
    main()
