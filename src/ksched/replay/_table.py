"""The replay report as rich tables (``ksched replay --output table``), as ``ksched
simulate`` draws its own: placements beside the recording, agreement, pending pods by
reason, time to schedule, utilization and fragmentation, preemptions, a comparison."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..cli._format import PHASE_STYLES, format_bytes, format_cpu

__all__ = ["render_comparison", "render_replay"]


def _time(value: Any) -> str:
    return "-" if value is None else f"{value:g}s"


def _placements(report: Mapping[str, Any], rows: int | None) -> Table:
    pods: Sequence[Mapping[str, Any]] = [p for p in report["pods"] if p["ours"]]
    # disagreements and pods not bound first: what a reader looks for
    ranked = sorted(
        pods, key=lambda p: (p.get("agreed", True), p["phase"] == "Bound", p["created"])
    )
    shown = ranked[:rows] if rows else ranked
    title = (
        f"[bold]{report['trace']['path']}[/] under [bold]{report['config']}[/] "
        f"({report['mode']}, {report['summary']['duration']:g}s of trace)"
    )
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left")
    for name in ("pod", "recorded node", "ksched node", "phase", "agreed", "why"):
        table.add_column(name, no_wrap=name != "why", overflow="fold")
    for pod in shown:
        agreed = pod.get("agreed")
        mark = Text("-" if agreed is None else "yes" if agreed else "no")
        mark.stylize("green" if agreed else "red" if agreed is False else "dim")
        decision = pod.get("decision") or {}
        why = decision.get("reason") or pod.get("message") or ""
        table.add_row(
            pod["pod"],
            pod.get("recordedNode") or "-",
            pod.get("node") or "-",
            Text(pod["phase"], style=PHASE_STYLES.get(pod["phase"], "")),
            mark,
            Text(why, style="dim"),
        )
    if len(shown) < len(pods):
        table.caption = f"{len(pods)} pods; showing {len(shown)} (disagreements first)"
        table.caption_justify = "left"
    return table


def _summary(report: Mapping[str, Any]) -> Table:
    s, a = report["summary"], report["agreement"]
    tts = report["timeToSchedule"]
    util = report["utilization"].get("mean", {})
    table = Table(box=box.SIMPLE_HEAD, show_header=False, title="summary", title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("value")
    table.add_row(
        "agreement", f"{a['agreed']}/{a['decisions']} decisions ({100 * a['ratio']:.2f} %)"
    )
    table.add_row("pods", f"{s['ours']} scheduled by the profiles, {s['pods']} in all")
    table.add_row("bound", f"{s['bound']} (recorded: {s['recordedBound']})")
    table.add_row("pending at the end", str(s["pending"]))
    table.add_row("preemptions", str(s["preemptions"]))
    for side in ("replayed", "recorded"):
        p = tts.get(side, {})
        if p.get("count"):
            table.add_row(
                f"time to schedule ({side})",
                f"p50 {_time(p['p50'])}  p90 {_time(p['p90'])}  p99 {_time(p['p99'])}  "
                f"max {_time(p['max'])}",
            )
    if util:
        table.add_row(
            "mean utilization",
            f"cpu {util['cpu']:.1f} %  memory {util['memory']:.1f} %  pods {util['pods']:.1f} %",
        )
        table.add_row(
            "mean fragmentation",
            f"cpu {util['fragmentationCpu']:.1f} %  memory {util['fragmentationMemory']:.1f} %",
        )
    return table


def _pending(report: Mapping[str, Any]) -> Table | None:
    reasons: Mapping[str, int] = report["pending"]["byReason"]
    if not reasons:
        return None
    table = Table(title="pending at the end, by reason", box=box.SIMPLE_HEAD, title_justify="left")
    table.add_column("pods", justify="right")
    table.add_column("reason", overflow="fold")
    for reason, count in reasons.items():
        table.add_row(str(count), reason)
    return table


def _nodes(report: Mapping[str, Any], rows: int | None) -> Table:
    nodes: Mapping[str, Mapping[str, Any]] = report["nodes"]
    names = sorted(nodes, key=lambda n: -nodes[n]["requested"]["cpu"])
    shown = names[:rows] if rows else names
    table = Table(title="nodes at the end", box=box.SIMPLE_HEAD, title_justify="left")
    for name in ("node", "cpu", "memory", "pods"):
        table.add_column(name, no_wrap=True, justify="left" if name == "node" else "right")
    for name in shown:
        req, alloc = nodes[name]["requested"], nodes[name]["allocatable"]
        table.add_row(
            name,
            f"{format_cpu(req['cpu'])}/{format_cpu(alloc['cpu'])}",
            f"{format_bytes(req['memory'])}/{format_bytes(alloc['memory'])}",
            f"{req['pods']}/{alloc['pods']}",
        )
    if len(shown) < len(names):
        table.caption = f"{len(names)} nodes; showing the {len(shown)} with the most cpu"
        table.caption_justify = "left"
    return table


def render_replay(console: Console, report: Mapping[str, Any], *, rows: int | None = 50) -> None:
    """The whole report as tables."""
    console.print(_placements(report, rows))
    console.print(_summary(report))
    pending = _pending(report)
    if pending is not None:
        console.print(pending)
    if report["preemptions"]:
        victims = ", ".join(p["victim"] for p in report["preemptions"][:20])
        console.print(Text("preempted: ", style="bold") + Text(victims))
    console.print(_nodes(report, min(rows or 20, 20)))


def render_comparison(console: Console, comparison: Mapping[str, Any], rows: int = 50) -> None:
    """What changed from configuration a to b, pod by pod and in aggregate."""
    table = Table(
        title=f"[bold]{comparison['a']}[/] (a) against [bold]{comparison['b']}[/] (b)",
        box=box.SIMPLE_HEAD,
        title_justify="left",
    )
    for name in ("measure", "a", "b", "b - a"):
        table.add_column(name, justify="left" if name == "measure" else "right")
    for name, entry in comparison["aggregate"].items():
        cells = ["-" if entry[k] is None else f"{entry[k]:g}" for k in ("a", "b", "delta")]
        table.add_row(name, *cells)
    console.print(table)
    moved: Sequence[Mapping[str, Any]] = comparison["moved"]
    console.print(
        f"{comparison['samePlacement']} pods placed alike; {len(moved)} placed differently"
    )
    if moved:
        pods = Table(box=box.SIMPLE_HEAD, title="placed differently", title_justify="left")
        for name in ("pod", "recorded", "a", "b"):
            pods.add_column(name, no_wrap=True)
        for pod in moved[:rows]:
            pods.add_row(
                pod["pod"],
                pod.get("recordedNode") or "-",
                pod.get("a") or f"({pod.get('phaseA')})",
                pod.get("b") or f"({pod.get('phaseB')})",
            )
        console.print(pods)
