"""``ksched replay --output html``: the report as one self-contained HTML file.

No network is needed to open it: the CSS and the script are inline, the charts are SVG
drawn here, and the report's data is embedded as JSON (``</`` escaped). It shows the
summary, utilization and fragmentation over time, the nodes at the end, and the
placements; clicking a pod shows its explanation (the decision judged, or the first
attempt's rejected nodes and best scores, beside its recorded node).
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

__all__ = ["MAX_ROWS", "render_html"]

MAX_ROWS = 5000
"""Pods listed in the page (disagreements and pending pods first); the JSON has all."""

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse}td,th{padding:3px 8px;border-bottom:1px solid #ddd;
text-align:left;white-space:nowrap}
#pods tbody tr{cursor:pointer}#pods tbody tr:hover{background:#eef}
tr.selected{background:#dde!important}.no{color:#b00;font-weight:bold}.yes{color:#070}
#details{position:sticky;top:10px;border:1px solid #aaa;padding:10px;min-width:320px;
max-width:560px;background:#fafafa;white-space:normal}
.wrap{display:flex;gap:24px;align-items:flex-start}.muted{color:#777}
.bar{display:inline-block;height:10px;background:#4a7;vertical-align:middle}
.barbg{display:inline-block;width:120px;height:10px;background:#e4e4e4}
svg text{font-size:11px}
"""

_SCRIPT = (resources.files(__package__) / "report.js").read_text(encoding="utf-8")
"""The page's script (report.js beside this module): the details of a clicked pod."""

_SERIES = (
    ("cpu", 1, "#2a6"),
    ("memory", 2, "#36c"),
    ("fragmentation cpu", 4, "#c63"),
    ("fragmentation memory", 5, "#a3a"),
)


def _chart(samples: Sequence[Sequence[float]], end: float) -> str:
    """Utilization and fragmentation (percent) over trace time, as an SVG of steps."""
    width, height, left, bottom = 720, 220, 40, 24
    span = max(end, samples[-1][0] if samples else 0.0, 1e-9)
    plot_w, plot_h = width - left - 10, height - bottom - 10

    def x(t: float) -> float:
        return left + plot_w * t / span

    def y(pct: float) -> float:
        return 10 + plot_h * (1 - min(max(pct, 0.0), 100.0) / 100)

    parts = [f'<svg id="utilization" width="{width}" height="{height}" role="img">']
    for pct in (0, 50, 100):
        parts.append(
            f'<line x1="{left}" x2="{width - 10}" y1="{y(pct):.1f}" y2="{y(pct):.1f}" '
            f'stroke="#ddd"/><text x="4" y="{y(pct) + 4:.1f}">{pct}%</text>'
        )
    parts.append(f'<text x="{left}" y="{height - 6}">0s</text>')
    parts.append(f'<text x="{width - 60}" y="{height - 6}">{span:g}s</text>')
    for i, (name, column, color) in enumerate(_SERIES):
        points: list[str] = []
        for k, sample in enumerate(samples):
            if k:
                points.append(f"{x(sample[0]):.1f},{y(samples[k - 1][column]):.1f}")
            points.append(f"{x(sample[0]):.1f},{y(sample[column]):.1f}")
        if samples:
            points.append(f"{x(span):.1f},{y(samples[-1][column]):.1f}")
        parts.append(
            f'<polyline fill="none" stroke="{color}" stroke-width="1.5" '
            f'points="{" ".join(points)}"><title>{name}</title></polyline>'
        )
        parts.append(
            f'<text x="{left + 10 + 150 * i}" y="22" fill="{color}">{html.escape(name)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _summary(report: Mapping[str, Any]) -> str:
    s, a = report["summary"], report["agreement"]
    rows = [
        ("agreement", f"{a['agreed']}/{a['decisions']} ({100 * a['ratio']:.2f} %)"),
        ("pods", f"{s['ours']} of the profiles, {s['pods']} in all"),
        ("bound", f"{s['bound']} (recorded {s['recordedBound']})"),
        ("pending at the end", str(s["pending"])),
        ("preemptions", str(s["preemptions"])),
    ]
    for side in ("replayed", "recorded"):
        p = report["timeToSchedule"].get(side, {})
        if p.get("count"):
            rows.append(
                (f"time to schedule, {side}", f"p50 {p['p50']}s, p90 {p['p90']}s, p99 {p['p99']}s")
            )
    body = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in rows)
    return f'<table id="summary">{body}</table>'


