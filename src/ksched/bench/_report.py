"""Reporting runs: the JSON object of ``--output json`` and the table for people."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._ops import RunResult

__all__ = ["print_table", "to_json"]


def _round(value: float, digits: int = 6) -> float:
    return round(value, digits)


def to_json(result: RunResult) -> dict[str, Any]:
    """The run as scheduler_perf-style JSON (``threshold`` only when the workload has one)."""
    out: dict[str, Any] = {
        "testCase": result.test_case,
        "workload": result.workload,
        "nodes": result.nodes,
        "measuredPods": result.measured_pods,
        "throughput": {
            "average": _round(result.throughput.average, 3),
            "perc50": _round(result.throughput.perc50, 3),
            "perc90": _round(result.throughput.perc90, 3),
            "perc99": _round(result.throughput.perc99, 3),
        },
        "attemptLatencySeconds": {
            "perc50": _round(result.latency_p50),
            "perc99": _round(result.latency_p99),
        },
        "peakRssBytes": result.peak_rss_bytes,
        "measuredSeconds": _round(result.measured_seconds, 3),
        "unsampledPods": result.unsampled_pods,
    }
    if result.threshold is not None:
        t = result.threshold
        out["threshold"] = int(t) if t.is_integer() else t
    if result.batched_pods:
        out["batchedPods"] = result.batched_pods
    chosen = result.metric_threshold
    if chosen is not None:
        data = result.metric_data
        out["thresholdMetric"] = {
            **chosen.to_json(),
            "unit": "ms",
            "data": {k: _round(v, 3) for k, v in data.items()} if data else None,
        }
    return out


def _verdict(result: RunResult) -> str:
    chosen = result.metric_threshold
    if chosen is not None:
        data = result.metric_data
        if not data:
            return f"{chosen.value:g} ms (not observed)"
        value = data[chosen.data_bucket]
        verdict = "within" if chosen.holds(value) else "MISSED"
        return f"{value:.2f} ms vs {chosen.value:g} ({verdict})"
    if result.threshold is None:
        return "-"
    ok = result.throughput.average > result.threshold
    return f"{result.threshold:g} ({'above' if ok else 'BELOW'})"


def print_table(results: Sequence[RunResult]) -> None:
    """A rich table: one row per run, then notes (latency method, short runs, gates)."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title="ksched bench (scheduler_perf workloads)")
    for column in (
        "workload",
        "nodes",
        "pods",
        "pods/s",
        "p50",
        "p90",
        "p99",
        "attempt p50 ms",
        "attempt p99 ms",
        "RSS MiB",
        "threshold",
        "backend",
    ):
        table.add_column(column, justify="left" if column == "workload" else "right")
    notes: list[str] = []
    for r in results:
        t = r.throughput
        table.add_row(
            f"{r.test_case}/{r.workload}",
            str(r.nodes),
            str(r.measured_pods),
            f"{t.average:.1f}",
            f"{t.perc50:.1f}",
            f"{t.perc90:.1f}",
            f"{t.perc99:.1f}",
            f"{r.latency_p50 * 1000:.2f}",
            f"{r.latency_p99 * 1000:.2f}",
            f"{r.peak_rss_bytes / 2**20:.0f}",
            _verdict(r),
            r.backend,
        )
        label = f"{r.test_case}/{r.workload}"
        if t.samples == 0:
            notes.append(
                f"{label}: measured phase shorter than two 1 s windows "
                f"({r.measured_seconds:.2f}s); throughput is the overall rate"
            )
        if t.samples and 4 * r.unsampled_pods > r.measured_pods:
            notes.append(
                f"{label}: {r.unsampled_pods} of {r.measured_pods} measured pods bound after "
                "the last 1 s window, which no sample counts; measured pods over measured "
                f"seconds: {r.measured_pods / r.measured_seconds:.1f} pods/s"
            )
        if r.latency_estimated:
            notes.append(
                f"{label}: attempt latency estimated from gaps between attempt outcomes "
                "(the engine does not report attempt start times)"
            )
        if r.extension_points is None:
            notes.append(
                f"{label}: time per extension point and engine overhead: not reported "
                "(the engine exposes no extension-point timings)"
            )
        if r.batched_pods:
            notes.append(f"{label}: {r.batched_pods} measured pods placed on a batching hint")
        if r.metric_threshold is not None:
            m = r.metric_threshold
            picked = ",".join(f"{k}={v}" for k, v in sorted(m.labels.items()))
            notes.append(
                f"{label}: threshold on {m.name}{{{picked}}} {m.data_bucket} "
                f"({'at most' if m.expect_lower else 'at least'} {m.value:g} ms)"
            )
        notes.extend(f"{label}: {n}" for n in r.notes)
    console = Console()
    console.print(table)
    points = Table(title="time per extension point, µs per measured pod")
    names = list(dict.fromkeys(p for r in results for p in (r.extension_points or {})))
    if names:
        points.add_column("workload")
        for name in names:
            points.add_column(name, justify="right")
        for r in results:
            seconds = r.extension_points or {}
            per_pod = max(r.measured_pods, 1)
            points.add_row(
                f"{r.test_case}/{r.workload}",
                *(f"{seconds.get(name, 0.0) / per_pod * 1e6:.0f}" for name in names),
            )
        console.print(points)
    for note in dict.fromkeys(notes):
        console.print(f"[dim]note: {note}[/dim]")
