"""Human output of ``ksched``: placements, node utilization, explain, events, plugins.

Everything here reads the JSON report of ``run_scenario`` (scenario-format.md) and draws
it with rich; nothing here knows the engine.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from ._format import PHASE_STYLES as PHASE_STYLES
from ._format import format_bytes as format_bytes
from ._format import format_cpu as format_cpu
from ._format import format_time as format_time
from ._summary import NODE_BARS_UP_TO, PENDING_GROUPS_FROM, pending_reasons, utilization_histogram

__all__ = [
    "format_bytes",
    "format_cpu",
    "format_time",
    "render_events",
    "render_explain",
    "render_plugins",
    "render_report",
]

_NOT_BOUND_FIRST = {"Unschedulable": 0, "Waiting": 1, "Gated": 2, "Pending": 3, "Bound": 4}
_DIGITS = re.compile(r"(\d+)")


def _phase(phase: str) -> Text:
    return Text(phase, style=PHASE_STYLES.get(phase, ""))


# ---- the report ----------------------------------------------------------------------


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key putting ``p-2`` before ``p-10``."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part) for part in _DIGITS.split(text) if part
    )


def _placements(report: Mapping[str, Any], rows: int | None) -> tuple[Table, Text]:
    pods: Mapping[str, Mapping[str, Any]] = report["pods"]
    keys = sorted(pods, key=natural_key)
    shown = keys
    if rows and len(keys) > rows:
        rank = {key: i for i, key in enumerate(keys)}
        shown = sorted(keys, key=lambda k: (_NOT_BOUND_FIRST.get(pods[k]["phase"], 5), rank[k]))
        shown = sorted(shown[:rows], key=rank.__getitem__)
    title = f"scenario [bold]{report['scenario']}[/] at t={report['time']:g}s (simulated)"
    if not report["settled"]:
        title += " [bold red](did not settle)[/]"
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", expand=False)
    table.add_column("pod", no_wrap=True)
    table.add_column("node", no_wrap=True)
    table.add_column("phase", no_wrap=True)
    table.add_column("attempts", justify="right")
    table.add_column("reason", overflow="fold", ratio=1, min_width=20)
    for key in shown:
        pod = pods[key]
        # FitError text: the filter summary, then PostFilter's on a line of its own.
        reason = (pod.get("message") or "").replace(". preemption: ", ".\npreemption: ")
        nominated = pod.get("nominatedNode")
        if nominated and not pod.get("node"):
            reason = f"nominated to {nominated}. {reason}".strip()
        table.add_row(
            key,
            pod.get("node") or Text("-", style="dim"),
            _phase(pod["phase"]),
            str(pod["attempts"]),
            Text(reason, style="dim" if pod["phase"] == "Bound" else ""),
        )
    counts = Counter(pod["phase"] for pod in pods.values())
    summary = Text(f"{len(pods)} pods: ")
    for i, (phase, count) in enumerate(sorted(counts.items(), key=lambda kv: -kv[1])):
        summary.append(", " if i else "")
        summary.append(f"{count} {phase}", style=PHASE_STYLES.get(phase, ""))
    if len(shown) < len(keys):
        summary.append(
            f"; showing {len(shown)} (pods not bound first), --rows 0 shows all", style="dim"
        )
    return table, summary


def _bar(used: float, total: float, width: int) -> ProgressBar:
    ratio = used / total if total > 0 else (1.0 if used > 0 else 0.0)
    style = "green" if ratio < 0.7 else "yellow" if ratio < 0.9 else "red"
    return ProgressBar(
        total=max(total, used, 1e-9),
        completed=used,
        width=width,
        complete_style=style,
        finished_style=style,
    )


def _utilization(
    nodes: Mapping[str, Mapping[str, Any]], rows: int | None, console_width: int
) -> Table:
    names = list(nodes)
    if rows and len(names) > rows:

        def cpu_ratio(name: str) -> float:
            alloc = nodes[name]["allocatable"]["cpu"]
            return float(nodes[name]["requested"]["cpu"] / alloc) if alloc else 0.0

        keep = set(sorted(names, key=cpu_ratio, reverse=True)[:rows])
        names = [n for n in names if n in keep]
    cells: list[tuple[str, str, str, str]] = []
    for name in names:
        req, alloc = nodes[name]["requested"], nodes[name]["allocatable"]
        cells.append(
            (
                name,
                f"{format_cpu(req['cpu'])}/{format_cpu(alloc['cpu'])}",
                f"{format_bytes(req['memory'])}/{format_bytes(alloc['memory'])}",
                f"{req['pods']}/{alloc['pods']}",
            )
        )
    text_width = sum(max((len(c[i]) for c in cells), default=4) for i in range(4))
    bar_width = max(6, min(20, (console_width - text_width - 24) // 3))
    table = Table(
        title="node utilization (requested / allocatable)",
        box=box.SIMPLE_HEAD,
        title_justify="left",
        padding=(0, 1),
    )
    table.add_column("node", no_wrap=True)
    for resource in ("cpu", "memory", "pods"):
        table.add_column(resource, width=bar_width, no_wrap=True)
        table.add_column("", justify="right", no_wrap=True)
    for name, row in zip(names, cells, strict=True):
        req, alloc = nodes[name]["requested"], nodes[name]["allocatable"]
        table.add_row(
            name,
            _bar(req["cpu"], alloc["cpu"], bar_width),
            row[1],
            _bar(req["memory"], alloc["memory"], bar_width),
            row[2],
            _bar(req["pods"], alloc["pods"], bar_width),
            row[3],
        )
    if len(names) < len(nodes):
        table.caption = f"{len(nodes)} nodes; showing the {len(names)} with the most cpu requested"
        table.caption_justify = "left"
    return table


def _groups(groups: Mapping[str, Mapping[str, Any]]) -> Table:
    table = Table(title="pod groups", box=box.SIMPLE_HEAD, title_justify="left")
    fields: list[str] = []
    for status in groups.values():
        fields.extend(f for f in status if f not in fields)
    table.add_column("group", no_wrap=True)
    for field in fields:
        table.add_column(field, overflow="fold")
    for name, status in groups.items():
        table.add_row(name, *("" if status.get(f) is None else str(status.get(f)) for f in fields))
    return table


def render_report(console: Console, report: Mapping[str, Any], *, rows: int | None = 100) -> None:
    """The placements table, pods not bound grouped by reason, evictions, pod groups and
    node utilization: a bar per node up to ``NODE_BARS_UP_TO`` nodes, a histogram past it.

    ``rows`` caps the rows of the placements and per-node tables (None or 0: no cap); the
    grouped reasons are shown past ``PENDING_GROUPS_FROM`` pods not bound, or when the
    placements are cut.
    """
    table, summary = _placements(report, rows)
    console.print(table)
    console.print(summary)
    console.print()
    pods: Mapping[str, Mapping[str, Any]] = report["pods"]
    not_bound = sum(pod["phase"] != "Bound" for pod in pods.values())
    if not_bound > PENDING_GROUPS_FROM or (not_bound and rows and len(pods) > rows):
        reasons = pending_reasons(pods)
        if reasons is not None:
            console.print(reasons)
    if report.get("evicted"):
        console.print(
            Text("evicted by preemption: ", style="bold") + Text(", ".join(report["evicted"]))
        )
    if report.get("groups"):
        console.print(_groups(report["groups"]))
    nodes = report.get("nodes")
    if nodes and len(nodes) > NODE_BARS_UP_TO:
        console.print(utilization_histogram(nodes, console.width))
    elif nodes:
        console.print(_utilization(nodes, rows, console.width))


# ---- explain --------------------------------------------------------------------------


_VERDICTS = {
    "Unschedulable": ("✗ unschedulable", "yellow"),
    "UnschedulableAndUnresolvable": ("✗ unresolvable", "red"),
    "Error": ("✗ error", "bold red"),
}


def _status_cells(status: Mapping[str, Any]) -> tuple[Text, str, str]:
    code = str(status.get("code", ""))
    if code == "Success":
        return Text("✓ fits", style="green"), "", ""
    label, style = _VERDICTS.get(code, (f"✗ {code}", "red"))
    return (
        Text(label, style=style),
        str(status.get("plugin", "")),
        "; ".join(status.get("reasons") or ()),
    )


def _fold_name(name: str, width: int = 10) -> str:
    """A CamelCase plugin name broken into lines of at most ``width`` where words begin."""
    words: list[str] = []
    for char in name:
        if char.isupper() and words and not words[-1][-1].isupper():
            words.append(char)
        elif words:
            words[-1] += char
        else:
            words.append(char)
    lines = [""]
    for word in words:
        if lines[-1] and len(lines[-1]) + len(word) > width:
            lines.append(word)
        else:
            lines[-1] += word
    return "\n".join(lines)


def render_explain(console: Console, report: Mapping[str, Any], pod: str) -> None:
    """A pod's first scheduling attempt: PreFilter, the Filter verdict per node, and the
    node x plugin score matrix (normalized scores, weights, weighted totals, the choice).

    Raises:
        KeyError: the report holds no attempt of ``pod``.
    """
    entry: Mapping[str, Any] = report["explain"][pod]
    pod_state = report["pods"].get(pod, {})
    parts: list[RenderableType] = [
        Text.assemble(
            ("explain ", "bold"),
            (pod, "bold cyan"),
            " — its first scheduling attempt; now ",
            _phase(pod_state.get("phase", "gone")),
            (f" on {pod_state['node']}" if pod_state.get("node") else ""),
        )
    ]
    if entry.get("owner"):
        parts.append(Text(f"created by {entry['owner']}"))
    pre = entry.get("preFilter")
    if pre is not None:
        verdict, plugin, reasons = _status_cells(pre)
        line = Text("PreFilter: ") + verdict
        if plugin:
            line += Text(f" by {plugin}: {reasons}")
        parts.append(line)

    filters: Mapping[str, Mapping[str, Any]] = entry.get("filter") or {}
    if filters:
        parts.append(Text("Filter", style="bold"))
        table = Table(box=box.SIMPLE_HEAD)
        table.add_column("node", no_wrap=True)
        table.add_column("verdict", no_wrap=True)
        table.add_column("plugin", no_wrap=True)
        table.add_column("reason", overflow="fold")
        for node, status in filters.items():
            table.add_row(node, *_status_cells(status))
        parts.append(table)
        not_evaluated = entry.get("notEvaluated") or []
        if not_evaluated:
            parts.append(
                Text(
                    f"not evaluated ({len(not_evaluated)}): {', '.join(not_evaluated[:20])}"
                    + (" ..." if len(not_evaluated) > 20 else ""),
                    style="dim",
                )
            )

    scores: Mapping[str, Mapping[str, Any]] = entry.get("scores") or {}
    selected = entry.get("selected")
    if scores:
        weights: Mapping[str, int] = entry.get("weights") or {}
        plugins = list(weights)
        skipped: list[str] = []
        for per_node in scores.values():
            for plugin, value in per_node.items():
                if plugin == "total" or plugin in plugins or plugin in skipped:
                    continue
                (skipped if value == "skipped" else plugins).append(plugin)
        parts.append(
            Text.assemble(
                ("Score", "bold"),
                (
                    " each plugin's normalized score (0-100) x its weight; total = weighted sum",
                    "dim",
                ),
            )
        )
        table = Table(box=box.SIMPLE_HEAD)
        table.add_column("node", no_wrap=True)
        for plugin in plugins:
            weight = weights.get(plugin)
            header = _fold_name(plugin) + (f"\nx{weight}" if weight is not None else "")
            table.add_column(header, justify="right")
        table.add_column("total", justify="right", style="bold")
        ranked = sorted(scores, key=lambda n: (-int(scores[n].get("total", 0)), n))
        for node in ranked:
            per_node = scores[node]
            cells: list[RenderableType] = []
            for plugin in plugins:
                value = per_node.get(plugin)
                if value is None or value == "skipped":
                    cells.append(Text("", style="dim"))
                else:
                    cells.append(str(value))
            chosen = node == selected
            table.add_row(
                Text(f"{node} ◀" if chosen else node, style="bold green" if chosen else ""),
                *cells,
                str(per_node.get("total", "")),
                style="on grey11" if chosen else "",
            )
        parts.append(table)
        if skipped:
            parts.append(
                Text(
                    f"not scoring (PreScore said Skip for this pod): {', '.join(skipped)}",
                    style="dim",
                )
            )
    if entry.get("hinted"):
        parts.append(
            Text(
                "no Score pass: the node was the runner-up of the previous pod with the same "
                "signature (opportunistic batching), and it passed Filter",
                style="dim",
            )
        )
    if selected:
        parts.append(Text.assemble("selected: ", (selected, "bold green")))
        for plugin, decision in (entry.get("decisions") or {}).items():
            parts.append(Text(f"  {plugin}: {_decision_text(decision)}"))
    elif filters or pre is not None:
        parts.append(Text("selected: no node (the attempt failed)", style="red"))
    group = entry.get("podGroup")
    if group:
        parts.extend(_group_lines(group))
    if pod_state.get("message"):
        parts.append(Text(f"last failure: {pod_state['message']}", style="dim"))
    console.print(Padding(Group(*parts), (1, 0, 0, 0)))


def _group_lines(group: Mapping[str, Any]) -> list[Text]:
    """The pod-group cycle's decision, for a member of a gang."""
    outcome = group.get("outcome", "")
    style = "bold green" if outcome == "Scheduled" else "red"
    lines = [
        Text.assemble(
            f"pod group {group.get('podGroup')} (minCount {group.get('minCount')}): ",
            (outcome, style),
            f" — {group['message']}" if group.get("message") else "",
        )
    ]
    placed = group.get("placed") or {}
    for member in group.get("members", []):
        node = placed.get(member)
        lines.append(Text(f"  {member} → {node}" if node else f"  {member} → no node"))
    victims = (group.get("preemption") or {}).get("victims") or {}
    for node, pods in victims.items():
        lines.append(Text(f"  preempting on {node}: {', '.join(pods)}", style="yellow"))
    return lines


