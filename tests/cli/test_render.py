"""Human output: placements, node utilization, explain (filter verdicts and the score
matrix), the event timeline and the plugin list, drawn from report dicts."""

from __future__ import annotations

from typing import Any

import pytest
from rich.console import Console

from ksched.cli._render import (
    format_bytes,
    format_cpu,
    format_time,
    render_events,
    render_explain,
    render_plugins,
    render_report,
)


def console(width: int = 160) -> Console:
    return Console(record=True, width=width, color_system=None, highlight=False)


def text(c: Console) -> str:
    return c.export_text()


@pytest.mark.parametrize(
    ("cores", "shown"), [(0.0, "0"), (0.25, "250m"), (1.0, "1"), (2.5, "2.5"), (16.0, "16")]
)
def test_format_cpu(cores: float, shown: str) -> None:
    assert format_cpu(cores) == shown


@pytest.mark.parametrize(
    ("amount", "shown"),
    [(0, "0"), (512, "512"), (1536, "1.5Ki"), (1 << 30, "1Gi"), (3 << 29, "1.5Gi")],
)
def test_format_bytes(amount: int, shown: str) -> None:
    assert format_bytes(amount) == shown


def test_format_time() -> None:
    assert format_time(0.0) == "00:00:00.000"
    assert format_time(65.25) == "00:01:05.250"
    assert format_time(3 * 3600 + 0.0004) == "03:00:00.000"


def report(**extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "scenario": "demo",
        "settled": True,
        "time": 0.0,
        "pods": {
            "default/web": {"node": "n2", "phase": "Bound", "attempts": 1},
            "default/big": {
                "node": None,
                "phase": "Unschedulable",
                "attempts": 2,
                "nominatedNode": None,
                "message": "0/2 nodes are available: 2 Insufficient cpu.",
            },
        },
        "evicted": [],
        "groups": {},
        "nodes": {
            "n1": {
                "requested": {"cpu": 0.0, "memory": 0, "pods": 0},
                "allocatable": {"cpu": 2.0, "memory": 4 << 30, "pods": 10},
            },
            "n2": {
                "requested": {"cpu": 3.5, "memory": 6 << 30, "pods": 9},
                "allocatable": {"cpu": 4.0, "memory": 8 << 30, "pods": 10},
            },
        },
        "explain": {
            "default/web": {
                "preFilter": {"code": "Success"},
                "filter": {
                    "n1": {
                        "code": "Unschedulable",
                        "plugin": "NodeResourcesFit",
                        "reasons": ["Insufficient memory"],
                    },
                    "n2": {"code": "Success"},
                    "n3": {"code": "Success"},
                    "n4": {
                        "code": "UnschedulableAndUnresolvable",
                        "plugin": "TaintToleration",
                        "reasons": ["node(s) had untolerated taint(s)"],
                    },
                },
                "notEvaluated": ["n5"],
                "scores": {
                    "n2": {
                        "NodeResourcesFit": 70,
                        "TaintToleration": 100,
                        "NodeAffinity": "skipped",
                        "total": 370,
                    },
                    "n3": {
                        "NodeResourcesFit": 90,
                        "TaintToleration": 50,
                        "NodeAffinity": "skipped",
                        "total": 240,
                    },
                },
                "weights": {"NodeResourcesFit": 1, "TaintToleration": 3},
                "selected": "n2",
            }
        },
    }
    base.update(extra)
    return base


def test_report_placements_and_utilization() -> None:
    c = console()
    render_report(c, report())
    out = text(c)
    assert "scenario demo at t=0s" in out
    rows = {line.split()[0]: line.split() for line in out.splitlines() if "default/" in line}
    assert rows["default/web"][:4] == ["default/web", "n2", "Bound", "1"]
    assert rows["default/big"][:4] == ["default/big", "-", "Unschedulable", "2"]
    assert "0/2 nodes are available: 2 Insufficient cpu." in out
    assert "2 pods: 1 Bound, 1 Unschedulable" in out
    assert "node utilization (requested / allocatable)" in out
    n2 = next(line for line in out.splitlines() if line.strip().startswith("n2 "))
    assert "3.5/4" in n2 and "6Gi/8Gi" in n2 and "9/10" in n2
    n1 = next(line for line in out.splitlines() if line.strip().startswith("n1 "))
    assert "0/2" in n1 and "0/4Gi" in n1 and "0/10" in n1


def test_report_marks_unsettled_and_evictions() -> None:
    c = console()
    render_report(c, report(settled=False, evicted=["default/low"]))
    out = text(c)
    assert "(did not settle)" in out
    assert "evicted by preemption: default/low" in out


def test_rows_cap_shows_pods_not_bound_first() -> None:
    pods = {f"default/p{i:02d}": {"node": "n1", "phase": "Bound", "attempts": 1} for i in range(20)}
    pods["default/zz-stuck"] = {"node": None, "phase": "Pending", "attempts": 0}
    c = console()
    render_report(c, report(pods=pods), rows=5)
    out = text(c)
    shown = [line.split()[0] for line in out.splitlines() if line.strip().startswith("default/")]
    assert shown == ["default/p00", "default/p01", "default/p02", "default/p03", "default/zz-stuck"]
    assert "21 pods: 20 Bound, 1 Pending; showing 5" in out


