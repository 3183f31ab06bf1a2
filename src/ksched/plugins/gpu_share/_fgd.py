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
choice of every row and works out again only the rows the node table changed since (one per
placed pod); F of a node state is worked out once (``NodeFrag.frag_states``: most states
recur, on other nodes and for other specs).
"""

from __future__ import annotations

import struct
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from ...api import Pod
from ...framework import MAX_NODE_SCORE, CycleState, Handle, NodeInfo, parse_plugin_args
from ...framework.batch import IntArray, NodeTable
from ._allocate import exclusive_gpus, subtract
from ._columns import GpuColumns
from ._frag import NodeFrag, TypicalPod, sigmoid
from ._ledger import NodeGpus
from ._names import FGD_SCORE, GPU_MODEL, MAX_GPUS_PER_NODE
from ._policies import GpuScoreError, _rows_accessible
from ._policy import GpuPolicy, cpu_left
from ._request import GpuRequest, accessible, gpu_request

__all__ = ["FGDScore", "FGDScoreArgs", "fgd_score"]

MAX_TYPICAL_PODS = 4096
"""Typical pods one FGD plugin takes (a bound on the work per node)."""
_PER_ROW = 16
"""Up to this many rows to score, keys made one by one; more, keys made in numpy."""
_PER_STATE = 24
"""Up to this many new node states, scored one by one; more, in one numpy pass."""
_MEMO_LIMIT = 1 << 17
"""(pod spec, node state) scores kept (about 300 bytes each)."""
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


_KEY_FORMATS = [struct.Struct(f"={5 + n}q") for n in range(MAX_GPUS_PER_NODE + 1)]
"""``_state_key``'s layout per GPU count: native int64s, as numpy's ``tobytes`` writes them."""


def _state_score(
    frag: NodeFrag, node_cpu: int, gpus: NodeGpus, request: GpuRequest
) -> tuple[int, frozenset[int]]:
    """``fgd_score`` of a state: the score, and for a part-GPU pod the free milli values
    of the GPUs reaching it (GPUs with equal free milli score the same)."""
    if not request.is_share:
        return fgd_score(frag, node_cpu, gpus, request)[0], frozenset()
    model = gpus.model
    before = frag.frag(node_cpu, gpus.free, model)
    by_value: dict[int, int] = {}
    for device, left in enumerate(gpus.free):
        if left >= request.milli and left not in by_value:
            after = list(gpus.free)
            after[device] -= request.milli
            by_value[left] = _frag_score(before, frag.frag(node_cpu - request.cpu, after, model))
    if not by_value:
        return 0, frozenset()
    best = max(by_value.values())
    return best, frozenset(v for v, score in by_value.items() if score == best)


@attrs.define(eq=False, slots=True)
class _Kept:
    """Per-row values kept for one key, valid where ``valid`` says."""

    epoch: int
    seen: int
    valid: npt.NDArray[np.bool_]
    score: IntArray

    @classmethod
    def empty(cls, table: NodeTable) -> _Kept:
        n = len(table)
        return cls(
            table.epoch,
            len(table.changed_rows),
            np.zeros(n, dtype=np.bool_),
            np.zeros(n, dtype=np.int64),
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
        self._specs: OrderedDict[tuple[int, int, int, str], _Kept] = OrderedDict()
        self._models_of: tuple[dict[str, int], list[str]] | None = None
        self._memo: dict[tuple[int, int, int, str], dict[bytes, tuple[int, frozenset[int] | None]]]
        self._memo = {}
        """Per pod spec, by node state (``_state_key``): the score and, for a part-GPU pod,
        the free milli of the GPUs reaching it (None until asked)."""
        self._stored = 0

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
        return self._scored(request, cpu_left(node_info), gpus)[0]

    def select_gpus(
        self, pod: Pod, request: GpuRequest, node_info: NodeInfo, gpus: NodeGpus
    ) -> tuple[int, ...] | None:
        """allocateGpuIdBasedOnFGDScore."""
        if not request.is_share:
            return exclusive_gpus(gpus.free, request.total_milli)
        return self._scored(request, cpu_left(node_info), gpus)[1]

    def _scored(
        self, request: GpuRequest, node_cpu: int, gpus: NodeGpus
    ) -> tuple[int, tuple[int, ...] | None]:
        """``fgd_score``, kept per pod spec and node state (``_state_key``)."""
        memo = self._memo_for(request)
        key = self._state_key(request, node_cpu, gpus)
        kept = memo.get(key)
        if kept is None or (kept[1] is None and request.is_share):
            kept = memo[key] = _state_score(self.frag, node_cpu, gpus, request)
            self._stored += 1
        score, best = kept
        if not request.is_share or best is None:
            return score, None
        milli = request.milli
        for device, left in enumerate(gpus.free):  # the first GPU of a best value
            if left >= milli and left in best:
                return score, (device,)
        return score, None

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
        if len(missing) > _PER_ROW:
            kept.score[missing] = self._score_rows(missing, request, table, cols)
            kept.valid[missing] = True
        elif len(missing):
            free_cpu, nodes = table.free_cpu.tolist(), cols.nodes
            for row in missing.tolist():
                gpus = nodes[row]
                assert gpus is not None
                kept.score[row] = self._scored(request, free_cpu[row], gpus)[0]
                kept.valid[row] = True
        out: IntArray = kept.score[rows]
        return out

    def _score_rows(
        self, rows: IntArray, request: GpuRequest, table: NodeTable, cols: GpuColumns
    ) -> IntArray:
        """Scores of many rows: each row's state looked up (keys made in numpy), the new
        states worked out once each, one by one when few, else in one numpy pass."""
        keys = self._row_keys(rows, request, table, cols)
        memo = self._memo_for(request)
        found = [memo.get(key) for key in keys]
        first: dict[bytes, int] = {}
        for i, hit in enumerate(found):
            if hit is None:
                first.setdefault(keys[i], i)
        if first:
            new = np.array(list(first.values()), dtype=np.int64)
            if len(new) <= _PER_STATE:
                free_cpu, nodes = table.free_cpu, cols.nodes
                for i in new.tolist():
                    gpus = nodes[int(rows[i])]
                    assert gpus is not None
                    memo[keys[i]] = _state_score(self.frag, int(free_cpu[rows[i]]), gpus, request)
            else:
                scores = self._fill(rows[new], request, table, cols)
                for i, score in zip(new.tolist(), scores.tolist(), strict=True):
                    memo[keys[i]] = (score, None)
            self._stored += len(first)
            found = [memo[key] for key in keys]
        out: IntArray = np.fromiter((hit[0] for hit in found), np.int64, len(found))  # type: ignore[index]
        return out

    def _row_keys(
        self, rows: IntArray, request: GpuRequest, table: NodeTable, cols: GpuColumns
    ) -> list[bytes]:
        """``_state_key`` of each row, made in numpy."""
        codes, models = self._models(table)
        ids = np.array([self.frag.model_id(m) for m in (*models, "")], dtype=np.int64)
        cpu, count = table.free_cpu[rows], cols.count[rows]
        thresholds = self.frag.thresholds
        head = np.stack(
            (
                ids[codes[rows]],
                np.searchsorted(thresholds, cpu, side="right"),
                np.searchsorted(thresholds, cpu - request.cpu, side="right"),
                (cpu >= request.cpu).astype(np.int64),
                count,
            ),
            axis=1,
        )
        packed = np.ascontiguousarray(
            np.concatenate((head, cols.sorted_free[rows]), axis=1), dtype=np.int64
        ).tobytes()
        size = (5 + cols.width) * 8
        return [packed[i * size : i * size + (5 + n) * 8] for i, n in enumerate(count.tolist())]

    def _memo_for(self, request: GpuRequest) -> dict[bytes, tuple[int, frozenset[int] | None]]:
        if self._stored >= _MEMO_LIMIT:
            self._memo.clear()
            self._stored = 0
        memo = self._memo.get(request.spec_key())
        if memo is None:
            memo = self._memo[request.spec_key()] = {}
        return memo

    def _state_key(self, request: GpuRequest, node_cpu: int, gpus: NodeGpus) -> bytes:
        """A node state as FGD's score of a pod spec reads it: its model, the ranks of its
        CPU before and after among the typical pods' (all F reads of a CPU amount), whether
        the pod's CPU fits, and its sorted free milli (as ``_row_keys`` makes it)."""
        rank = self.frag.cpu_rank
        ordered = gpus.ordered
        n = len(ordered)
        return _KEY_FORMATS[n].pack(
            self.frag.model_id(gpus.model),
            rank(node_cpu),
            rank(node_cpu - request.cpu),
            int(node_cpu >= request.cpu),
            n,
            *ordered,
        )

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

    def _models(self, table: NodeTable) -> tuple[IntArray, list[str]]:
        """The rows' model codes and the model of each code (the table's vocabulary)."""
        codes, vocabulary = table.label_codes(GPU_MODEL)
        if (
            self._models_of is None
            or self._models_of[0] is not vocabulary
            or len(self._models_of[1]) != len(vocabulary)
        ):
            by_code = [""] * len(vocabulary)
            for model, code in vocabulary.items():
                by_code[code] = model
            self._models_of = (vocabulary, by_code)
        return codes, self._models_of[1]

    def _fill(
        self, rows: IntArray, request: GpuRequest, table: NodeTable, cols: GpuColumns
    ) -> IntArray:
        """Score ``rows`` (sorted, unique) for the pod's spec: F before and after every
        trial placement, the states through ``NodeFrag.frag_states`` in one call."""
        codes, models = self._models(table)
        cpu, count, code = table.free_cpu[rows], cols.count[rows], codes[rows]
        n = len(rows)
        if request.is_share:
            at, trial_cpu, trial_free = _share_trials(cpu, cols.free[rows], count, request)
        else:
            at = np.arange(n)
            trial_cpu, trial_free = _subtract_rows(cpu, cols.sorted_free[rows], count, request)
        frag = self.frag.frag_states(
            np.concatenate((cpu, trial_cpu)),
            np.concatenate((cols.free[rows], trial_free)),
            np.concatenate((count, count[at])),
            np.concatenate((code, code[at])),
            models,
        )
        scores = _scores(frag[:n][at], frag[n:])
        if request.is_share:
            return _best_trial(scores, cols.free[rows], count, request)
        return scores


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
    cpu: IntArray, ordered: IntArray, count: IntArray, request: GpuRequest
) -> tuple[IntArray, IntArray]:
    """``subtract`` of many rows, given each row's free milli in ascending order: CPU, and
    the pod's milli off the fullest GPUs that fit (the GPUs stay in that order, which the
    fragmentation does not see)."""
    ok = (cpu >= request.cpu) & (count >= request.gpu_count)
    cpu_after: IntArray = np.where(ok, cpu - request.cpu, cpu)
    width = ordered.shape[1]
    if request.gpu_count == 0 or width == 0:
        return cpu_after, ordered
    real = np.arange(width) < count[:, None]
    fits = real & (ordered >= request.milli) & ok[:, None]
    take = fits & (np.cumsum(fits, axis=1) <= request.gpu_count)
    free_after: IntArray = ordered - np.where(take, request.milli, 0)
    return cpu_after, free_after


