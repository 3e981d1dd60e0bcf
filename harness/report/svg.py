"""Plots of a report as inline SVG, drawn here (no plotting library, nothing loaded by the page):
score distribution per scenario family, pass rate by difficulty, and tokens and time per episode."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape
from statistics import mean

from coworkenv.harness.report.data import Run
from coworkenv.harness.trajectory import Trajectory

PALETTE = ("#4269d0", "#efb118", "#ff725c", "#6cc5b0", "#3ca951", "#ff8ab7", "#a463f2", "#97bbf5")
SCORE_BINS: tuple[tuple[str, str, Callable[[float], bool]], ...] = (
    ("0", "#d73027", lambda s: s <= 0.0),
    ("< 0.5", "#fc8d59", lambda s: 0.0 < s < 0.5),
    ("0.5–0.75", "#fee08b", lambda s: 0.5 <= s < 0.75),
    ("0.75–1", "#91cf60", lambda s: 0.75 <= s < 1.0),
    ("1", "#1a9850", lambda s: s >= 1.0),
)
DIFFICULTY_ORDER = {"easy": 0, "medium": 1, "hard": 2, "expert": 3}
FONT = 'font-family="system-ui, sans-serif" font-size="11"'


def color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _svg(width: int, height: int, body: list[str], title: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{escape(title)}" {FONT}><title>{escape(title)}</title>{"".join(body)}</svg>'
    )


def _text(x: float, y: float, text: str, anchor: str = "start", extra: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" {extra}>{escape(text)}</text>'


def legend(names: Sequence[str], colors: Sequence[str]) -> str:
    items = "".join(
        f'<span class="key"><i style="background:{c}"></i>{escape(n)}</span>'
        for n, c in zip(names, colors, strict=True)
    )
    return f'<div class="legend">{items}</div>'


def score_distribution(runs: Sequence[Run]) -> str:
    """For each scenario family and agent, a bar split by the share of trials in each score bin."""
    rows: list[tuple[str, str, list[float]]] = []
    scenarios = sorted({r.scenario for run in runs for r in run.records if r.scored})
    for scenario in scenarios:
        for run in runs:
            scores = [r.score for r in run.records if r.scored and r.scenario == scenario]
            if scores:
                shares = [sum(test(s) for s in scores) / len(scores) for _, _, test in SCORE_BINS]
                rows.append((scenario, f"{run.label} · {len(scores)}", shares))
    if not rows:
        return "<p>No scored trials.</p>"
    label_w, bar_w, row_h = 220, 420, 16
    body: list[str] = []
    y, last = 4, None
    for scenario, agent, shares in rows:
        if scenario != last:  # the family's full name on a line of its own
            body.append(_text(4, y + 11, scenario, extra='font-weight="600"'))
            y, last = y + row_h, scenario
        body.append(_text(label_w - 6, y + 11, agent, "end", 'fill="#555"'))
        x = float(label_w)
        for (name, fill, _), share in zip(SCORE_BINS, shares, strict=True):
            if share > 0:
                w = share * bar_w
                tip = f"{scenario} · {agent}: {share:.0%} scored {name}"
                body.append(
                    f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{row_h - 3}" fill="{fill}">'
                    f"<title>{escape(tip)}</title></rect>"
                )
                x += w
        y += row_h
    svg = _svg(label_w + bar_w + 10, y + 4, body, "Score distribution per scenario family")
    return svg + legend([f"score {n}" for n, _, _ in SCORE_BINS], [c for _, c, _ in SCORE_BINS])


def pass_rate_by_difficulty(runs: Sequence[Run]) -> str:
    """Grouped bars: per difficulty, each agent's share of scored trials that passed."""
    levels = sorted(
        {r.difficulty for run in runs for r in run.records if r.scored}, key=lambda d: (DIFFICULTY_ORDER.get(d, 9), d)
    )
    if not levels:
        return "<p>No scored trials.</p>"
    group_w, bar_w, plot_h, top, left = max(70, 30 * len(runs) + 20), 26, 160, 16, 36
    body = [_text(left - 6, top + plot_h - plot_h * t + 4, f"{t:.0%}", "end") for t in (0, 0.5, 1)]
    body += [
        f'<line x1="{left}" x2="{left + group_w * len(levels)}" y1="{top + plot_h - plot_h * t}" '
        f'y2="{top + plot_h - plot_h * t}" stroke="#ddd"/>'
        for t in (0, 0.25, 0.5, 0.75, 1)
    ]
    for gi, level in enumerate(levels):
        x0 = left + gi * group_w + 10
        for ai, run in enumerate(runs):
            trials = [r for r in run.records if r.scored and r.difficulty == level]
            if not trials:
                continue
            rate = sum(r.passed for r in trials) / len(trials)
            h = plot_h * rate
            tip = f"{run.label} · {level}: {rate:.0%} of {len(trials)} trials passed"
            body.append(
                f'<rect x="{x0 + ai * (bar_w + 4)}" y="{top + plot_h - h:.1f}" width="{bar_w}" height="{h:.1f}" '
                f'fill="{color(ai)}"><title>{escape(tip)}</title></rect>'
            )
            body.append(_text(x0 + ai * (bar_w + 4) + bar_w / 2, top + plot_h - h - 3, f"{rate:.0%}", "middle"))
        body.append(_text(left + gi * group_w + group_w / 2, top + plot_h + 16, level, "middle"))
    svg = _svg(left + group_w * len(levels) + 10, top + plot_h + 26, body, "Pass rate by difficulty")
    return svg + legend([run.label for run in runs], [color(i) for i in range(len(runs))])


