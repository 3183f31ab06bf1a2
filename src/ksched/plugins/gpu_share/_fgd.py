"""06-FGD: place a pod where the node's fragmentation grows least (Fragmentation Gradient
Descent), and give it the GPU that does so.

# hkust-adsl/kubernetes-scheduler-simulator pkg/simulator/plugin/fgd_score.go
# (calculateGpuShareFragExtendScore, allocateGpuIdBasedOnFGDScore), plugin_utils.go
# (sigmoid), pkg/utils/frag.go, pkg/type/resource.go (NodeResource.Sub)
Score = 100 * sigmoid((F(before) - F(after)) / 1000), truncated, where F is the node's
fragmentation against the typical pods (``_frag``). A pod taking part of one GPU is tried on
every GPU with room; the best score wins, and its GPU (the lowest index among equal scores) is
FGD's GPU choice. Other pods are placed by NodeResource.Sub (the fullest GPUs that fit) and
take the lowest-indexed free GPUs. A pod asking for nothing scores 100.

The batch form keeps, per pod spec (cpu, gpu-milli, gpu-count, model), the score and GPU
choice of every row, and F(before) of every row, and works out again only the rows the
node table changed since (one per placed pod), all rows of a pass in one numpy evaluation.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from ...api import Pod
from ...framework import (
    MAX_NODE_SCORE,
    CycleState,
    Handle,
    IntArray,
    NodeInfo,
    NodeTable,
    parse_plugin_args,
)
from ._allocate import exclusive_gpus, subtract
from ._columns import GpuColumns
from ._frag import NodeFrag, TypicalPod, sigmoid
from ._ledger import NodeGpus
from ._names import FGD_SCORE, GPU_MODEL
from ._policies import GpuScoreError, _rows_accessible
from ._policy import GpuPolicy, cpu_left
from ._request import GpuRequest, accessible, gpu_request

__all__ = ["FGDScore", "FGDScoreArgs", "fgd_score"]

MAX_TYPICAL_PODS = 4096
"""Typical pods one FGD plugin takes (a bound on the work per node)."""
_CELLS = 8_000_000
"""Rows x specs the kept score columns may hold together."""


def _bounded(instance: object, attribute: object, value: tuple[TypicalPod, ...]) -> None:
    if len(value) > MAX_TYPICAL_PODS:
        raise ValueError(f"typicalPods: at most {MAX_TYPICAL_PODS}, not {len(value)}")


@attrs.frozen(kw_only=True)
class FGDScoreArgs:
    """``pluginConfig`` args of FGDScore."""

    typical_pods: tuple[TypicalPod, ...] = attrs.field(validator=_bounded)
    """The workload's typical pods (GetTypicalPods: the most popular specs and their
    frequencies), e.g. ``{milliCpu: 8000, milliGpu: 500, gpuNumber: 1, percentage: 0.2}``."""


def _frag_score(before: float, after: float) -> int:
    return int(sigmoid((before - after) / 1000) * float(MAX_NODE_SCORE))


def fgd_score(
    frag: NodeFrag, node_cpu: int, gpus: NodeGpus, request: GpuRequest
) -> tuple[int, tuple[int, ...] | None]:
    """calculateGpuShareFragExtendScore: the node's score for the pod and FGD's GPUs."""
    model = gpus.model
    before = frag.frag(node_cpu, gpus.free, model)
    if request.is_share:
        best, choice = 0, None
        for device, left in enumerate(gpus.free):
            if left >= request.milli:
                after = list(gpus.free)
                after[device] -= request.milli
                score = _frag_score(before, frag.frag(node_cpu - request.cpu, after, model))
                if choice is None or score > best:
                    best, choice = score, (device,)
        return best, choice
    cpu_after, free_after = subtract(node_cpu, gpus.free, request)
    score = _frag_score(before, frag.frag(cpu_after, free_after, model))
    return score, exclusive_gpus(gpus.free, request.total_milli)


@attrs.define(eq=False, slots=True)
class _Kept:
    """Per-row values kept for one key, valid where ``valid`` says."""

    epoch: int
    seen: int
    valid: npt.NDArray[np.bool_]
    score: IntArray
    choice: IntArray
    """FGD's GPU for a part-GPU pod (-1: none fits); unused otherwise."""
    before: npt.NDArray[np.float64]

    @classmethod
    def empty(cls, table: NodeTable) -> _Kept:
        n = len(table)
        return cls(
            table.epoch,
            len(table.changed_rows),
            np.zeros(n, dtype=np.bool_),
            np.zeros(n, dtype=np.int64),
            np.full(n, -1, dtype=np.int64),
            np.zeros(n, dtype=np.float64),
        )

    def catch_up(self, table: NodeTable) -> bool:
        """Forget the rows the table changed since; False when it must start over."""
        rows = table.changed_since(self.epoch, self.seen)
        if rows is None or len(self.valid) != len(table):
            return False
        if rows:
            self.valid[rows] = False
        self.seen = len(table.changed_rows)
        return True