def test_explain_filter_verdicts_and_score_matrix() -> None:
    c = console()
    r = report()
    render_explain(c, r, "default/web")
    out = text(c)
    lines = out.splitlines()
    assert "explain default/web" in out
    n1 = next(line for line in lines if line.strip().startswith("n1 "))
    assert n1.split()[1:] == ["✗", "unschedulable", "NodeResourcesFit", "Insufficient", "memory"]
    n4 = next(line for line in lines if line.strip().startswith("n4 "))
    assert "✗ unresolvable" in n4 and "TaintToleration" in n4 and "untolerated taint(s)" in n4
    assert "not evaluated (1): n5" in out
    # The score matrix: weights in the header, rows ranked by total, the chosen node marked.
    assert "x1" in out and "x3" in out
    matrix = lines[next(i for i, line in enumerate(lines) if line.startswith("Score")) :]
    score_rows = [line.split() for line in matrix if line.strip().startswith(("n2 ◀", "n3 "))]
    assert score_rows == [["n2", "◀", "70", "100", "370"], ["n3", "90", "50", "240"]]
    assert "not scoring (PreScore said Skip for this pod): NodeAffinity" in out
    assert "selected: n2" in out


def test_explain_of_a_failed_attempt() -> None:
    r = report()
    r["explain"]["default/big"] = {
        "preFilter": {
            "code": "UnschedulableAndUnresolvable",
            "plugin": "NodeAffinity",
            "reasons": ["node(s) didn't match Pod's node affinity/selector"],
        },
        "filter": {},
        "notEvaluated": [],
        "scores": {},
        "selected": None,
    }
    c = console()
    render_explain(c, r, "default/big")
    out = text(c)
    assert (
        "PreFilter: ✗ unresolvable by NodeAffinity: "
        "node(s) didn't match Pod's node affinity/selector"
    ) in out
    assert "selected: no node (the attempt failed)" in out
    assert "last failure: 0/2 nodes are available: 2 Insufficient cpu." in out
    with pytest.raises(KeyError):
        render_explain(c, r, "default/nope")


def test_events_timeline() -> None:
    events = [
        {"kind": "Queued", "pod": "default/a", "time": 0.0, "details": {}},
        {"kind": "Attempted", "pod": "default/a", "time": 0.0, "details": {"attempts": 1}},
        {
            "kind": "WaitingOnPermit",
            "pod": "default/a",
            "time": 0.0,
            "details": {"node": "n1", "plugins": ["Coscheduling"]},
        },
        {
            "kind": "PermitRejected",
            "pod": "default/a",
            "time": 10.0,
            "details": {
                "node": "n1",
                "message": "rejected due to timeout after waiting 10s at plugin Coscheduling",
            },
        },
        {"kind": "PermitAllowed", "pod": "default/b", "time": 61.5, "details": {"node": "n1"}},
        {"kind": "Bound", "pod": "default/b", "time": 61.5, "details": {"node": "n1"}},
        {
            "kind": "Preempted",
            "pod": "default/low",
            "time": 3600.0,
            "details": {"message": "Preempted by pod default/vip on node n1"},
        },
        {"kind": "Nominated", "pod": "default/vip", "time": 3600.0, "details": {"node": "n1"}},
        {"kind": "Unschedulable", "pod": "default/c", "time": 3600, "details": {"message": "no"}},
    ]
    c = console()
    render_events(c, events)
    lines = [" ".join(line.split()) for line in text(c).splitlines()[1:]]
    assert lines == [
        "00:00:00.000 default/a queued",
        "00:00:00.000 default/a attempted attempt 1",
        "00:00:00.000 default/a waiting at Permit on n1, for Coscheduling",
        "00:00:10.000 default/a timed out at Permit rejected due to timeout after waiting 10s "
        "at plugin Coscheduling",
        "00:01:01.500 default/b allowed at Permit on n1",
        "00:01:01.500 default/b bound to n1",
        "01:00:00.000 default/low preempted Preempted by pod default/vip on node n1",
        "01:00:00.000 default/vip nominated to n1",
        "01:00:00.000 default/c unschedulable no",
    ]


def test_plugins_table() -> None:
    c = console()
    render_plugins(
        c,
        [
            {
                "name": "NodeName",
                "source": "in-tree",
                "extensionPoints": ["filter"],
                "fastPaths": {"batchForms": ["filter_batch"], "signsPods": True},
            },
            {
                "name": "Sticky",
                "source": "--plugin",
                "extensionPoints": ["preFilter", "filter"],
                "turnsOff": [
                    "opportunistic batching, for its whole profile: it does not sign pods"
                ],
            },
        ],
    )
    out = text(c)
    rows = [line.split() for line in out.splitlines() if line.strip().startswith(("Node", "St"))]
    assert rows == [
        ["NodeName", "in-tree", "filter", "filter_batch,", "signs", "pods"],
        ["Sticky", "--plugin", "preFilter,", "filter", "-"],
        ["Sticky:", "opportunistic", "batching,", "for", "its", "whole", "profile:", "it", "does",
         "not", "sign", "pods"],
    ]  # fmt: skip


def test_pods_sort_naturally() -> None:
    pods = {f"default/p-{i}": {"node": "n1", "phase": "Bound", "attempts": 1} for i in (10, 2, 1)}
    c = console()
    render_report(c, report(pods=pods))
    shown = [line.split()[0] for line in text(c).splitlines() if "default/p-" in line]
    assert shown == ["default/p-1", "default/p-2", "default/p-10"]
