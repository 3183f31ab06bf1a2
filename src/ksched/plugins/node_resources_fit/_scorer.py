"""The resource allocation scorer, shared with NodeResourcesBalancedAllocation.

# pkg/scheduler/framework/plugins/noderesources/resource_allocation.go,
# least_allocated.go, most_allocated.go, requested_to_capacity_ratio.go
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ...api import Pod, pod_requests
from ...framework import MAX_NODE_SCORE, NodeInfo, trunc_div
from ...framework.batch import IntArray, NodeTable
from ._args import (
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from ._constants import (
    CPU,
    EPHEMERAL_STORAGE,
    MAX_CUSTOM_PRIORITY_SCORE,
    MAX_UTILIZATION,
    MEMORY,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
)
from ._names import (
    is_scalar_resource_name,
)

# ---- the resource allocation scorer (shared with NodeResourcesBalancedAllocation) ---------

_KIND_CPU, _KIND_MEMORY, _KIND_EPHEMERAL, _KIND_SCALAR, _KIND_OTHER = range(5)


def _kind(name: str) -> int:
    if name == CPU:
        return _KIND_CPU
    if name == MEMORY:
        return _KIND_MEMORY
    if name == EPHEMERAL_STORAGE:
        return _KIND_EPHEMERAL
    return _KIND_SCALAR if is_scalar_resource_name(name) else _KIND_OTHER


class ResourceAllocationScorer:
    """Gathers, per configured resource, the node's allocatable and what it would have
    requested with the pod on it; a strategy turns them into a score.

    ``use_requested``: count the node's actual cpu/memory requests (BalancedAllocation)
    instead of the non-zero ones (100m / 200Mi for a container that asks none).
    """

    __slots__ = ("_names", "_plan", "_use_requested", "resources")

    def __init__(self, resources: Sequence[ResourceSpec], use_requested: bool) -> None:
        self.resources = tuple(resources)
        self._names = tuple(r.name for r in self.resources)
        self._plan = tuple((_kind(r.name), r.name, r.weight) for r in self.resources)
        self._use_requested = use_requested

    def pod_request_list(self, pod: Pod) -> tuple[int, ...]:
        """The pod's request of each configured resource, in ``resources`` order."""
        reqs = pod_requests(pod, non_zero=not self._use_requested)
        return tuple(reqs.get(name, 0) for name in self._names)

    def gather(
        self, node_info: NodeInfo, pod_request_list: Sequence[int]
    ) -> list[tuple[int, int, int]]:
        """``(requested with the pod, allocatable, weight)`` of each configured resource the
        node has; a scalar resource the pod does not ask for is left out too."""
        if not self._plan:
            raise RuntimeError("resources not found")
        alloc = node_info.allocatable
        actual = node_info.requested
        usage = actual if self._use_requested else node_info.non_zero_requested
        out = []
        for (kind, name, weight), pod_req in zip(self._plan, pod_request_list, strict=True):
            if kind == _KIND_CPU:
                a, r = alloc.milli_cpu, usage.milli_cpu + pod_req
            elif kind == _KIND_MEMORY:
                a, r = alloc.memory, usage.memory + pod_req
            elif kind == _KIND_EPHEMERAL:
                a, r = alloc.ephemeral_storage, actual.ephemeral_storage + pod_req
            elif kind == _KIND_SCALAR and pod_req != 0:
                a = alloc.scalar.get(name, 0)
                r = actual.scalar.get(name, 0) + pod_req
            else:
                continue
            if a != 0:
                out.append((r, a, weight))
        return out

    def gather_columns(
        self, table: NodeTable, rows: IntArray, pod_request_list: Sequence[int]
    ) -> list[tuple[IntArray, IntArray, int]]:
        """:meth:`gather` for many nodes: ``(requested with the pod, allocatable, weight)``
        columns over ``rows``; an allocatable of 0 marks the resource absent on that node."""
        if not self._plan:
            raise RuntimeError("resources not found")
        cpu_usage = table.req_cpu if self._use_requested else table.nonzero_cpu
        memory_usage = table.req_memory if self._use_requested else table.nonzero_memory
        out = []
        for (kind, name, weight), pod_req in zip(self._plan, pod_request_list, strict=True):
            if kind == _KIND_CPU:
                a, r = table.alloc_cpu.take(rows), cpu_usage.take(rows)
            elif kind == _KIND_MEMORY:
                a, r = table.alloc_memory.take(rows), memory_usage.take(rows)
            elif kind == _KIND_EPHEMERAL:
                a, r = table.alloc_ephemeral.take(rows), table.req_ephemeral.take(rows)
            elif kind == _KIND_SCALAR and pod_req != 0:
                alloc_col, req_col = table.scalar(name)
                a, r = alloc_col.take(rows), req_col.take(rows)
            else:
                continue
            r += pod_req  # a fresh array from take(): add in place
            out.append((r, a, weight))
        return out


ScoreFn = Callable[[Sequence[tuple[int, int, int]]], int]
"""``score([(requested, allocatable, weight), ...]) -> 0..100``."""