def _histogram(runs: Sequence[Run], value: Callable[[Trajectory], float], title: str, unit: str) -> str:
    series = [[value(r) for r in run.records] for run in runs]
    values = sorted(v for s in series for v in s)
    if not values or not any(values):
        return f"<p>No {unit} recorded (agents that are not models, such as replay, report none).</p>"
    top_value = values[min(len(values) - 1, int(0.99 * len(values)))] or max(values) or 1.0
    bins, plot_w, plot_h, left, top = 24, 420, 140, 40, 10
    right = 30
    step = top_value / bins
    counts = [[0] * bins for _ in series]
    for si, s in enumerate(series):
        for v in s:
            counts[si][min(bins - 1, int(v / step) if step else 0)] += 1
    peak = max(max(c) / max(len(s), 1) for c, s in zip(counts, series, strict=True)) or 1.0
    body = [f'<line x1="{left}" x2="{left + plot_w}" y1="{top + plot_h}" y2="{top + plot_h}" stroke="#999"/>']
    for si, s in enumerate(series):
        if not s:
            continue
        points = []
        for b, n in enumerate(counts[si]):
            y = top + plot_h - plot_h * (n / len(s)) / peak
            points += [f"{left + b * plot_w / bins:.1f},{y:.1f}", f"{left + (b + 1) * plot_w / bins:.1f},{y:.1f}"]
        tip = f"{runs[si].label}: mean {mean(s):,.1f} {unit} over {len(s)} episodes"
        body.append(
            f'<polyline fill="none" stroke="{color(si)}" stroke-width="2" points="{" ".join(points)}">'
            f"<title>{escape(tip)}</title></polyline>"
        )
    for t in (0, 0.5, 1):
        body.append(_text(left + plot_w * t, top + plot_h + 14, f"{top_value * t:,.4g}", "middle"))
    body.append(
        _text(left + plot_w, top + plot_h + 26, f"{unit} per episode (≥ 99th percentile in the last bin)", "end")
    )
    svg = _svg(left + plot_w + right, top + plot_h + 32, body, title)
    means = [f"{run.label}: mean {mean(s):,.1f}" if s else run.label for run, s in zip(runs, series, strict=True)]
    return svg + legend(means, [color(i) for i in range(len(runs))])


def tokens_per_episode(runs: Sequence[Run]) -> str:
    return _histogram(runs, lambda r: r.usage.input_tokens + r.usage.output_tokens, "Tokens per episode", "tokens")


def time_per_episode(runs: Sequence[Run]) -> str:
    return _histogram(runs, lambda r: r.wall_s, "Time per episode", "seconds")


def plots(runs: Sequence[Run]) -> dict[str, str]:
    """Each plot's title and its SVG (with a legend)."""
    return {
        "Score distribution per scenario family": score_distribution(runs),
        "Pass rate by difficulty": pass_rate_by_difficulty(runs),
        "Tokens per episode": tokens_per_episode(runs),
        "Time per episode": time_per_episode(runs),
    }
