"""GPU metrics of a cluster as pods come and go: allocation against arrived workload,
fragmentation amount and ratio, unallocated GPUs, failed pods by kind; and the artifact's
tables (a value per percent of arrived workload, 0..130).

# pkg/utils/frag.go (GetNodePodFrag, NodeGpuShareFragAmount, CanNodeHostPodOnGpuMemory)
# pkg/utils/utils.go (IsNodeAccessibleToPodByType)
# pkg/simulator/analysis.go (ClusterGpuFragReport: the [Alloc] and [Report] lines)
# experiments/analysis/merge_{alloc,frag,frag_ratio}_discrete.py (the tables' rounding)

One sample is taken after every event (a pod placed or failed, a pod deleted), as the
artifact logs one ``[Alloc]`` and one ``[Report]`` line per event. A node's fragmentation is
computed again only when the node changed (and memoised by its state, as the artifact does);
the cluster's is the sum of the nodes', so a sample costs a sum over the nodes, not a pass of
the typical pods over every node. Nothing here knows how pods are scheduled: a replay of a
recorded cluster feeds the same ``GpuClusterState``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs
import numpy as np

from ..api import Node, Pod, pod_requests
from ._openb import COUNT, DEVICE_INDEX, MILLI, MODEL, PodShape
from ._typical import TypicalPod

__all__ = [
    "FRAG_KINDS",
    "POD_KINDS",
    "FragMeter",
    "GpuClusterState",
    "GpuCurve",
    "discrete_curve",
    "gpu_indexes",
    "model_accepted",
    "pod_kind",
]

FRAG_KINDS = (
    "q1_lack_both",
    "q2_lack_gpu",
    "q3_satisfied",
    "q4_lack_cpu",
    "xl_satisfied",
    "xr_lack_cpu",
    "no_access",
)
"""How a typical pod meets a node (``FragRatioDataMap``, in its index order)."""
_Q1, _Q2, _Q3, _Q4, _XL, _XR, _NA = range(7)
POD_KINDS = ("PureCpu", "ShareGpu", "OneGpu", "TwoGpu", "FourGpu", "EightGpu", "Others")
"""The artifact's pod kinds (``GpuNumTypeList``)."""
_MEMO_LIMIT = 1 << 20
"""Node states whose fragmentation is kept; the memo starts over past this many."""


def model_accepted(node_model: str, pod_models: str) -> bool:
    """``IsNodeAccessibleToPodByType``: a pod naming no model takes any GPU node; one naming
    models (``|``-separated) takes only those; a node without a model takes no such pod."""
    if not pod_models:
        return True
    if not node_model:
        return False
    named = [m for m in pod_models.split("|") if m]
    return not named or node_model in named


def pod_kind(shape: PodShape) -> str:
    """The pod's kind among ``POD_KINDS`` (by GPU count, sharing pods apart)."""
    count = shape.gpu_count
    if count == 0:
        return "PureCpu"
    if count == 1:
        return "ShareGpu" if shape.gpu_milli < 1000 else "OneGpu"
    return {2: "TwoGpu", 4: "FourGpu", 8: "EightGpu"}.get(count, "Others")


class FragMeter:
    """A node's GPU fragmentation against the typical pods (``NodeGpuShareFragAmount``).

    For each typical pod m with frequency p: if m fits the node (model, CPU, and m's GPU
    count among GPUs with at least m's milli left), the milli left on GPUs too small for m is
    fragment (counted as q2) and the rest q3; otherwise all the node's idle milli is fragment
    of the case m meets (q1, q2, q4, xl, xr, no_access). CPU-only typical pods count the idle
    milli as xl or xr. The amounts are p-weighted; fragmentation is everything but q3.
    """

    def __init__(self, typical: Sequence[TypicalPod]) -> None:
        self.typical = [
            (t.shape, t.percentage) for t in typical if 0 <= t.percentage <= 1
        ]  # frag.go skips a frequency outside [0, 1]
        self._memo: dict[tuple[int, tuple[int, ...], str], tuple[float, ...]] = {}

    def node_amounts(self, cpu_left: int, gpu_left: Sequence[int], model: str) -> tuple[float, ...]:
        """The seven amounts (``FRAG_KINDS`` order) of a node in this state."""
        key = (cpu_left, tuple(sorted(gpu_left, reverse=True)), model)
        found = self._memo.get(key)
        if found is not None:
            return found
        if len(self._memo) >= _MEMO_LIMIT:
            self._memo.clear()
        out = self._amounts(cpu_left, gpu_left, model)
        self._memo[key] = out
        return out

    def _amounts(self, cpu_left: int, gpu_left: Sequence[int], model: str) -> tuple[float, ...]:
        data = [0.0] * len(FRAG_KINDS)
        idle = sum(gpu_left)
        for shape, freq in self.typical:
            kind = _meets(shape, cpu_left, gpu_left, model)
            if kind == _Q3:
                small = sum(left for left in gpu_left if left < shape.gpu_milli)
                data[_Q2] += freq * float(small)
                data[_Q3] += freq * float(idle - small)
            else:
                data[kind] += freq * float(idle)
        return tuple(data)


