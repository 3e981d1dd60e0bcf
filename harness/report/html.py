"""The static parts of a report page: the summary tables (several agents side by side), the plots, the style,
and the page that holds them with the packed data (see :mod:`coworkenv.harness.report.data`) and the viewer's
script (:mod:`coworkenv.harness.report.js`). Nothing on the page reaches the network: a Content-Security-Policy
forbids it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from html import escape
from typing import Any

from coworkenv.harness.metrics import CLAW_COLUMNS, claw_notes, claw_row, summarize
from coworkenv.harness.report.data import Packed, Run
from coworkenv.harness.report.js import SCRIPT

CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"
STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d1d1f;background:#fafafa}
header{background:#1f2a44;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}
header p{margin:4px 0 0;opacity:.8}main{padding:12px 24px}section{margin:18px 0}
h2{font-size:17px;border-bottom:1px solid #ddd;padding-bottom:4px}h3{font-size:15px;margin:14px 0 6px}
table{border-collapse:collapse;background:#fff}th,td{padding:3px 8px;border-bottom:1px solid #eee;text-align:left;
vertical-align:top}th{background:#f1f3f7;position:sticky;top:0}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.summary td.g{white-space:nowrap}.summary tr.head td{font-weight:600;background:#f7f7f9}
.plots{display:flex;flex-wrap:wrap;gap:24px}.plot{background:#fff;border:1px solid #e3e3e3;padding:8px 12px}
.legend{display:flex;flex-wrap:wrap;gap:10px;font-size:12px;margin-top:4px}.key i{display:inline-block;width:10px;
height:10px;margin-right:4px;border-radius:2px}.wide{overflow-x:auto;max-width:100%}
#filters{display:flex;flex-wrap:wrap;gap:10px;align-items:center;margin-bottom:8px}#filters label{font-size:13px}
#table tbody tr{cursor:pointer}#table tbody tr:hover{background:#eef3ff}#table th{cursor:pointer;user-select:none}
.pass{color:#17803d;font-weight:600}.fail{color:#b3261e;font-weight:600}.muted{color:#777}
#pager{margin:8px 0;display:flex;gap:8px;align-items:center}
#viewer{position:fixed;top:0;right:0;bottom:0;width:min(980px,96vw);background:#fff;box-shadow:-4px 0 16px #0003;
overflow:auto;padding:12px 20px;display:none;z-index:5}#viewer.open{display:block}
#viewer .close{position:sticky;top:0;float:right;font-size:18px}
.msg{border-left:4px solid #ccc;margin:8px 0;padding:4px 10px;background:#fcfcfc}.msg .who{font-weight:600;font-size:12px}
.msg.user{border-color:#4269d0}.msg.assistant{border-color:#3ca951}.msg.edit{border-color:#efb118;background:#fffbea}
.msg.tool{border-color:#999}.msg.err{border-color:#d73027;background:#fff4f2}.msg.system{border-color:#a463f2}
pre{white-space:pre-wrap;word-break:break-word;margin:4px 0;font-size:12px;background:#f6f8fa;padding:6px}
.call{margin:4px 0 4px 8px}.meta{font-size:12px;color:#555}details>summary{cursor:pointer}
"""


def _fmt(value: Any) -> str:
    return "–" if value is None else (f"{value:.1f}" if isinstance(value, float) else str(value))


def summaries(runs: Sequence[Run]) -> tuple[list[int], list[dict[str, Any]]]:
    """The ks (1 and the most trials of a task) and each run's summary with those ks."""
    most = max(
        (max(Counter(r.task_id for r in run.records if r.scored).values(), default=1) for run in runs), default=1
    )
    ks = sorted({1, most})
    return ks, [summarize(run.records, ks) for run in runs]


def summary_table(runs: Sequence[Run]) -> str:
    """Score, Pass@k and Pass^k of every group (all, by scenario, difficulty, safety), agents side by side."""
    ks, sums = summaries(runs)
    cols = ["score", *(f"pass@{k}" for k in ks), *(f"pass^{k}" for k in ks), "trials"]
    head = "".join(f'<th colspan="{len(cols)}">{escape(run.label)}</th>' for run in runs)
    sub = "".join(f'<th class="n">{c}</th>' for _ in runs for c in cols)
    rows = [f'<tr><th rowspan="2">group</th>{head}</tr><tr>{sub}</tr>']

    def row(label: str, figs: list[dict[str, Any] | None], cls: str = "") -> str:
        cells = "".join(f'<td class="n">{_fmt((fig or {}).get(c))}</td>' for fig in figs for c in cols)
        return f'<tr class="{cls}"><td class="g">{escape(label)}</td>{cells}</tr>'

    rows.append(row("all", [s["overall"] for s in sums], "head"))
    for name in ("scenario", "difficulty", "safety"):
        groups = sorted({g for s in sums for g in s["by"][name]})
        rows.append(f'<tr class="head"><td colspan="{1 + len(cols) * len(runs)}">by {name}</td></tr>')
        rows += [row(g, [s["by"][name].get(g) for s in sums]) for g in groups]
    note = "scores ×100, mean over tasks; a trial passes at score ≥ 0.75; infra_error trials are not scored"
    return f'<div class="wide"><table class="summary">{"".join(rows)}</table></div><p class="muted">{note}</p>'


