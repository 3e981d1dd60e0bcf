"""The real Claude Code CLI on the escalation example, quiet and with busy cores: scores and infra retries.

``coworkenv run --agent claude-code`` plays ``synth/examples/tickets-escalate-stale-enterprise.json`` with N
trials at once against the scripted Messages API of the tests (its replies play the task's reference solution;
a request without the services' tools gets "ok", as a model without tools would answer). Each condition runs
with no busy process and then with ``--busy`` spinning processes. For each it prints the trials' statuses and
scores, how many attempts each took, and why the retried attempts failed (e.g. ``tickets: pending``).

Needs the pinned CLI: ``npm install --prefix .tools/claude @anthropic-ai/claude-code@VERSION`` (the real-CLI test
installs it there), or ``COWORKENV_CLAUDE`` set to a ``claude`` executable.

Reproduce:  python bench/bench_claude_code_load.py [--trials 3] [--busy 2] [--retries 3] [--rounds 1]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from coworkenv.harness.agents.claude_code import EXECUTABLE_ENV  # noqa: E402
from coworkenv.harness.trajectory import read_trajectories  # noqa: E402
from coworkenv.synth.contract.taskfile import load_task  # noqa: E402
from tests.fakes.load import busy_cores, reference_replies  # noqa: E402
from tests.fakes.messages_api import serve_messages_api  # noqa: E402

TASK = ROOT / "synth" / "examples" / "tickets-escalate-stale-enterprise.json"
COWORKENV = [sys.executable, "-c", "from coworkenv.train.cli import main; main()"]


def claude() -> str:
    found = os.environ.get(EXECUTABLE_ENV) or str(ROOT / ".tools" / "claude" / "node_modules" / ".bin" / "claude")
    if not Path(found).exists():
        raise SystemExit(f"no Claude Code at {found}: install it (see this file's docstring) or set {EXECUTABLE_ENV}")
    return found


def one_run(tmp: Path, name: str, busy: int, trials: int, retries: int) -> str:
    out = tmp / name
    with serve_messages_api(reference_replies(load_task(TASK))) as api, busy_cores(busy):
        env = {
            **os.environ,
            EXECUTABLE_ENV: claude(),
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": "bench-key-not-secret",
            "CLAUDE_CONFIG_DIR": str(tmp / f"cc-{name}"),
        }
        cmd = [*COWORKENV, "run", "--tasks", str(TASK), "--agent", "claude-code", "--out", str(out)]
        cmd += ["--trials", str(trials), "--concurrency", str(trials), "--retries", str(retries)]
        cmd += ["--wall-time", "180", "--no-progress"]
        t0 = time.perf_counter()
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200)
        wall = time.perf_counter() - t0
    if done.returncode != 0:
        return f"{name}: coworkenv run failed: {done.stderr.strip()[-500:]}"
    records = sorted(read_trajectories(out), key=lambda r: r.trial)
    statuses = Counter(r.status for r in records)
    scores = [round(r.grade.score, 2) if r.grade else None for r in records]
    attempts = [r.attempts for r in records]
    reasons = Counter(e.split(" (", 1)[-1].split(")", 1)[0][:60] for r in records for e in r.attempt_errors)
    lines = [
        f"{name}: {dict(statuses)}; scores {scores}; attempts {attempts} "
        f"(infra retries {sum(attempts) - len(records)}); {wall:.1f} s",
    ]
    lines += [f"    retried because: {reason} x{n}" for reason, n in reasons.items()]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--busy", type=int, default=2)
    parser.add_argument("--retries", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    version = subprocess.run([claude(), "--version"], capture_output=True, text=True).stdout.strip()
    print(f"Claude Code {version}; {os.cpu_count()} CPUs; task {TASK.name}; {args.trials} trials at once")
    with tempfile.TemporaryDirectory(prefix="bench-cc-load-") as tmp:
        for n in range(args.rounds):
            print(one_run(Path(tmp), f"quiet-{n}", 0, args.trials, args.retries), flush=True)
            print(one_run(Path(tmp), f"busy{args.busy}-{n}", args.busy, args.trials, args.retries), flush=True)


if __name__ == "__main__":
    main()
