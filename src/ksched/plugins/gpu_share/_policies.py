"""Four of the six GPU Score policies: Random, GpuClustering, GpuPacking, BestFit.

# hkust-adsl/kubernetes-scheduler-simulator pkg/simulator/plugin/random_score.go,
# gpu_clustering_score.go, gpu_packing_score.go (getPackingScore), best_fit_score.go
# (getBestFitScore), plugin_utils.go (NormalizeScore)
Integer arithmetic truncates toward zero as Go's does; float arithmetic is done in the
artifact's order, so every score equals the artifact's bit for bit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ...api import Pod
from ...framework import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    Code,
    CycleState,
    Handle,
    NodeInfo,
    Status,
    trunc_div,
)
from ...framework.batch import IntArray, NodeTable
from ._ledger import NodeGpus
from ._names import (
    BEST_FIT_SCORE,
    GPU_CLUSTERING_SCORE,
    GPU_PACKING_SCORE,
    MAX_SPEC_CPU,
    MAX_SPEC_GPU,
    MILLI,
    RANDOM_SCORE,
)
from ._plugin import model_mask
from ._policy import GpuPolicy, cpu_left
from ._request import GpuRequest, accessible, gpu_request

__all__ = [
    "BestFitScore",
    "GpuClusteringScore",
    "GpuPackingScore",
    "GpuScoreError",
    "RandomScore",
    "normalize_min_max",
]


class GpuScoreError(ValueError):
    """A node the policy cannot score (the artifact's Error status): the attempt fails."""


def _not_accessible(node_name: str, request: GpuRequest) -> GpuScoreError:
    return GpuScoreError(
        f"Node ({node_name}) does not match GPU type request of pod ({request.model})"
    )


def _trunc_div_array(a: IntArray, b: int) -> IntArray:
    """Go's integer ``/`` (toward zero) of an int64 array by a positive ``b``."""
    out: IntArray = np.where(a >= 0, a // b, -((-a) // b))
    return out


def _rows_accessible(table: NodeTable, rows: IntArray, request: GpuRequest) -> bool:
    """Whether every row's node has a GPU model the pod accepts (the others raise)."""
    return not request.model or bool(model_mask(table, request)[rows].all())


# ---- Random ---------------------------------------------------------------------------

RANDOM_STATE_KEY = "PreScore-RandomScorePlugin"


class RandomScore(GpuPolicy):
    """01-Random: one feasible node drawn at PreScore scores 100, the others 0."""

    name = RANDOM_SCORE
    gpu_selection = "random"

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> RandomScore:
        return cls(handle)

    def sign_pod(self, pod: Pod) -> Status:  # type: ignore[override]  # refuses to sign
        return Status(Code.UNSCHEDULABLE, ("RandomScore draws a node per pod",))

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        if nodes:
            state.write(RANDOM_STATE_KEY, nodes[self._rng().randrange(len(nodes))].name)
        return None

    def _chosen(self, state: CycleState) -> str:
        chosen: str | None = state.get(RANDOM_STATE_KEY)
        if chosen is None:
            raise LookupError(f'reading "{RANDOM_STATE_KEY}" from cycleState: not found')
        return chosen

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return MAX_NODE_SCORE if node_info.name == self._chosen(state) else MIN_NODE_SCORE

    def score_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray:
        row = table.index.get(self._chosen(state), -1)
        out: IntArray = np.where(rows == row, MAX_NODE_SCORE, MIN_NODE_SCORE).astype(np.int64)
        return out


# ---- GpuClustering ----------------------------------------------------------------------


def clustering_score(gpus: NodeGpus, request: GpuRequest) -> int:
    """GpuClusteringScore.Score for a node the pod may use."""
    cls = request.affinity
    if cls is None:
        return MIN_NODE_SCORE  # no GPU asked for
    base = trunc_div(MAX_NODE_SCORE // 4 * (MAX_SPEC_GPU - gpus.total_free), MAX_SPEC_GPU)
    classes = gpus.affinity
    if classes.get(cls, 0) > 0:
        return base + (MAX_NODE_SCORE * 3 // 4 if len(classes) == 1 else MAX_NODE_SCORE * 2 // 4)
    return base + (MAX_NODE_SCORE // 4 if not classes else 0)


class GpuClusteringScore(GpuPolicy):
    """03-GpuClustering: GPU pods go where pods of their own class already are."""

    name = GPU_CLUSTERING_SCORE

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> GpuClusteringScore:
        return cls(handle)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        request = gpu_request(pod)
        gpus = self.node_gpus(node_info)
        if not accessible(gpus.model, request):
            raise GpuScoreError("failed to get nodeRes or podRes")
        return clustering_score(gpus, request)

    def score_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray | None:
        request = gpu_request(pod)
        if not _rows_accessible(table, rows, request):
            return None
        cls = request.affinity
        if cls is None:
            return np.zeros(len(rows), dtype=np.int64)
        cols = self.columns(table)
        count = cols.class_count[rows]
        if len(rows) and int(count.min()) < 0:
            return None  # too many classes on a node for the bitmask: per node
        bit = cols.class_bit(cls)
        has = (
            np.zeros(len(rows), dtype=np.bool_)
            if bit is None
            else ((cols.classes[rows] >> bit) & 1).astype(np.bool_)
        )
        base = _trunc_div_array(
            MAX_NODE_SCORE // 4 * (MAX_SPEC_GPU - cols.total[rows]), MAX_SPEC_GPU
        )
        bonus = np.where(
            has,
            np.where(count == 1, MAX_NODE_SCORE * 3 // 4, MAX_NODE_SCORE * 2 // 4),
            np.where(count == 0, MAX_NODE_SCORE // 4, 0),
        )
        out: IntArray = (base + bonus).astype(np.int64)
        return out

    def uniform_score(self, state: CycleState, pod: Pod, table: NodeTable) -> int | None:
        """0 on every node for a pod without GPUs (and without a model annotation)."""
        request = gpu_request(pod)
        return MIN_NODE_SCORE if request.affinity is None and not request.model else None


# ---- GpuPacking -------------------------------------------------------------------------


def packing_score(gpus: NodeGpus, request: GpuRequest, pod: Pod, node_name: str) -> int:
    """getPackingScore: shared GPUs first, then free GPUs of used nodes, then free nodes."""
    free = gpus.free
    fully_free = gpus.fully_free
    if fully_free == gpus.gpu_count:  # case 3: every GPU is free
        return max(MAX_NODE_SCORE // 3 - fully_free, fully_free)
    wanted = request.gpu_count
    used_fully_free = 0
    chosen: list[int] = []
    for device in sorted(range(len(free)), key=free.__getitem__):  # least free first
        if wanted == 0:
            break
        if request.milli <= free[device]:
            wanted -= 1
            chosen.append(device)
            if free[device] == MILLI:
                used_fully_free += 1
    if wanted != 0:
        raise GpuScoreError(f"failed to schedule pod({pod.key}) on node({node_name})")
    if used_fully_free > 0:  # case 2: free GPUs of a used node
        return max(MAX_NODE_SCORE // 2 - used_fully_free, MAX_NODE_SCORE // 3)
    ratio = sum(trunc_div(free[d] * 100, MILLI) for d in chosen)  # case 1: shared GPUs
    return max(MAX_NODE_SCORE - trunc_div(ratio, 10), MAX_NODE_SCORE // 2)


class GpuPackingScore(GpuPolicy):
    """04-GpuPacking: fill partly used GPUs, then free GPUs of used nodes, then free nodes."""

    name = GPU_PACKING_SCORE

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> GpuPackingScore:
        return cls(handle)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        request = gpu_request(pod)
        if request.milli <= 0:
            return MIN_NODE_SCORE
        gpus = self.node_gpus(node_info)
        if not accessible(gpus.model, request):
            raise _not_accessible(node_info.name, request)
        return packing_score(gpus, request, pod, node_info.name)

    def score_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray | None:
        request = gpu_request(pod)
        if request.milli <= 0:
            return np.zeros(len(rows), dtype=np.int64)
        if not _rows_accessible(table, rows, request):
            return None
        cols = self.columns(table)
        count, full = cols.count[rows], cols.full[rows]
        every_free = full == count
        if cols.width == 0:
            out0: IntArray = np.maximum(MAX_NODE_SCORE // 3 - full, full)
            return out0
        ordered = cols.sorted_free[rows]  # least free first; PAD (past the GPUs) never fits
        eligible = ordered >= request.milli
        taken = np.cumsum(eligible, axis=1)
        if bool((taken[:, -1] < request.gpu_count)[~every_free].any()):
            return None  # a node short of GPUs: the per-node method says so
        chosen = eligible & (taken <= request.gpu_count)
        used_full = (chosen & (ordered == MILLI)).sum(axis=1)
        ratio = np.where(chosen, ordered * 100 // MILLI, 0).sum(axis=1)  # each >= 0
        out: IntArray = np.where(
            every_free,
            np.maximum(MAX_NODE_SCORE // 3 - full, full),
            np.where(
                used_full > 0,
                np.maximum(MAX_NODE_SCORE // 2 - used_full, MAX_NODE_SCORE // 3),
                np.maximum(MAX_NODE_SCORE - ratio // 10, MAX_NODE_SCORE // 2),
            ),
        ).astype(np.int64)
        return out

    def uniform_score(self, state: CycleState, pod: Pod, table: NodeTable) -> int | None:
        """0 on every node for a pod without gpu-milli."""
        return MIN_NODE_SCORE if gpu_request(pod).milli <= 0 else None


# ---- BestFit ----------------------------------------------------------------------------


def best_fit_raw(node_cpu_left: int, gpus: NodeGpus, request: GpuRequest) -> int:
    """getBestFitScore: 100 * (1 - the half-weighted free share left), before NormalizeScore;
    -1 when the node has less free than the pod asks."""
    free = (float(node_cpu_left), float(gpus.total_free))
    asked = (float(request.cpu), float(request.total_milli))
    scale, weight = (float(MAX_SPEC_CPU), float(MAX_SPEC_GPU)), 0.5
    score = 0.0
    for i in range(2):
        if free[i] < asked[i]:
            return -1
        score += (free[i] - asked[i]) / scale[i] * weight
    return int((1.0 - score) * float(MAX_NODE_SCORE))


def normalize_min_max(values: list[int]) -> list[int]:
    """plugin_utils.go NormalizeScore: min-max onto 0..100 (all 0 when all equal)."""
    if not values:
        return values
    high, low = max(values), min(values)
    spread = high - low
    if spread == 0:
        return [MIN_NODE_SCORE] * len(values)
    span = MAX_NODE_SCORE - MIN_NODE_SCORE
    return [trunc_div((v - low) * span, spread) + MIN_NODE_SCORE for v in values]


class BestFitScore(GpuPolicy):
    """05-BestFit: the node left with the least free CPU and GPU, min-max normalized."""

    name = BEST_FIT_SCORE

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> BestFitScore:
        return cls(handle)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        request = gpu_request(pod)
        gpus = self.node_gpus(node_info)
        if not accessible(gpus.model, request):
            raise _not_accessible(node_info.name, request)
        score = best_fit_raw(cpu_left(node_info), gpus, request)
        if score == -1:
            raise GpuScoreError(
                f"the score between node({node_info.name}) and pod({pod.key}) is negative, "
                "should not happen"
            )
        return score

    def score_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray | None:
        request = gpu_request(pod)
        if not _rows_accessible(table, rows, request):
            return None
        cols = self.columns(table)
        free_cpu = table.free_cpu[rows].astype(np.float64)
        free_gpu = cols.total[rows].astype(np.float64)
        cpu, gpu = float(request.cpu), float(request.total_milli)
        if bool((free_cpu < cpu).any() or (free_gpu < gpu).any()):
            return None  # the per-node method raises for such a node
        score = 0.0 + (free_cpu - cpu) / float(MAX_SPEC_CPU) * 0.5
        score = score + (free_gpu - gpu) / float(MAX_SPEC_GPU) * 0.5
        out: IntArray = np.trunc((1.0 - score) * float(MAX_NODE_SCORE)).astype(np.int64)
        if bool((out == -1).any()):
            return None  # read as the artifact's "negative score" error: per node
        return out

    def score_extensions(self) -> BestFitScore:  # type: ignore[override]
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> None:
        for name, value in zip(scores, normalize_min_max(list(scores.values())), strict=True):
            scores[name] = value

    def normalize_score_batch(self, state: CycleState, pod: Pod, scores: IntArray) -> None:
        if not len(scores):
            return
        high, low = int(scores.max()), int(scores.min())
        if high == low:
            scores.fill(MIN_NODE_SCORE)
            return
        scores[:] = (scores - low) * (MAX_NODE_SCORE - MIN_NODE_SCORE) // (high - low)
