"""The metrics of a replay, computed here and nowhere else.

- **agreement**: of the decisions compared, how many agreed with the recording (a replay:
  the pod went to its recorded node; ``--follow-recorded``: the recorded node was among
  the feasible nodes with the best total);
- **time to schedule**: creation to binding, in trace seconds, as percentiles;
- **utilization** over time: requested / allocatable cpu, memory and pods, cluster-wide;
- **fragmentation** over time: the share of the free cpu (memory) that lies on nodes
  where the trace's median pod no longer fits (its cpu, its memory or one pod slot) —
  free capacity no typical arrival can use. (GPU fragmentation joins this module.)
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..api import Node, Pod, pod_requests

__all__ = [
    "UsageTracker",
    "agreement",
    "compare_reports",
    "percentiles",
]

PERCENTILES = (50, 90, 99)
MAX_SAMPLES = 400
"""Utilization samples kept; past that every other one is dropped and the spacing doubled."""
_RESERVOIR = 1024


def percentiles(values: Iterable[float]) -> dict[str, Any]:
    """``count``, ``p50``/``p90``/``p99`` (nearest rank), ``max`` and ``mean`` of values."""
    ordered = sorted(values)
    out: dict[str, Any] = {"count": len(ordered)}
    if not ordered:
        return out
    for p in PERCENTILES:
        rank = max(1, math.ceil(p / 100 * len(ordered)))
        out[f"p{p}"] = round(ordered[rank - 1], 6)
    out["max"] = round(ordered[-1], 6)
    out["mean"] = round(sum(ordered) / len(ordered), 6)
    return out


def agreement(decisions: int, agreed: int) -> dict[str, Any]:
    """The report's ``agreement`` entry."""
    ratio = agreed / decisions if decisions else 1.0
    return {"decisions": decisions, "agreed": agreed, "ratio": round(ratio, 6)}


class UsageTracker:
    """Requested and allocatable resources per node, kept as the cluster changes.

    A ClusterListener: ``on_change`` follows nodes and bound pods; ``sample(t)`` adds a
    point (cluster-wide utilization and fragmentation) when ``t`` is at least one
    spacing past the previous one, so that a long trace keeps at most ``MAX_SAMPLES``.
    """

    def __init__(self, max_samples: int = MAX_SAMPLES) -> None:
        self.allocatable: dict[str, tuple[int, int, int]] = {}
        self.requested: dict[str, list[int]] = {}
        self.samples: list[list[float]] = []
        self.max_samples = max_samples
        self.spacing = 0.0
        self._last = -math.inf
        self._reservoir: list[tuple[int, int]] = []
        self._seen = 0
        self._rng = random.Random(0)

    # ---- following the cluster ----------------------------------------------------------

    def on_change(self, kind: str, old: Any, new: Any) -> None:
        if kind == "Node":
            self._node(old, new)
        elif kind == "Pod":
            if old is not None and old.spec.node_name:
                if new is not None and new.spec is old.spec:
                    return  # a status change
                self._account(old, -1)
            if new is not None and new.spec.node_name:
                self._account(new, 1)
            if old is None and new is not None:
                self._remember(new)

    def _node(self, old: Node | None, new: Node | None) -> None:
        if new is None:
            assert old is not None
            self.allocatable.pop(old.name, None)
            return
        alloc = new.status.allocatable
        self.allocatable[new.name] = (
            int(alloc.get("cpu", 0)),
            int(alloc.get("memory", 0)),
            int(alloc.get("pods", 0)),
        )

    def _account(self, pod: Pod, sign: int) -> None:
        node = pod.spec.node_name
        assert node is not None
        requests = pod_requests(pod)
        totals = self.requested.setdefault(node, [0, 0, 0])
        totals[0] += sign * int(requests.get("cpu", 0))
        totals[1] += sign * int(requests.get("memory", 0))
        totals[2] += sign

    def _remember(self, pod: Pod) -> None:
        """Reservoir sampling of pod requests, for the median pod."""
        requests = pod_requests(pod)
        item = (int(requests.get("cpu", 0)), int(requests.get("memory", 0)))
        self._seen += 1
        if len(self._reservoir) < _RESERVOIR:
            self._reservoir.append(item)
        else:
            slot = self._rng.randrange(self._seen)
            if slot < _RESERVOIR:
                self._reservoir[slot] = item

    # ---- measures -----------------------------------------------------------------------

    def median_pod(self) -> tuple[int, int]:
        """The median cpu (millicores) and memory (bytes) request of the pods seen."""
        if not self._reservoir:
            return (0, 0)
        cpus = sorted(c for c, _ in self._reservoir)
        memories = sorted(m for _, m in self._reservoir)
        middle = len(cpus) // 2
        return cpus[middle], memories[middle]

    def point(self) -> dict[str, float]:
        """Cluster-wide utilization and fragmentation now, in percent."""
        typical_cpu, typical_memory = self.median_pod()
        totals = [0, 0, 0]
        used = [0, 0, 0]
        stranded = [0, 0]
        free_total = [0, 0]
        none = (0, 0, 0)
        for name, alloc in self.allocatable.items():
            req = self.requested.get(name, none)
            for i in range(3):
                totals[i] += alloc[i]
                used[i] += req[i]
            free = [max(alloc[i] - req[i], 0) for i in range(3)]
            free_total[0] += free[0]
            free_total[1] += free[1]
            fits = free[0] >= typical_cpu and free[1] >= typical_memory and free[2] >= 1
            if not fits:
                stranded[0] += free[0]
                stranded[1] += free[1]

        def pct(part: int, whole: int) -> float:
            return round(100.0 * part / whole, 3) if whole else 0.0

        return {
            "cpu": pct(used[0], totals[0]),
            "memory": pct(used[1], totals[1]),
            "pods": pct(used[2], totals[2]),
            "fragmentationCpu": pct(stranded[0], free_total[0]),
            "fragmentationMemory": pct(stranded[1], free_total[1]),
        }

    def sample(self, t: float, *, force: bool = False) -> None:
        """Add a sample at ``t`` if one spacing passed since the last (or ``force``)."""
        if not force and t - self._last < self.spacing:
            return
        p = self.point()
        row = [
            round(t, 3),
            p["cpu"],
            p["memory"],
            p["pods"],
            p["fragmentationCpu"],
            p["fragmentationMemory"],
        ]
        if self.samples and self.samples[-1][0] == row[0]:
            self.samples[-1] = row
        else:
            self.samples.append(row)
        self._last = t
        if len(self.samples) > self.max_samples:
            self.samples = [*self.samples[:-1:2], self.samples[-1]]
            self.spacing = max(self.spacing * 2, (t - self.samples[0][0]) / self.max_samples)

    def summary(self) -> dict[str, Any]:
        """The ``utilization`` entry: the samples' columns, the samples, means and the end."""
        columns = ["t", "cpu", "memory", "pods", "fragmentationCpu", "fragmentationMemory"]
        out: dict[str, Any] = {"columns": columns, "samples": self.samples}
        if self.samples:
            out["final"] = dict(zip(columns[1:], self.samples[-1][1:], strict=True))
            out["mean"] = {
                name: _time_weighted(self.samples, i) for i, name in enumerate(columns[1:], 1)
            }
        cpu, memory = self.median_pod()
        out["medianPod"] = {"cpu": cpu / 1000, "memory": memory}
        return out