def _meets(shape: PodShape, cpu_left: int, gpu_left: Sequence[int], model: str) -> int:
    """``GetNodePodFrag``: which of the seven cases the typical pod is in on the node."""
    cpu_fits = cpu_left >= shape.cpu_milli
    if shape.gpu_milli == 0:
        return _XL if cpu_fits else _XR
    if not model_accepted(model, shape.gpu_model):
        return _NA
    if _hosts(shape, gpu_left):
        return _Q3 if cpu_fits else _Q4
    return _Q2 if cpu_fits else _Q1


def _hosts(shape: PodShape, gpu_left: Sequence[int]) -> bool:
    """``CanNodeHostPodOnGpuMemory``: enough GPUs with the pod's milli left."""
    wanted = shape.gpu_count
    for left in gpu_left:
        if left >= shape.gpu_milli:
            wanted -= 1
            if wanted <= 0:
                return True
    return False


class GpuClusterState:
    """CPU and per-GPU milli left on each node, kept from the pods bound there.

    Args:
        nodes: the cluster's nodes (GPU count from ``alibabacloud.com/gpu-count``, model from
            the ``alibabacloud.com/gpu-card-model`` label, CPU from allocatable).
        meter: computes the nodes' fragmentation (None: no fragmentation is measured).
    """

    def __init__(self, nodes: Sequence[Node], meter: FragMeter | None = None) -> None:
        self.names = [n.name for n in nodes]
        self.index = {name: i for i, name in enumerate(self.names)}
        self.models = [n.labels.get(MODEL, "") for n in nodes]
        self.cpu_capacity = [int(n.status.allocatable.get("cpu", 0)) for n in nodes]
        self.cpu_left = list(self.cpu_capacity)
        self.gpus = [int(n.status.capacity.get(COUNT, 0)) for n in nodes]
        self.gpu_left = [[1000] * g for g in self.gpus]
        self.total_gpus = sum(self.gpus)
        self.used_gpu_milli = 0
        self.meter = meter
        self.frag = np.zeros((len(nodes), len(FRAG_KINDS)))
        """Each node's amounts (``FRAG_KINDS`` columns), kept in step by ``refresh``."""
        self._stale: set[int] = set(range(len(nodes)))

    def bind(self, pod: Pod, node_name: str) -> None:
        """Account a pod bound to the node (its GPUs from the ``gpu-index`` annotation)."""
        self._account(pod, node_name, -1)

    def unbind(self, pod: Pod, node_name: str) -> None:
        """Give back what a pod bound to the node held (it was deleted)."""
        self._account(pod, node_name, 1)

    def _account(self, pod: Pod, node_name: str, sign: int) -> None:
        i = self.index.get(node_name)
        if i is None:
            raise ValueError(f"pod {pod.key}: bound to node {node_name}, which is not known")
        self.cpu_left[i] += sign * pod_requests(pod).get("cpu", 0)
        milli = _annotation_milli(pod)
        if milli > 0:
            left = self.gpu_left[i]
            for gpu in gpu_indexes(pod, len(left)):
                left[gpu] += sign * milli
                self.used_gpu_milli -= sign * milli
        self._stale.add(i)

    def refresh(self) -> None:
        """Recompute the fragmentation of the nodes that changed."""
        meter = self.meter
        if meter is not None:
            frag = self.frag
            for i in self._stale:
                frag[i] = meter.node_amounts(self.cpu_left[i], self.gpu_left[i], self.models[i])
        self._stale.clear()

    def used_nodes_and_gpus(self) -> tuple[int, int]:
        """Nodes with anything allocated, and all the GPUs of those nodes (``[Alloc]``)."""
        nodes = gpus = 0
        for i, left in enumerate(self.gpu_left):
            if self.cpu_left[i] < self.cpu_capacity[i] or any(m != 1000 for m in left):
                nodes += 1
                gpus += self.gpus[i]
        return nodes, gpus

    def fully_free_gpus(self) -> int:
        """GPUs with nothing allocated on them."""
        return sum(left.count(1000) for left in self.gpu_left)


def _annotation_milli(pod: Pod) -> int:
    try:
        return max(0, int(pod.metadata.annotations.get(MILLI, "0")))
    except ValueError:
        return 0


