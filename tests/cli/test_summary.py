"""The table view at scale: pods not bound grouped by the FitError's reason histogram, node
utilization as a histogram past a few dozen nodes."""

from __future__ import annotations

from typing import Any

import pytest
from rich.console import Console

from ksched.cli._render import render_report
from ksched.cli._summary import NODE_BARS_UP_TO, fit_reasons

PREEMPTION = " preemption: 0/1000 nodes are available: 1000 Preemption is not helpful."


@pytest.mark.parametrize(
    ("message", "parsed"),
    [
        (
            "0/1000 nodes are available: 1000 Insufficient cpu." + PREEMPTION,
            (1000, (("Insufficient cpu", 1000),)),
        ),
        (
            "0/5 nodes are available: 2 Insufficient cpu, 3 node(s) had untolerated taint "
            "{node.kubernetes.io/unreachable: }.",
            (
                5,
                (
                    ("Insufficient cpu", 2),
                    ("node(s) had untolerated taint {node.kubernetes.io/unreachable: }", 3),
                ),
            ),
        ),
        (
            "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
            "2 Insufficient memory. PodGroup default/g gets rejected",
            (
                3,
                (
                    ("node(s) didn't match Pod's node affinity/selector", 1),
                    ("Insufficient memory", 2),
                ),
            ),
        ),
        ("0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims.", None),
        ("scheduling cycle failed: RuntimeError: boom", None),
    ],
)
def test_fit_reasons(message: str, parsed: Any) -> None:
    assert fit_reasons(message) == parsed


def console() -> Console:
    return Console(record=True, width=140, color_system=None, highlight=False)


def lines(c: Console) -> list[str]:
    return [" ".join(line.split()) for line in c.export_text().splitlines()]


def node(cpu_used: float, pods: int = 0) -> dict[str, Any]:
    return {
        "requested": {"cpu": cpu_used, "memory": 0, "pods": pods},
        "allocatable": {"cpu": 4.0, "memory": 16 << 30, "pods": 110},
    }


def report(pods: dict[str, Any], nodes: dict[str, Any]) -> dict[str, Any]:
    return {
        "scenario": "big",
        "settled": True,
        "time": 0.0,
        "pods": pods,
        "evicted": [],
        "groups": {},
        "nodes": nodes,
    }


def test_pods_not_bound_are_grouped_by_reason() -> None:
    pods: dict[str, Any] = {}
    for i in range(1000):
        pods[f"default/web-{i}"] = {"node": f"n{i}", "phase": "Bound", "attempts": 1}
    for i in range(4000):
        pods[f"default/big-{i}"] = {
            "node": None,
            "phase": "Unschedulable",
            "attempts": 1,
            "message": "0/1000 nodes are available: 1000 Insufficient cpu." + PREEMPTION,
        }
    for i in range(7):
        pods[f"default/mixed-{i}"] = {
            "node": None,
            "phase": "Unschedulable",
            "attempts": 2,
            "message": "0/1000 nodes are available: 600 Insufficient cpu, "
            "400 node(s) had untolerated taint(s).",
        }
    for i in range(3):
        pods[f"default/gang-{i}"] = {"node": None, "phase": "Waiting", "attempts": 1}
    c = console()
    render_report(c, report(pods, {}))
    out = lines(c)
    at = out.index("pods not bound, by reason")
    assert out[at + 4 : at + 7] == [
        "4000 Unschedulable Insufficient cpu on 1000 nodes",
        "7 Unschedulable Insufficient cpu on 600 nodes, node(s) had untolerated taint(s) on "
        "400 nodes",
        "3 Waiting holding a node at Permit",
    ]


def test_a_few_pods_not_bound_are_not_grouped() -> None:
    pods = {
        "default/a": {"node": "n1", "phase": "Bound", "attempts": 1},
        "default/b": {
            "node": None,
            "phase": "Unschedulable",
            "attempts": 1,
            "message": "0/1 nodes are available: 1 Insufficient cpu.",
        },
    }
    c = console()
    render_report(c, report(pods, {"n1": node(1.0)}))
    assert "pods not bound, by reason" not in lines(c)


def test_many_nodes_make_a_utilization_histogram() -> None:
    nodes = {f"n{i}": node(0.0) for i in range(50)}
    nodes.update({f"m{i}": node(2.0, pods=2) for i in range(30)})
    nodes.update({f"f{i}": node(4.0, pods=110) for i in range(20)})
    c = console()
    render_report(c, report({}, nodes))
    out = lines(c)
    assert "node utilization: 100 nodes by share requested (requested / allocatable)" in out
    # requested | cpu, nodes | memory, nodes | pods, nodes (a bar, then the count)
    rows = {
        line.split()[0]: [int(t) for t in line.split()[1:] if t.isdigit()]
        for line in out
        if line.split()[:1] and line.split()[0].endswith("%")
    }
    assert list(rows) == [
        "0%",
        *(f"{10 * i + 1}-{10 * (i + 1)}%" for i in range(9)),
        "91-99%",
        "100%",
    ]
    assert rows["0%"] == [50, 100, 50]
    assert rows["1-10%"] == [0, 0, 30]
    assert rows["41-50%"] == [30, 0, 0]
    assert rows["100%"] == [20, 0, 20]
    assert "cluster: cpu 140/400 (35%), memory 0/1.6Ti (0%), pods 2260/11000 (21%)" in out
    assert not any(line.startswith("n1 ") for line in out)


def test_a_few_dozen_nodes_keep_a_bar_each() -> None:
    nodes = {f"n{i}": node(1.0) for i in range(NODE_BARS_UP_TO)}
    c = console()
    render_report(c, report({}, nodes))
    out = lines(c)
    assert "node utilization (requested / allocatable)" in out
    assert sum(line.startswith("n") and "1/4" in line for line in out) == NODE_BARS_UP_TO


@pytest.mark.parametrize("width", [80, 120, 200])
def test_the_histogram_fits_the_terminal(width: int) -> None:
    nodes = {f"n{i}": node(3.0, pods=1) for i in range(12_000)}
    c = Console(record=True, width=width, color_system=None, highlight=False)
    render_report(c, report({}, nodes))
    out = c.export_text()
    assert "…" not in out
    assert max(len(line.rstrip()) for line in out.splitlines()) <= width
    row = next(line.split() for line in out.splitlines() if line.strip().startswith("71-80%"))
    assert row[-1] == "0" and "12000" in row