def _decision_text(decision: Any, nested: bool = False) -> str:
    if isinstance(decision, Mapping):
        sep = " → " if nested else ": "
        text = (f"{k}{sep}{_decision_text(v, True)}" for k, v in decision.items())
        return ("; " if not nested else ", ").join(text)
    if isinstance(decision, list | tuple):
        return ", ".join(map(str, decision))
    return str(decision)


# ---- events ---------------------------------------------------------------------------


def _describe_event(kind: str, details: Mapping[str, Any]) -> tuple[str, str, str]:
    """(label, style, detail text) of one event."""
    node = details.get("node")
    message = str(details.get("message") or "")
    if kind == "Queued":
        return "queued", "dim", ""
    if kind == "Attempted":
        return "attempted", "", f"attempt {details.get('attempts', '')}".strip()
    if kind == "Unschedulable":
        return "unschedulable", "red", message
    if kind == "SchedulerError":
        return "error", "bold red", message
    if kind == "WaitingOnPermit":
        plugins = details.get("plugins") or ()
        return "waiting at Permit", "cyan", f"on {node}, for {', '.join(sorted(plugins))}"
    if kind == "PermitAllowed":
        return "allowed at Permit", "cyan", f"on {node}"
    if kind == "PermitRejected":
        label = "timed out at Permit" if "timeout" in message else "rejected at Permit"
        return label, "yellow", message
    if kind == "Bound":
        return "bound", "green", f"to {node}"
    if kind == "Preempted":
        return "preempted", "bold yellow", message or f"evicted from {node}"
    if kind == "Nominated":
        return "nominated", "yellow", f"to {node}"
    if kind == "Deleted":
        return "deleted", "dim", f"from {node}" if node else ""
    return kind, "", message or ", ".join(f"{k}={v}" for k, v in details.items())