def gpu_indexes(pod: Pod, gpus: int) -> list[int]:
    """The GPUs a bound GPU pod holds (``alibabacloud.com/gpu-index``, ``-``-separated)."""
    text = pod.metadata.annotations.get(DEVICE_INDEX, "")
    try:
        out = [int(part) for part in text.split("-")] if text else []
    except ValueError:
        out = []
    if not out or any(not 0 <= g < gpus for g in out) or len(set(out)) != len(out):
        raise ValueError(
            f"pod {pod.key}: annotation {DEVICE_INDEX}: {text!r} does not name GPUs of its "
            f"node (0..{gpus - 1})"
        )
    return out


@attrs.define(eq=False)
class GpuCurve:
    """One sample per event: what the artifact's ``[Alloc]`` and ``[Report]`` lines hold."""

    total_gpus: int
    arrived_gpu_milli: list[int] = attrs.field(factory=list)
    used_gpu_milli: list[int] = attrs.field(factory=list)
    frag_gpu_milli: list[float] = attrs.field(factory=list)
    """Fragmentation (all but q3), in GPU milli."""
    frag_ratio: list[float] = attrs.field(factory=list)
    """Fragmentation as a percent of the idle GPU milli."""
    q124_ratio: list[float] = attrs.field(factory=list)

    def sample(self, state: GpuClusterState, arrived_gpu_milli: int) -> None:
        """Record the cluster as it is now (after an event)."""
        state.refresh()
        self.arrived_gpu_milli.append(arrived_gpu_milli)
        self.used_gpu_milli.append(state.used_gpu_milli)
        if state.meter is None:
            return
        sums = state.frag.sum(axis=0)
        idle = float(sums.sum())
        frag = float(sums[_Q1] + sums[_Q2] + sums[_Q4] + sums[_XL] + sums[_XR] + sums[_NA])
        q124 = float(sums[_Q1] + sums[_Q2] + sums[_Q4])
        self.frag_gpu_milli.append(frag)
        self.frag_ratio.append(100 * frag / idle if idle else float("nan"))
        self.q124_ratio.append(100 * q124 / idle if idle else float("nan"))

    def allocation(self) -> dict[int, float]:
        """``analysis_allo_discrete``: GPU allocation (% of capacity) per arrived percent."""
        total = self.total_gpus
        alloc = np.array([round(u / total / 10, 2) for u in self.used_gpu_milli])
        return {a: float(np.round(v, 2)) for a, v in self._discrete(alloc).items()}

    def fragmentation(self) -> dict[int, float]:
        """``analysis_frag_discrete``: fragmentation (% of GPU capacity) per arrived percent."""
        logged = np.array([_logged(f) for f in self.frag_gpu_milli])
        total = np.int64(self.total_gpus)
        return {
            a: float(np.round(100 * m / 1000 / total, 2)) for a, m in self._discrete(logged).items()
        }

    def fragmentation_ratio(self) -> dict[int, float]:
        """``analysis_frag_ratio_discrete``: fragmentation (% of idle) per arrived percent."""
        logged = np.array([_logged(r) for r in self.frag_ratio])
        return {a: float(m) for a, m in self._discrete(logged).items()}

    def _discrete(self, values: np.ndarray) -> dict[int, np.float64]:
        total = self.total_gpus
        arrived = np.array([round(a / total / 10, 0) for a in self.arrived_gpu_milli])
        return discrete_curve(arrived, values)


def _logged(value: float) -> float:
    """The value as the artifact's log line prints it (``%.2f``) and its parser reads it."""
    return float(f"{value:.2f}")


def discrete_curve(
    arrived_pct: np.ndarray, values: np.ndarray, points: Iterable[int] = range(131)
) -> dict[int, np.float64]:
    """The mean of ``values`` over the samples whose (rounded) arrived percent is each point;
    where none is, over the samples within one percent of it; no entry where none is either.
    The mean is pandas': numpy's (pairwise) sum over the count, NaN left out."""
    out: dict[int, np.float64] = {}
    for point in points:
        chosen = values[arrived_pct == point]
        if chosen.size == 0:
            chosen = values[(arrived_pct >= point - 1) & (arrived_pct <= point + 1)]
            if chosen.size == 0:
                continue
        out[point] = _pandas_mean(chosen)
    return out


def _pandas_mean(values: np.ndarray) -> np.float64:
    """``Series.mean()``: NaN counts as 0 in the (pairwise) sum and not in the count."""
    missing = np.isnan(values)
    if not missing.any():
        return np.float64(np.sum(values) / values.size)
    count = values.size - int(missing.sum())
    if count == 0:
        return np.float64(np.nan)
    return np.float64(np.sum(np.where(missing, 0.0, values)) / count)
