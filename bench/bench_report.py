"""Size and load time of `coworkenv report` pages in headless Chromium, for runs of 1,000 and 10,000 trajectories.

    python bench/bench_report.py RUN_DIR [RUN_DIR ...]            # one report per run folder
    python bench/bench_report.py --synth 200 --trials 5 --copies 10  # make a run, then 1x and 10x of it

With --copies N, the run's trajectories are repeated N times as further trials (trial numbers shifted), which
gives a 10,000-trajectory run quickly; repeated trials compress better than real ones, so the raw JSON size and a
one-trajectory-per-chunk size are printed too (an upper bound when no two trajectories share anything).
Prints, per report: trajectories, page size, raw JSON size, time to build, time until the table is shown, and time
to open one trajectory (decode its chunk and render it)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from coworkenv.harness.report.build import build_report  # noqa: E402
from coworkenv.harness.report.data import load_runs, pack_runs  # noqa: E402
from tests.harness.report.test_browser import Browser, chromium, until  # noqa: E402

CLI = [sys.executable, "-c", "from coworkenv.train.cli import main; main()"]


def make_run(folder: Path, tasks: int, trials: int) -> Path:
    subprocess.run([*CLI, "synth", "-n", str(tasks), "--out", str(folder / "tasks"), "-q"], check=True)
    run = folder / "run"
    args = ["run", "--tasks", str(folder / "tasks"), "--agent", "replay", "--trials", str(trials), "--out", str(run)]
    subprocess.run([*CLI, *args, "--no-progress"], check=True)
    return run


def copies(run: Path, n: int, out: Path) -> Path:
    lines = (run / "trajectories.jsonl").read_text().splitlines()
    trials = 1 + max(json.loads(line)["trial"] for line in lines)
    out.mkdir(parents=True, exist_ok=True)
    with (out / "trajectories.jsonl").open("w") as f:
        for k in range(n):
            for line in lines:
                record = json.loads(line)
                record["trial"] += trials * k
                f.write(json.dumps(record) + "\n")
    return out


def measure(run: Path, work: Path, executable: str) -> None:
    out = work / f"{run.name}.html"
    t0 = time.perf_counter()
    info = build_report([run], out)
    built = time.perf_counter() - t0
    single = pack_runs(load_runs([run]), chunk_size=1).packed_bytes if info.trajectories <= 2000 else None
    b = Browser(executable, work / f"profile-{run.name}")
    try:
        ready_ms = b.open(out.as_uri())
        t1 = time.perf_counter()
        b.evaluate("document.querySelector('#table tbody tr').click()")
        b.evaluate(until("document.getElementById('v-title')?.textContent"))
        opened_ms = 1000 * (time.perf_counter() - t1)
        errors = b.errors()
    finally:
        b.close()
    bound = f", {single / 1e6:.1f} MB packed one per chunk" if single else ""
    print(
        f"{info.trajectories:>6,} trajectories: page {info.size_bytes / 1e6:.1f} MB (raw JSON {info.raw_json_bytes / 1e6:.0f} MB"
        f"{bound}); built in {built:.1f} s; table shown {ready_ms / 1000:.2f} s after navigation; one trajectory "
        f"opened in {opened_ms:.0f} ms; console errors: {len(errors)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="*", type=Path)
    parser.add_argument("--synth", type=int, default=0, help="Make a run of this many synthesized tasks.")
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--copies", type=int, default=10)
    args = parser.parse_args()
    executable = chromium()
    if executable is None:
        sys.exit("no Chromium: apt-get install -y chromium")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        runs = list(args.runs)
        if args.synth:
            run = make_run(work, args.synth, args.trials)
            runs += [run, copies(run, args.copies, work / f"x{args.copies}")]
        for run in runs:
            measure(run, work, executable)


if __name__ == "__main__":
    main()