def _time_weighted(samples: Sequence[Sequence[float]], column: int) -> float:
    """The mean over trace time of a step series (each sample holds until the next)."""
    span = samples[-1][0] - samples[0][0]
    if span <= 0:
        return round(sum(s[column] for s in samples) / len(samples), 3)
    area = sum(a[column] * (b[0] - a[0]) for a, b in itertools.pairwise(samples))
    return round(area / span, 3)


# ---- comparing two replays -------------------------------------------------------------


def _by_uid(report: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {p["uid"]: p for p in report["pods"]}


def _delta(a: Any, b: Any) -> Any:
    if isinstance(a, int | float) and isinstance(b, int | float):
        return round(b - a, 6)
    return None


def compare_reports(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """Pod by pod and in aggregate: what changed from report ``a`` to report ``b``.

    Pods are matched by uid (a trace replayed twice has the same pods).
    """
    pods_a, pods_b = _by_uid(a), _by_uid(b)
    moved: list[dict[str, Any]] = []
    same = 0
    for uid, pa in pods_a.items():
        pb = pods_b.get(uid)
        if pb is None or not pa.get("ours"):
            continue
        if pa.get("node") == pb.get("node"):
            same += 1
            continue
        moved.append(
            {
                "pod": pa["pod"],
                "uid": uid,
                "recordedNode": pa.get("recordedNode"),
                "a": pa.get("node"),
                "b": pb.get("node"),
                "phaseA": pa.get("phase"),
                "phaseB": pb.get("phase"),
            }
        )
    aggregate: dict[str, Any] = {}
    for name in ("bound", "pending", "preemptions"):
        va, vb = a["summary"].get(name), b["summary"].get(name)
        aggregate[name] = {"a": va, "b": vb, "delta": _delta(va, vb)}
    for name in ("replayed",):
        ta, tb = a["timeToSchedule"].get(name, {}), b["timeToSchedule"].get(name, {})
        for p in ("p50", "p90", "p99"):
            aggregate[f"timeToSchedule.{p}"] = {
                "a": ta.get(p),
                "b": tb.get(p),
                "delta": _delta(ta.get(p), tb.get(p)),
            }
    mean_a = a["utilization"].get("mean", {})
    mean_b = b["utilization"].get("mean", {})
    for name in ("cpu", "memory", "fragmentationCpu", "fragmentationMemory"):
        aggregate[f"utilization.mean.{name}"] = {
            "a": mean_a.get(name),
            "b": mean_b.get(name),
            "delta": _delta(mean_a.get(name), mean_b.get(name)),
        }
    for name in ("agreement",):
        ra, rb = a[name]["ratio"], b[name]["ratio"]
        aggregate["agreement.ratio"] = {"a": ra, "b": rb, "delta": _delta(ra, rb)}
    return {
        "a": a["config"],
        "b": b["config"],
        "samePlacement": same,
        "moved": moved,
        "aggregate": aggregate,
    }


def node_counts(pods: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Pods per node (for the HTML placements view)."""
    counts: dict[str, int] = {}
    for pod in pods:
        node = pod.get("node")
        if node and pod.get("phase") == "Bound":
            counts[node] = counts.get(node, 0) + 1
    return counts