def _first_with_room(
    free: IntArray, count: IntArray, milli: int
) -> tuple[npt.NDArray[np.bool_], IntArray]:
    """(GPUs with ``milli`` free, the first GPU of the row with the same free milli)."""
    width = free.shape[1]
    room = (np.arange(width) < count[:, None]) & (free >= milli)
    first_same = np.argmax(free[:, :, None] == free[:, None, :], axis=2)
    return room, first_same


def _share_trials(
    cpu: IntArray, free: IntArray, count: IntArray, request: GpuRequest
) -> tuple[IntArray, IntArray, IntArray]:
    """The trial placements of a part-GPU pod: per row, each distinct free milli among its
    GPUs with room (GPUs with equal free milli give equal states), as (row position, CPU
    after, free milli after), rows in order."""
    room, first_same = _first_with_room(free, count, request.milli)
    at, device = np.nonzero(room & (first_same == np.arange(free.shape[1])[None, :]))
    trial = free[at]
    trial[np.arange(len(at)), device] -= request.milli
    return at, cpu[at] - request.cpu, trial


def _best_trial(scores: IntArray, free: IntArray, count: IntArray, request: GpuRequest) -> IntArray:
    """Each row's best score over its GPUs with room (0 without one)."""
    n, width = free.shape
    if width == 0:
        return np.zeros(n, dtype=np.int64)
    room, first_same = _first_with_room(free, count, request.milli)
    tried = np.full((n, width), -1, dtype=np.int64)
    tried[room & (first_same == np.arange(width)[None, :])] = scores  # in _share_trials' order
    each = np.where(room, tried[np.arange(n)[:, None], first_same], -1)
    out: IntArray = np.maximum(each.max(axis=1), 0)
    return out
