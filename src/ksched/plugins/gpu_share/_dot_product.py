"""02-DotProd: Tetris's alignment score between what a node has left and what a pod asks.

# hkust-adsl/kubernetes-scheduler-simulator pkg/simulator/plugin/dot_product_score.go
# (calculateDotProductScore), pkg/utils/utils.go (GenerateSchedulingMatchGroups,
# NormalizeVector, CalculateVectorDotProduct), pkg/type/resource.go
# (ToVirtualNodeResourceList, ToVirtualPodResourceList, ToFormalizedGpuResourceList)
The node and the pod become vectors (CPU, then GPU in one of four shapes: ``merge`` all GPUs
in one dimension, ``share``/``divide`` one virtual node per usable GPU or per set of free
GPUs, ``extend`` one dimension per GPU group), normalized (by the node's capacity, the pod's
request or the largest machine); the score is 100 * (1 - dot / dimensions), the best over
the virtual nodes, whose GPUs are the policy's GPU choice. The published experiments use
``merge`` with ``max`` and the ``best`` GPU choice.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import attrs
import numpy as np

from ...api import Pod
from ...framework import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    CycleState,
    Handle,
    NodeInfo,
    parse_plugin_args,
)
from ...framework.batch import IntArray, NodeTable
from ._allocate import exclusive_gpus
from ._ledger import NodeGpus
from ._names import DOT_PRODUCT_SCORE, MAX_SPEC_CPU, MAX_SPEC_GPU, MILLI
from ._policy import GpuPolicy, cpu_left
from ._request import GpuRequest, gpu_request

__all__ = ["DotProductScore", "DotProductScoreArgs", "dot_product_score"]

DimExtMethod = Literal["merge", "share", "divide", "extend"]
NormMethod = Literal["node", "pod", "max"]
Gpus = tuple[int, ...]


@attrs.frozen(kw_only=True)
class DotProductScoreArgs:
    """``pluginConfig`` args of DotProductScore (the artifact's GpuPluginCfg)."""

    dim_ext_method: DimExtMethod = "merge"
    norm_method: NormMethod = "max"


def _fdiv(a: float, b: float) -> float:
    """IEEE division, as Go's float64 ``/`` (x/0 is infinite, 0/0 NaN)."""
    if b != 0.0:
        return a / b
    if a == 0.0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _formalized(free: Sequence[int]) -> list[tuple[int, Gpus]]:
    """ToFormalizedGpuResourceList: each partly used GPU, then the free GPUs as one."""
    idle: list[int] = []
    out: list[tuple[int, Gpus]] = []
    for device, left in enumerate(free):
        if left == MILLI:
            idle.append(device)
        elif left > 0:
            out.append((left, (device,)))
    if idle:
        out.append((len(idle) * MILLI, tuple(idle)))
    return out


def _virtual_nodes(
    method: DimExtMethod, node_cpu: int, gpus: NodeGpus, request: GpuRequest
) -> list[tuple[list[float], Gpus | None]]:
    """ToVirtualNodeResourceList (empty when the node lacks the pod's CPU)."""
    if node_cpu < request.cpu:
        return []
    asked, total = request.total_milli, gpus.total_free
    if method == "merge":
        return [([float(node_cpu), float(total)], None)]
    if method == "extend":
        return [([float(node_cpu)] + [float(left) for left, _ in _formalized(gpus.free)], None)]
    share = method == "share"
    out: list[tuple[list[float], Gpus | None]] = []
    if asked < MILLI:
        for device, left in enumerate(gpus.free):
            if left >= MILLI or left < asked:
                continue
            cpu = float(node_cpu) if share else _fdiv(float(node_cpu * left), float(total))
            out.append(([cpu, float(left)], (device,)))
    idle = gpus.fully_free
    if asked <= idle * MILLI:
        chosen = exclusive_gpus(gpus.free, asked)
        cpu = float(node_cpu) if share else _fdiv(float(node_cpu * idle * MILLI), float(total))
        out.append(([cpu, float(idle * MILLI)], chosen))
    return out


def _virtual_pods(
    method: DimExtMethod, gpus: NodeGpus, request: GpuRequest
) -> list[tuple[list[float], Gpus | None]]:
    """ToVirtualPodResourceList."""
    asked = request.total_milli
    if method != "extend":
        return [([float(request.cpu), float(asked)], None)]
    groups = _formalized(gpus.free)
    out: list[tuple[list[float], Gpus | None]] = []
    for i, (left, devices) in enumerate(groups):
        if left < asked:
            continue
        vector = [float(request.cpu)] + [
            float(asked) if j == i else 0.0 for j in range(len(groups))
        ]
        chosen = devices if left < MILLI else exclusive_gpus(gpus.free, asked)
        out.append((vector, chosen))
    return out


def _scale(
    norm: NormMethod, method: DimExtMethod, capacity_cpu: int, gpus: NodeGpus, request: GpuRequest
) -> list[float]:
    """The normalizing vector (GenerateSchedulingMatchGroups)."""
    groups = len(_formalized(gpus.free)) if method == "extend" else 1
    if norm == "node":
        return [float(capacity_cpu)] + [float(gpus.gpu_count * MILLI)] * groups
    if norm == "pod":
        return [float(request.cpu)] + [float(request.total_milli)] * groups
    return [float(MAX_SPEC_CPU)] + [float(MAX_SPEC_GPU)] * groups


def _normalized(vector: list[float], scale: list[float]) -> list[float]:
    """NormalizeVector (left as it is when the lengths differ)."""
    if not scale or not vector or len(scale) != len(vector):
        return list(vector)
    return [v / s if s > 0 else 0.0 for v, s in zip(vector, scale, strict=True)]


def _dot(a: list[float], b: list[float]) -> float:
    """CalculateVectorDotProduct (-1 for vectors of different or no length)."""
    if not a or not b or len(a) != len(b):
        return -1.0
    out = 0.0
    for x, y in zip(a, b, strict=True):
        out += x * y
    return out


def dot_product_score(
    args: DotProductScoreArgs, node_info: NodeInfo, gpus: NodeGpus, request: GpuRequest
) -> tuple[int, Gpus | None]:
    """calculateDotProductScore: the score and the GPUs of the best virtual node."""
    method, norm = args.dim_ext_method, args.norm_method
    scale = _scale(norm, method, node_info.allocatable.milli_cpu, gpus, request)
    best, chosen = -1.0, None
    for node_vector, node_gpus in _virtual_nodes(method, cpu_left(node_info), gpus, request):
        for pod_vector, pod_gpus in _virtual_pods(method, gpus, request):
            current = _dot(_normalized(node_vector, scale), _normalized(pod_vector, scale))
            if current == -1:
                continue
            current /= float(len(pod_vector))
            if norm == "pod":
                current = math.tanh(current / 10)
            current = 1 - current
            if best < current:
                best = current
                chosen = pod_gpus if method == "extend" else node_gpus
    if best == -1:
        return MIN_NODE_SCORE, None
    return int(float(MAX_NODE_SCORE) * best), chosen


class DotProductScore(GpuPolicy):
    """02-DotProd (see the module)."""

    name = DOT_PRODUCT_SCORE

    def __init__(self, args: DotProductScoreArgs, handle: Handle) -> None:
        super().__init__(handle)
        self.args = args
        self.gpu_selection = "best" if args.dim_ext_method == "merge" else self.name

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> DotProductScore:
        return cls(parse_plugin_args(DotProductScoreArgs, args, plugin=cls.name), handle)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        request = gpu_request(pod)
        return dot_product_score(self.args, node_info, self.node_gpus(node_info), request)[0]

    def score_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray | None:
        """``merge`` with ``max`` or ``node`` norms, over the rows at once."""
        args = self.args
        if args.dim_ext_method != "merge" or args.norm_method == "pod":
            return None
        request = gpu_request(pod)
        cols = self.columns(table)
        node_cpu = table.free_cpu[rows]
        node_vec = (node_cpu.astype(np.float64), cols.total[rows].astype(np.float64))
        pod_vec = (float(request.cpu), float(request.total_milli))
        if args.norm_method == "max":
            scale = (
                np.full(len(rows), float(MAX_SPEC_CPU)),
                np.full(len(rows), float(MAX_SPEC_GPU)),
            )
        else:
            scale = (
                table.alloc_cpu[rows].astype(np.float64),
                (cols.count[rows] * MILLI).astype(np.float64),
            )
        dot = np.zeros(len(rows), dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            for node_part, pod_part, by in zip(node_vec, pod_vec, scale, strict=True):
                positive = by > 0
                a = np.where(positive, node_part / np.where(positive, by, 1.0), 0.0)
                b = np.where(positive, pod_part / np.where(positive, by, 1.0), 0.0)
                dot = dot + a * b
            current = 1 - dot / 2.0
            scored = (node_cpu >= request.cpu) & (dot != -1) & (current > -1)
            out: IntArray = np.where(
                scored, np.trunc(float(MAX_NODE_SCORE) * np.where(scored, current, 0.0)), 0
            ).astype(np.int64)
        return out

    def select_gpus(
        self, pod: Pod, request: GpuRequest, node_info: NodeInfo, gpus: NodeGpus
    ) -> Gpus | None:
        if self.gpu_selection != self.name:
            return super().select_gpus(pod, request, node_info, gpus)
        return dot_product_score(self.args, node_info, gpus, request)[1] or None
