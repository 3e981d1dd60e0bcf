"""The data-scale curve (issue 46; CoworkEnv's 20 / 50 / 100 % of the data): the learning bench run once per share of
the demonstrations, the same model, recipe and steps each time, and the held-out score (overall and per family)
plotted against the share.

Each point is ``bench_learn.py --train N`` in ``WORK/scale-N`` with the arguments after ``--``; a point whose
``result.json`` is already there is read, not run again (``--report`` only reads). The curve is printed as a table and
a text plot, and written to ``WORK/scale.json`` and ``WORK/scale.svg``.

Reproduce:
    HF_HUB_OFFLINE=1 python bench/learning/bench_scale.py --work W --train 240,600,1200 -- \\
        --family tickets-triage-oncall,crm-clarify-contact,warehouse-personal-data-export,document-question \\
        --forbidden-tools --steps 6000 --min-lr-ratio 0.25 --eval-every 1500 --grpo-steps 0
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent


def point(work: Path, train: int, passthrough: list[str], report: bool) -> dict[str, Any] | None:
    """The result of the run with ``train`` demonstrations a family (run now unless there or ``report``)."""
    folder = work / f"scale-{train}"
    result = folder / "result.json"
    if not result.is_file() and not report:
        command = [sys.executable, str(HERE / "bench_learn.py"), "--work", str(folder), "--train", str(train)]
        print("$ " + " ".join(command + passthrough), flush=True)
        done = subprocess.run(command + passthrough, check=False)
        if done.returncode:
            print(f"the run with --train {train} failed (exit {done.returncode}); its point is left out", flush=True)
    if not result.is_file():
        return None
    data = json.loads(result.read_text(encoding="utf-8"))
    after = data["after"]
    return {
        "train": train,
        "demonstrations": data["demonstrations"],
        "steps": data["sft_steps"],
        "score": after["score"],
        "pass_rate": after["pass_rate"],
        "by_family": {name: row["score"] for name, row in (after.get("by_family") or {}).items()},
        "unseen_answers": data["unseen_answers"]["after"],
    }


def text_plot(points: list[dict[str, Any]], width: int = 40) -> str:
    """One bar a point: the share of the data, the held-out score as a bar of ``width`` at 1.0."""
    most = max(p["train"] for p in points)
    lines = []
    for p in points:
        bar = "#" * round(p["score"] * width)
        lines.append(f"{100 * p['train'] / most:5.0f} % |{bar:<{width}}| {p['score']:.3f}")
    return "\n".join(lines)


def svg_plot(points: list[dict[str, Any]]) -> str:
    """The curve as a small SVG: share of the data (x) against the held-out score (y), one line per family too."""
    w, h, pad = 420, 260, 40
    most = max(p["train"] for p in points)

    def xy(share: float, score: float) -> str:
        return f"{pad + share * (w - 2 * pad):.1f},{h - pad - score * (h - 2 * pad):.1f}"

    series: dict[str, list[tuple[float, float]]] = {"all": [(p["train"] / most, p["score"]) for p in points]}
    for p in points:
        for name, score in p["by_family"].items():
            series.setdefault(name, []).append((p["train"] / most, score))
    colours = ["#000", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"]
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">',
        f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="#888"/>',
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{h - pad}" stroke="#888"/>',
        f'<text x="{w / 2}" y="{h - 8}" text-anchor="middle">share of the demonstrations</text>',
        f'<text x="8" y="{pad - 10}">held-out score</text>',
    ]
    for i, (name, values) in enumerate(series.items()):
        colour = colours[i % len(colours)]
        path = " ".join(xy(x, y) for x, y in values)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="{2 if i == 0 else 1}"/>')
        parts.append(f'<text x="{w - pad + 4}" y="{pad + 14 * i}" fill="{colour}">{name}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def main() -> None:
    argv = sys.argv[1:]
    passthrough = argv[argv.index("--") + 1 :] if "--" in argv else []
    own = argv[: argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", default="bench-scale-work")
    parser.add_argument("--train", default="240,600,1200", help="Demonstrations a family at each point (a,b,c).")
    parser.add_argument("--report", action="store_true", help="Only read the points already run.")
    args = parser.parse_args(own)
    try:
        sizes = sorted({int(n) for n in args.train.split(",")})
    except ValueError:
        parser.error(f"--train takes whole numbers a,b,c, not {args.train!r}")
    if any(n < 1 for n in sizes):
        parser.error("--train: each size must be at least 1")
    if "--train" in passthrough or "--work" in passthrough:
        parser.error("give --train and --work before the --, not after it")
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    points = [p for n in sizes if (p := point(work, n, passthrough, args.report))]
    if not points:
        raise SystemExit(f"no point of the curve has a result in {work}/scale-N yet: run without --report")
    print("train/family  demos  steps  score  pass  " + "  ".join(points[0]["by_family"]))
    for p in points:
        families = "  ".join(f"{v:.3f}" for v in p["by_family"].values())
        print(
            f"{p['train']:>12}  {p['demonstrations']:>5}  {p['steps']:>5}  {p['score']:.3f}  {p['pass_rate']:.2f}  {families}"
        )
    print(text_plot(points))
    (work / "scale.json").write_text(json.dumps(points, indent=2), encoding="utf-8")
    (work / "scale.svg").write_text(svg_plot(points), encoding="utf-8")
    print(f"curve in {work}/scale.json and {work}/scale.svg")


if __name__ == "__main__":
    main()