def least_resource_score(entries: Sequence[tuple[int, int, int]]) -> int:
    """Favours free room: weighted mean of (allocatable - requested) / allocatable."""
    node_score = weight_sum = 0
    for req, cap, w in entries:
        if req <= cap:
            node_score += (cap - req) * MAX_NODE_SCORE // cap * w
        weight_sum += w
    return node_score // weight_sum if weight_sum else 0


def least_resource_scores(columns: Sequence[tuple[IntArray, IntArray, int]]) -> IntArray:
    """:func:`least_resource_score` over columns from ``gather_columns``."""
    if all(cap.all() for _, cap, _ in columns):
        return _least_resource_scores_complete(columns)
    node_score: IntArray = np.zeros(len(columns[0][0]), dtype=np.int64)
    weight_sum = np.zeros_like(node_score)
    for req, cap, w in columns:
        present = cap != 0
        free = np.where(present & (req <= cap), cap - req, 0)
        node_score += free * MAX_NODE_SCORE // np.where(present, cap, 1) * w
        weight_sum += present * w
    return np.where(weight_sum > 0, node_score // np.maximum(weight_sum, 1), 0)


def _least_resource_scores_complete(columns: Sequence[tuple[IntArray, IntArray, int]]) -> IntArray:
    """:func:`least_resource_scores` when every node has every resource (no allocatable
    of 0, the common case): the same integer arithmetic in place, no masks."""
    node_score: IntArray | None = None
    weight_sum = 0
    for req, cap, w in columns:
        free = cap - req
        np.maximum(free, 0, out=free)  # requested beyond the allocatable scores 0
        free *= MAX_NODE_SCORE
        free //= cap
        if w != 1:
            free *= w
        if node_score is None:
            node_score = free
        else:
            node_score += free
        weight_sum += w
    assert node_score is not None
    if weight_sum <= 0:
        return np.zeros(len(node_score), dtype=np.int64)
    node_score //= weight_sum
    return node_score


def most_resource_scores(columns: Sequence[tuple[IntArray, IntArray, int]]) -> IntArray:
    """:func:`most_resource_score` over columns from ``gather_columns``."""
    node_score: IntArray = np.zeros(len(columns[0][0]), dtype=np.int64)
    weight_sum = np.zeros_like(node_score)
    for req, cap, w in columns:
        present = cap != 0
        used = np.where(present, np.minimum(req, cap), 0)
        node_score += used * MAX_NODE_SCORE // np.where(present, cap, 1) * w
        weight_sum += present * w
    return np.where(weight_sum > 0, node_score // np.maximum(weight_sum, 1), 0)


def most_resource_score(entries: Sequence[tuple[int, int, int]]) -> int:
    """Favours full nodes: weighted mean of requested / allocatable (capped at 1)."""
    node_score = weight_sum = 0
    for req, cap, w in entries:
        # requested may exceed the allocatable: pods without requests count non-zero.
        node_score += (req if req < cap else cap) * MAX_NODE_SCORE // cap * w
        weight_sum += w
    return node_score // weight_sum if weight_sum else 0


def broken_linear_function(points: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """The piecewise-linear function through ``(utilization, score)`` points, flat outside."""
    pts = tuple(points)

    def f(p: int) -> int:
        for i, (u, s) in enumerate(pts):
            if p <= u:
                if i == 0:
                    return s
                u0, s0 = pts[i - 1]
                return s0 + trunc_div((s - s0) * (p - u0), u - u0)
        return pts[-1][1]

    return f


def requested_to_capacity_ratio_scorer(shape: Sequence[UtilizationShapePoint]) -> ScoreFn:
    """Scores each resource's utilization on the shape; weighted mean of positive scores."""
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    raw = broken_linear_function([(p.utilization, p.score * scale) for p in shape])
    at_full = raw(MAX_UTILIZATION)

    def score(entries: Sequence[tuple[int, int, int]]) -> int:
        node_score = weight_sum = 0
        for req, cap, w in entries:
            if req > cap:
                resource_score = at_full
            else:
                resource_score = raw(req * MAX_UTILIZATION // cap if req > 0 else 0)
            if resource_score > 0:
                node_score += resource_score * w
                weight_sum += w
        if weight_sum == 0:
            return 0
        # round half away from zero (Go math.Round) of node_score / weight_sum, both >= 0
        return (2 * node_score + weight_sum) // (2 * weight_sum)

    return score


def strategy_batch_scorer(
    strategy: ScoringStrategy,
) -> Callable[[Sequence[tuple[IntArray, IntArray, int]]], IntArray] | None:
    if strategy.type == MOST_ALLOCATED:
        return most_resource_scores
    if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        return None
    return least_resource_scores


def strategy_scorer(strategy: ScoringStrategy) -> ScoreFn:
    if strategy.type == MOST_ALLOCATED:
        return most_resource_score
    if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        return requested_to_capacity_ratio_scorer(strategy.shape or ())
    return least_resource_score