def render_events(console: Console, events: Sequence[Mapping[str, Any]]) -> None:
    """The timeline: one line per event, at its simulated time since the start."""
    console.print(
        Text("events", style="bold")
        + Text(" (simulated time since 2025-01-01T00:00:00Z)", style="dim")
    )
    if not events:
        console.print(Text("  none", style="dim"))
        return
    table = Table(box=None, padding=(0, 1), show_header=False, pad_edge=True)
    table.add_column("time", style="dim", no_wrap=True)
    table.add_column("pod", no_wrap=True)
    table.add_column("event", no_wrap=True)
    table.add_column("detail", overflow="fold")
    for event in events:
        label, style, detail = _describe_event(event["kind"], event.get("details") or {})
        table.add_row(format_time(event["time"]), event["pod"], Text(label, style=style), detail)
    console.print(table)


# ---- plugins ----------------------------------------------------------------------------


def render_plugins(console: Console, plugins: Sequence[Mapping[str, Any]]) -> None:
    """One row per registered plugin: name, where it comes from, its extension points and
    what it offers the fast paths; then what each plugin turns off in them, and why."""
    table = Table(title="registered plugins", box=box.SIMPLE_HEAD, title_justify="left")
    table.add_column("plugin", no_wrap=True, style="bold")
    table.add_column("source", no_wrap=True)
    table.add_column("extension points", overflow="fold")
    table.add_column("fast paths", overflow="fold")
    for plugin in plugins:
        fast = plugin.get("fastPaths") or {}
        offered = [*fast.get("batchForms", ())]
        offered += [f"node-local {point}" for point in fast.get("nodeLocal", ())]
        if fast.get("signsPods"):
            offered.append("signs pods")
        table.add_row(
            plugin["name"],
            plugin["source"],
            ", ".join(plugin["extensionPoints"]),
            ", ".join(offered) or "-",
        )
    console.print(table)
    notes = [(p["name"], why) for p in plugins for why in p.get("turnsOff", ())]
    if notes:
        console.print("What a plugin turns off in the fast paths (results stay the same):")
        for name, why in notes:
            console.print(f"  {name}: {why}")
