"""``coworkenv report RUN_DIR … --out report.html``: one static, self-contained HTML file to look at runs.

It holds the summary (score, Pass@k and Pass^k by scenario, difficulty and safety, agents side by side), plots
as inline SVG, and a trajectory browser: a table filtered by agent, scenario, difficulty and outcome, a page at
a time, and a viewer of one trajectory (request, every turn with its tool calls, arguments and results, the
user simulator's turns and workspace edits, timings and tokens, and the grade: each check, forbidden actions,
the changes nothing in the task explains). It needs no server and loads nothing from the network; open it in
any current browser. Data is packed (:mod:`coworkenv.harness.report.data`) so 10,000 trajectories stay usable.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from coworkenv.harness.report.data import CHUNK, load_runs, pack_runs
from coworkenv.harness.report.html import page
from coworkenv.harness.report.svg import plots
from coworkenv.servers.kit.atomic import write_atomic


@dataclass
class ReportInfo:
    path: Path
    size_bytes: int
    raw_json_bytes: int
    trajectories: int
    tasks: int
    agents: list[str]

    def line(self) -> str:
        return (
            f"{self.trajectories:,} trajectories of {self.tasks:,} tasks ({', '.join(self.agents)}) → {self.path} "
            f"({self.size_bytes / 1e6:.1f} MB; data packed from {self.raw_json_bytes / 1e6:.1f} MB of JSON)"
        )


def build_report(sources: list[Path], out: Path, title: str | None = None, chunk_size: int = CHUNK) -> ReportInfo:
    """Write the report of the runs in ``sources`` (run folders or trajectories files) to ``out``."""
    runs = load_runs(sources)
    if not any(run.records for run in runs):
        raise ValueError(f"no trajectories in {', '.join(str(s) for s in sources)}")
    packed = pack_runs(runs, chunk_size)
    name = title or "coworkenv report: " + ", ".join(s.name or str(s) for s in sources)
    html = page(runs, packed, plots(runs), name)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, html)
    return ReportInfo(
        out,
        out.stat().st_size,
        packed.raw_bytes,
        packed.counts["trajectories"],
        packed.counts["tasks"],
        [run.label for run in runs],
    )