def claw_section(runs: Sequence[Run]) -> str:
    """Claw-Eval's figures of the runs of imported Claw-Eval tasks, one row per agent, and what was left out;
    "" when no run has any."""
    _, sums = summaries(runs)
    found = [(run, s["claw_eval"]) for run, s in zip(runs, sums, strict=True) if s.get("claw_eval")]
    if not found:
        return ""
    head = "".join(f'<th class="n">{escape(c.replace("_", " "))}</th>' for c in CLAW_COLUMNS)
    rows = [f"<tr><th>agent</th><th class=n>k</th>{head}</tr>"]
    notes: list[str] = []
    for run, fig in found:
        cells = "".join(f'<td class="n">{_fmt(v)}</td>' for v in claw_row(fig))
        rows.append(f'<tr><td class="g">{escape(run.label)}</td><td class="n">{fig["k"]}</td>{cells}</tr>')
        lines = claw_notes(fig)
        notes.append(f"<p><b>{escape(run.label)}</b></p><pre>{escape(chr(10).join(lines))}</pre>")
    table = f'<div class="wide"><table class="summary">{"".join(rows)}</table></div>'
    return f"<h3>Claw-Eval (imported tasks, graded by their own graders)</h3>{table}{''.join(notes)}"


def overview_table(runs: Sequence[Run]) -> str:
    """Per agent: trials, statuses, why trials did not pass, tokens, tool calls and time."""
    _, sums = summaries(runs)
    head = "".join(f"<th>{escape(run.label)}</th>" for run in runs)

    def line(label: str, values: list[str]) -> str:
        return f"<tr><td>{escape(label)}</td>{''.join(f'<td class=n>{escape(v)}</td>' for v in values)}</tr>"

    rows = [
        line("trajectories", [str(len(run.records)) for run in runs]),
        line("statuses", [", ".join(f"{k} {v}" for k, v in s["statuses"].items() if v) or "–" for s in sums]),
        line("not passed", [", ".join(f"{k} {v}" for k, v in s["failures"].items()) or "none" for s in sums]),
        line("tokens in / out", [f"{s['usage']['input_tokens']:,} / {s['usage']['output_tokens']:,}" for s in sums]),
        line("mean tool calls", [_fmt(s["mean_tool_calls"]) for s in sums]),
        line("mean seconds", [_fmt(s["mean_wall_s"]) for s in sums]),
    ]
    return f'<div class="wide"><table><tr><th></th>{head}</tr>{"".join(rows)}</table></div>'


def plots_section(plots: dict[str, str]) -> str:
    return "".join(f'<div class="plot"><h3>{escape(t)}</h3>{svg}</div>' for t, svg in plots.items())


BROWSER = """<section id="trajectories"><h2>Trajectories</h2>
<div id="filters">
<label>agent <select id="f-agent"><option value="">all</option></select></label>
<label>scenario <select id="f-scenario"><option value="">all</option></select></label>
<label>difficulty <select id="f-difficulty"><option value="">all</option></select></label>
<label>outcome <select id="f-outcome"><option value="">all</option><option value="passed">passed</option>
<option value="failed">not passed</option><option value="unsafe">unsafe</option>
<option value="incomplete">not completed</option></select></label>
<label>task <input id="f-text" type="search" placeholder="id or request contains"></label>
<span id="count" class="muted"></span></div>
<div id="pager"></div>
<div class="wide"><table id="table"><thead></thead><tbody></tbody></table></div>
<noscript>The trajectory table needs JavaScript.</noscript></section>
<aside id="viewer" aria-label="trajectory"></aside>"""


def page(runs: Sequence[Run], packed: Packed, plots: dict[str, str], title: str) -> str:
    """The whole self-contained page."""
    data = [f'<script type="application/gzip-base64" id="index">{packed.index}</script>']
    data += [f'<script type="application/gzip-base64" id="chunk-{i}">{c}</script>' for i, c in enumerate(packed.chunks)]
    counts = packed.counts
    sub = f"{counts['trajectories']:,} trajectories of {counts['tasks']:,} tasks · agents: " + ", ".join(
        run.label for run in runs
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title><style>{STYLE}</style></head>
<body><header><h1>{escape(title)}</h1><p>{escape(sub)}</p></header><main>
<section id="summary"><h2>Summary</h2>{overview_table(runs)}<h3>Score, Pass@k and Pass^k</h3>{summary_table(runs)}{claw_section(runs)}</section>
<section id="plots"><h2>Plots</h2><div class="plots">{plots_section(plots)}</div></section>
{BROWSER}</main>
{"".join(data)}
<script>{SCRIPT}</script></body></html>
"""