def _node_rows(nodes: Mapping[str, Mapping[str, Any]]) -> str:
    out = []
    for name in sorted(nodes):
        req, alloc = nodes[name]["requested"], nodes[name]["allocatable"]
        cells = [f"<td>{html.escape(name)}</td>"]
        for resource in ("cpu", "memory", "pods"):
            ratio = req[resource] / alloc[resource] if alloc[resource] else 0.0
            width = int(120 * min(ratio, 1.0))
            cells.append(
                f'<td><span class="barbg"><span class="bar" style="width:{width}px"></span>'
                f"</span> {100 * ratio:.0f}%</td>"
            )
        out.append("<tr>" + "".join(cells) + "</tr>")
    return "".join(out)


def _pod_rows(pods: Sequence[Mapping[str, Any]]) -> tuple[str, int]:
    ours = [p for p in pods if p["ours"]]
    ranked = sorted(ours, key=lambda p: (p.get("agreed", True), p["phase"] == "Bound"))
    out = []
    for pod in ranked[:MAX_ROWS]:
        agreed = pod.get("agreed")
        mark = (
            "-"
            if agreed is None
            else '<span class="yes">yes</span>'
            if agreed
            else ('<span class="no">no</span>')
        )
        uid = html.escape(pod["uid"], quote=True)
        out.append(
            f'<tr id="row-{uid}" data-uid="{uid}"><td>{html.escape(pod["pod"])}</td>'
            f"<td>{html.escape(pod.get('recordedNode') or '-')}</td>"
            f"<td>{html.escape(pod.get('node') or '-')}</td>"
            f"<td>{html.escape(pod['phase'])}</td><td>{mark}</td></tr>"
        )
    return "".join(out), len(ours)


def _embedded(report: Mapping[str, Any]) -> str:
    kept = {"pods": [p for p in report["pods"] if p["ours"]][:MAX_ROWS]}
    text = json.dumps(kept, separators=(",", ":"))
    return text.replace("</", "<\\/")


def render_html(report: Mapping[str, Any], comparison: Mapping[str, Any] | None = None) -> str:
    """The report (and a comparison, with ``--compare``) as one HTML document."""
    title = f"ksched replay: {report['trace']['path']} under {report['config']}"
    rows, count = _pod_rows(report["pods"])
    cut = f" (showing {MAX_ROWS} of {count})" if count > MAX_ROWS else ""
    samples = report["utilization"]["samples"]
    compare = ""
    if comparison is not None:
        agg = "".join(
            f"<tr><td>{html.escape(name)}</td><td>{e['a']}</td><td>{e['b']}</td>"
            f"<td>{e['delta']}</td></tr>"
            for name, e in comparison["aggregate"].items()
        )
        compare = (
            f"<h2>compared with {html.escape(str(comparison['b']))}</h2>"
            f'<table id="comparison"><tr><th>measure</th><th>a</th><th>b</th><th>b - a</th></tr>'
            f"{agg}</table><p>{comparison['samePlacement']} pods placed alike, "
            f"{len(comparison['moved'])} differently</p>"
        )
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"
        f"<h1>{html.escape(title)}</h1>"
        f"<p class='muted'>mode {html.escape(report['mode'])}, "
        f"{report['summary']['duration']}s of trace</p>"
        f"{_summary(report)}{compare}"
        f"<h2>utilization and fragmentation over time</h2>"
        f"{_chart(samples, float(report['summary']['duration']))}"
        f"<h2>nodes at the end</h2><table id='nodes'><tr><th>node</th><th>cpu</th>"
        f"<th>memory</th><th>pods</th></tr>{_node_rows(report['nodes'])}</table>"
        f"<h2>placements{cut}</h2><p class='muted'>click a pod for its explanation</p>"
        f"<div class='wrap'><table id='pods'><thead><tr><th>pod</th><th>recorded node</th>"
        f"<th>ksched node</th><th>phase</th><th>agreed</th></tr></thead><tbody>{rows}"
        f"</tbody></table><div id='details'><p class='muted'>no pod selected</p></div></div>"
        f"<script type='application/json' id='report-data'>{_embedded(report)}</script>"
        f"<script>{_SCRIPT}</script></body></html>"
    )