class FGDScore(GpuPolicy):
    """06-FGD (see the module)."""

    name = FGD_SCORE
    gpu_selection = FGD_SCORE

    def __init__(self, args: FGDScoreArgs, handle: Handle) -> None:
        super().__init__(handle)
        self.args = args
        self.frag = NodeFrag(args.typical_pods)
        self._before: _Kept | None = None
        self._specs: OrderedDict[tuple[int, int, int, str], _Kept] = OrderedDict()
        self._access: tuple[int, npt.NDArray[np.bool_]] | None = None

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> FGDScore:
        return cls(parse_plugin_args(FGDScoreArgs, args, plugin=cls.name), handle)

    # -- per node

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        request = gpu_request(pod)
        if not request.has_requests:
            return MAX_NODE_SCORE
        gpus = self.node_gpus(node_info)
        if not accessible(gpus.model, request):
            raise GpuScoreError(
                f"Node ({node_info.name}) does not match GPU type request of pod {pod.key}"
            )
        return fgd_score(self.frag, cpu_left(node_info), gpus, request)[0]

    def select_gpus(
        self, pod: Pod, request: GpuRequest, node_info: NodeInfo, gpus: NodeGpus
    ) -> tuple[int, ...] | None:
        """allocateGpuIdBasedOnFGDScore (the choice the batch form kept, when current)."""
        if not request.is_share:
            return exclusive_gpus(gpus.free, request.total_milli)
        kept = self._kept_choice(request, node_info)
        if kept is not None:
            return kept
        return fgd_score(self.frag, cpu_left(node_info), gpus, request)[1]

    def uniform_score(self, state: CycleState, pod: Pod, table: NodeTable) -> int | None:
        """100 on every node for a pod asking for nothing."""
        return None if gpu_request(pod).has_requests else MAX_NODE_SCORE

    # -- batch

    def score_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray | None:
        request = gpu_request(pod)
        if not request.has_requests:
            return np.full(len(rows), MAX_NODE_SCORE, dtype=np.int64)
        if not _rows_accessible(table, rows, request):
            return None  # the per-node method reports the node
        cols = self.columns(table)
        kept = self._spec_column(request, table)
        missing = rows[~kept.valid[rows]]
        if len(missing):
            self._fill(kept, np.unique(missing), request, table, cols)
        out: IntArray = kept.score[rows]
        return out

    def _spec_column(self, request: GpuRequest, table: NodeTable) -> _Kept:
        key = request.spec_key()
        kept = self._specs.get(key)
        if kept is None or not kept.catch_up(table):
            kept = self._specs[key] = _Kept.empty(table)
            limit = max(4, _CELLS // max(len(table), 1))
            while len(self._specs) > limit:
                self._specs.popitem(last=False)
        self._specs.move_to_end(key)
        return kept

    def _frag_before(
        self, rows: IntArray, table: NodeTable, cols: GpuColumns
    ) -> npt.NDArray[np.float64]:
        kept = self._before
        if kept is None or not kept.catch_up(table):
            kept = self._before = _Kept.empty(table)
        missing = rows[~kept.valid[rows]]
        if len(missing):
            kept.before[missing] = self.frag.frag_rows(
                table.free_cpu[missing],
                cols.free[missing],
                cols.count[missing],
                self._access_rows(table, missing),
            )
            kept.valid[missing] = True
        out: npt.NDArray[np.float64] = kept.before[rows]
        return out

    def _access_rows(self, table: NodeTable, rows: IntArray) -> npt.NDArray[np.bool_]:
        """(rows, typical pods): which typical pods accept each row's GPU model."""
        codes, vocabulary = table.label_codes(GPU_MODEL)
        if self._access is None or self._access[0] != len(vocabulary):
            by_code = [""] * len(vocabulary)
            for model, code in vocabulary.items():
                by_code[code] = model
            matrix = np.array(
                [self.frag.access(m) for m in by_code] + [self.frag.access("")], dtype=np.bool_
            ).reshape(len(by_code) + 1, len(self.frag.pods))
            self._access = (len(vocabulary), matrix)
        matrix = self._access[1]
        found: npt.NDArray[np.bool_] = matrix[codes[rows]]  # code -1: the last line, no model
        return found

    def _fill(
        self, kept: _Kept, rows: IntArray, request: GpuRequest, table: NodeTable, cols: GpuColumns
    ) -> None:
        before = self._frag_before(rows, table, cols)
        cpu, free, count = table.free_cpu[rows], cols.free[rows], cols.count[rows]
        access = self._access_rows(table, rows)
        if request.is_share:
            score, choice = self._share_scores(before, cpu, free, count, access, request)
            kept.choice[rows] = choice
        else:
            cpu_after, free_after = _subtract_rows(cpu, free, count, request)
            after = self.frag.frag_rows(cpu_after, free_after, count, access)
            score = _scores(before, after)
        kept.score[rows] = score
        kept.valid[rows] = True

    def _share_scores(
        self,
        before: npt.NDArray[np.float64],
        cpu: IntArray,
        free: IntArray,
        count: IntArray,
        access: npt.NDArray[np.bool_],
        request: GpuRequest,
    ) -> tuple[IntArray, IntArray]:
        """Each row's best score over its GPUs with room, and the first GPU reaching it."""
        n, width = free.shape
        if width == 0:
            return np.zeros(n, dtype=np.int64), np.full(n, -1, dtype=np.int64)
        devices = np.arange(width)
        room = (devices < count[:, None]) & (free >= request.milli)  # (R, W)
        # GPUs with the same free milli give the same state: each value is tried once.
        same = free[:, :, None] == free[:, None, :]  # (R, W, W)
        first_same = np.argmax(same, axis=2)  # the first device with that free milli
        first = room & (first_same == devices[None, :])
        at_row, at_device = np.nonzero(first)
        trial = free[at_row].copy()
        trial[np.arange(len(at_row)), at_device] -= request.milli
        after = self.frag.frag_rows(cpu[at_row] - request.cpu, trial, count[at_row], access[at_row])
        tried = np.full((n, width), -1, dtype=np.int64)
        tried[at_row, at_device] = _scores(before[at_row], after)
        each = np.where(room, tried[np.arange(n)[:, None], first_same], -1)
        best = each.max(axis=1)
        choice = np.where(best >= 0, each.argmax(axis=1), -1)
        return np.maximum(best, 0), choice

    def _kept_choice(self, request: GpuRequest, node_info: NodeInfo) -> tuple[int, ...] | None:
        table = getattr(self._handle.snapshot, "table", None)
        kept = self._specs.get(request.spec_key())
        if not isinstance(table, NodeTable) or kept is None:
            return None
        row = table.index.get(node_info.name)
        if row is None or table.infos[row] is not node_info or len(kept.valid) != len(table):
            return None
        if table.changed_since(kept.epoch, kept.seen) != [] or not kept.valid[row]:
            return None
        choice = int(kept.choice[row])
        return None if choice < 0 else (choice,)


def _scores(before: npt.NDArray[np.float64], after: npt.NDArray[np.float64]) -> IntArray:
    """``_frag_score`` of each pair (the exponential through ``math``, as per node)."""
    x = (before - after) / 1000
    values, where = np.unique(x, return_inverse=True)
    scores = np.array([_frag_score_x(v) for v in values.tolist()], dtype=np.int64)
    out: IntArray = scores[where.reshape(-1)]
    return out


def _frag_score_x(x: float) -> int:
    return int(sigmoid(x) * float(MAX_NODE_SCORE))


def _subtract_rows(
    cpu: IntArray, free: IntArray, count: IntArray, request: GpuRequest
) -> tuple[IntArray, IntArray]:
    """``subtract`` of many rows: CPU, and the pod's milli off the fullest GPUs that fit
    (the GPUs come back ordered by free milli, which the fragmentation does not see)."""
    ok = (cpu >= request.cpu) & (count >= request.count)
    cpu_after: IntArray = np.where(ok, cpu - request.cpu, cpu)
    width = free.shape[1]
    if request.count == 0 or width == 0:
        return cpu_after, free
    real = np.arange(width) < count[:, None]
    order = np.argsort(np.where(real, free, np.iinfo(np.int64).max), axis=1, kind="stable")
    ordered = np.take_along_axis(free, order, axis=1)  # GPUs least free first, PAD last
    fits = real & (ordered >= request.milli) & ok[:, None]
    take = fits & (np.cumsum(fits, axis=1) <= request.count)
    free_after: IntArray = ordered - np.where(take, request.milli, 0)
    return cpu_after, free_after
