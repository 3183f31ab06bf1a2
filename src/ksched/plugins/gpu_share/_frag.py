"""A node's GPU fragmentation against a workload's typical pods (FGD's measure).

# hkust-adsl/kubernetes-scheduler-simulator pkg/utils/frag.go (NodeGpuShareFragAmount,
# GetNodePodFrag, CanNodeHostPodOnGpuMemory, GetGpuFragMilliByNodeResAndPodRes,
# FragAmountSumExceptQ3), pkg/type/resource.go (TargetPod)
For each typical pod m (with popularity p_m), the node's free GPU milli is sorted into one
of seven buckets: Q3 when m fits (the milli on GPUs too small for m goes to Q2, the rest to
Q3), Q1/Q2/Q4 when m lacks GPU and/or CPU, XL/XR for CPU-only m, NoAccess when the model is
wrong. The fragmentation is the sum of every bucket but Q3. Each bucket adds p_m * milli in
the typical pods' order and the buckets are summed in the artifact's order, so the value is
the artifact's to the last bit (float addition is not associative).

``NodeFrag.frag`` is the per-node reference; ``NodeFrag.frag_rows`` computes the same over
many node states at once with numpy (the same operations in the same order).
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Sequence

import attrs
import numpy as np
import numpy.typing as npt

from ._names import MODEL_SEPARATOR

__all__ = ["NodeFrag", "TypicalPod", "sigmoid"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

Q1_LACK_BOTH, Q2_LACK_GPU, Q3_SATISFIED, Q4_LACK_CPU = 0, 1, 2, 3
XL_SATISFIED, XR_LACK_CPU, NO_ACCESS = 4, 5, 6
_BUCKETS_SUMMED = (0, 1, 3, 4, 5, 6)
"""FragAmountSumExceptQ3: the buckets in index order, Q3 left out."""
_SUMMED = np.array(_BUCKETS_SUMMED, dtype=np.int64)


def _kind_table() -> tuple[IntArray, int]:
    """The bucket of a typical pod by case = cpu_ok + 2 gpu_ok + 4 access + 8 cpu_only
    (GetNodePodFrag; Q3's summed part goes to Q2), and the case of Q3."""
    kinds = np.zeros(16, dtype=np.int64)
    for case in range(16):
        cpu_ok, gpu_ok, access, cpu_only = case & 1, case & 2, case & 4, case & 8
        if cpu_only:
            kinds[case] = XL_SATISFIED if cpu_ok else XR_LACK_CPU
        elif not access:
            kinds[case] = NO_ACCESS
        elif gpu_ok:
            kinds[case] = Q2_LACK_GPU if cpu_ok else Q4_LACK_CPU
        else:
            kinds[case] = Q2_LACK_GPU if cpu_ok else Q1_LACK_BOTH
    return kinds, 1 + 2 + 4


_KIND, _SATISFIED = _kind_table()

_MEMO_LIMIT = 1 << 16
"""Node states whose fragmentation ``frag`` keeps."""
_STATE_LIMIT = 1 << 20
"""Node states whose fragmentation ``frag_states`` keeps (about 100 bytes each)."""
_PER_STATE = 4
"""Up to this many new states are worked out one by one (a numpy pass costs more)."""
_ABSENT = np.iinfo(np.int64).max
"""Sorts past every GPU in a state key."""
_CHUNK = 2048
"""Node states per numpy pass (bounds the (states, pods, GPUs) temporaries)."""


def _percentage_in_range(instance: object, attribute: object, value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"percentage: must be between 0 and 1, not {value!r}")


def _not_negative(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if value < 0:
        head, *rest = attribute.name.split("_")
        key = head + "".join(part.title() for part in rest)  # as the YAML spells it
        raise ValueError(f"{key}: must not be negative, not {value!r}")


@attrs.frozen(kw_only=True)
class TypicalPod:
    """One typical pod of a workload and its share of the pods (the artifact's TargetPod,
    as GetTypicalPods builds it: the popular specs, their frequencies summing to 1)."""

    milli_cpu: int = attrs.field(validator=_not_negative)
    milli_gpu: int = attrs.field(default=0, validator=_not_negative)
    """Milli of each GPU (0 for a CPU-only pod)."""
    gpu_number: int = attrs.field(default=0, validator=_not_negative)
    gpu_type: str = ""
    """Accepted GPU models, ``|``-separated ("": any)."""
    percentage: float = attrs.field(validator=_percentage_in_range)
    """The pod's frequency, 0..1."""


def _accepts(gpu_type: str, node_model: str) -> bool:
    """IsNodeAccessibleToPodByType for a typical pod."""
    if not gpu_type:
        return True
    if not node_model:
        return False
    models = [m for m in gpu_type.split(MODEL_SEPARATOR) if m]
    return not models or node_model in models


def sigmoid(x: float) -> float:
    """1 / (1 + e^-x), 0 where e^-x overflows (as Go's +Inf gives)."""
    try:
        return 1.0 / (1.0 + math.exp(-x))
    except OverflowError:
        return 0.0


class NodeFrag:
    """The fragmentation measure for one list of typical pods."""

    def __init__(self, pods: Sequence[TypicalPod]) -> None:
        self.pods = tuple(pods)
        self._cpu = np.array([p.milli_cpu for p in pods], dtype=np.int64)
        self._gpu = np.array([p.milli_gpu for p in pods], dtype=np.int64)
        self._need = np.array([max(p.gpu_number, 1) for p in pods], dtype=np.int64)
        self._freq = np.array([p.percentage for p in pods], dtype=np.float64)
        self._cpu_only = self._gpu == 0
        self._cpu_only_case = np.where(self._cpu_only, 8, 0).astype(np.int8)
        # GPU counts and sums are needed per distinct GPU milli of the typical pods only.
        self._levels, self._level_of = np.unique(self._gpu, return_inverse=True)
        self._access: dict[str, npt.NDArray[np.bool_]] = {}
        self._memo: dict[tuple[int, tuple[int, ...], str], float] = {}
        """F by (CPU rank, sorted free milli, model), for ``frag``."""
        # F reads a state's CPU only through the typical pods' CPU: its rank among them.
        self._thresholds = np.unique(self._cpu)
        self._threshold_list = self._thresholds.tolist()
        self._plan = [
            (p.milli_cpu, int(level), max(p.gpu_number, 1), p.percentage, p.milli_gpu == 0)
            for p, level in zip(pods, self._level_of.tolist(), strict=True)
        ]
        self._level_list = self._levels.tolist()
        self._model_ids: dict[str, int] = {}
        self._states: dict[bytes, float] = {}
        """F by state key (model code, CPU rank, sorted free milli): most states recur."""

    def access(self, node_model: str) -> npt.NDArray[np.bool_]:
        """Which typical pods accept a node of ``node_model`` (kept per model)."""
        found = self._access.get(node_model)
        if found is None:
            found = np.array([_accepts(p.gpu_type, node_model) for p in self.pods], dtype=np.bool_)
            self._access[node_model] = found
        return found

    def frag(self, cpu_left: int, free: Sequence[int], model: str) -> float:
        """NodeGpuShareFragAmountScore of one node state (kept per state)."""
        ordered = sorted(free)
        key = (bisect.bisect_right(self._threshold_list, cpu_left), tuple(ordered), model)
        found = self._memo.get(key)
        if found is None:
            if len(self._memo) >= _MEMO_LIMIT:
                self._memo.clear()
            found = self._memo[key] = self._frag_sorted(cpu_left, ordered, model)
        return found

    def _frag_sorted(self, cpu_left: int, ordered: list[int], model: str) -> float:
        """``frag_reference`` of a state whose free milli is sorted: each typical pod's room
        and small milli read off the sorted GPUs by bisection, once per distinct milli."""
        n = len(ordered)
        prefix = list(itertools.accumulate(ordered, initial=0))
        total = prefix[-1]
        levels = []
        for level in self._level_list:
            i = bisect.bisect_left(ordered, level)  # GPUs with less than ``level`` free
            levels.append((n - i, prefix[i]))
        access = self.access(model).tolist()
        data = [0.0] * 7
        for m, (cpu, level, need, freq, cpu_only) in enumerate(self._plan):
            cpu_ok = cpu_left >= cpu
            if cpu_only:
                data[XL_SATISFIED if cpu_ok else XR_LACK_CPU] += freq * float(total)
            elif not access[m]:
                data[NO_ACCESS] += freq * float(total)
            else:
                room, small = levels[level]
                if room >= need:
                    if cpu_ok:  # Q3: the milli on GPUs too small for m is fragment
                        data[Q2_LACK_GPU] += freq * float(small)
                    else:
                        data[Q4_LACK_CPU] += freq * float(total)
                else:
                    data[Q2_LACK_GPU if cpu_ok else Q1_LACK_BOTH] += freq * float(total)
        out = 0.0
        for bucket in _BUCKETS_SUMMED:
            out += data[bucket]
        return out

    def frag_reference(self, cpu_left: int, free: Sequence[int], model: str) -> float:
        """NodeGpuShareFragAmountScore as the artifact writes it, line by line."""
        data = [0.0] * 7
        total = sum(free)
        for pod in self.pods:
            freq = pod.percentage
            cpu_ok = cpu_left >= pod.milli_cpu
            if pod.milli_gpu == 0:
                kind = XL_SATISFIED if cpu_ok else XR_LACK_CPU
            elif not _accepts(pod.gpu_type, model):
                kind = NO_ACCESS
            else:
                room = sum(1 for left in free if left >= pod.milli_gpu)
                if room >= max(pod.gpu_number, 1):
                    kind = Q3_SATISFIED if cpu_ok else Q4_LACK_CPU
                else:
                    kind = Q2_LACK_GPU if cpu_ok else Q1_LACK_BOTH
            if kind == Q3_SATISFIED:
                small = sum(left for left in free if left < pod.milli_gpu)
                data[Q2_LACK_GPU] += freq * float(small)
                data[Q3_SATISFIED] += freq * float(total - small)
            else:
                data[kind] += freq * float(total)
        out = 0.0
        for bucket in _BUCKETS_SUMMED:
            out += data[bucket]
        return out

    def frag_states(
        self,
        cpu_left: IntArray,
        free: IntArray,
        count: IntArray,
        codes: IntArray,
        models: Sequence[str],
    ) -> FloatArray:
        """``frag`` of many node states (CPU left (S,), free milli (S, W) whose first
        ``count`` entries are GPUs, model codes (S,) into ``models``, -1: none), each
        state worked out once: a few new states by ``frag``'s per-state path, more in one
        numpy pass (``frag_rows``)."""
        states, width = free.shape
        real = np.arange(width) < count[:, None]
        ordered = np.sort(np.where(real, free, _ABSENT), axis=1)
        rank = np.searchsorted(self._thresholds, cpu_left, side="right")
        ids = np.array([self.model_id(m) for m in (*models, "")], dtype=np.int64)[codes]
        key_rows = np.concatenate((ids[:, None], rank[:, None], ordered), axis=1)
        packed = np.ascontiguousarray(key_rows, dtype=np.int64).tobytes()
        size = (width + 2) * 8
        keys = [packed[i * size : (i + 1) * size] for i in range(states)]
        memo = self._states
        out = np.fromiter((memo.get(k, math.nan) for k in keys), np.float64, states)
        missing = np.flatnonzero(np.isnan(out))
        if not len(missing):
            return out
        if len(memo) + len(missing) > _STATE_LIMIT:
            memo.clear()
        if len(missing) <= _PER_STATE:
            for i in missing.tolist():
                n = int(count[i])
                code = int(codes[i])
                values = ordered[i, :n].tolist()
                value = self._frag_sorted(
                    int(cpu_left[i]), values, models[code] if code >= 0 else ""
                )
                out[i] = memo[keys[i]] = value
            return out
        access = self.access_rows(codes[missing], models)
        found = self.frag_rows(cpu_left[missing], free[missing], count[missing], access)
        out[missing] = found
        for i, value in zip(missing.tolist(), found.tolist(), strict=True):
            memo[keys[i]] = value
        return out

    def cpu_rank(self, cpu_left: int) -> int:
        """How many of the typical pods' CPU amounts ``cpu_left`` reaches (all F reads of
        a state's CPU)."""
        return bisect.bisect_right(self._threshold_list, cpu_left)

    @property
    def thresholds(self) -> IntArray:
        """The typical pods' distinct CPU amounts, ascending (``cpu_rank`` counts them)."""
        return self._thresholds

    def model_id(self, model: str) -> int:
        """A number for ``model`` that stays the same for this NodeFrag (state keys)."""
        found = self._model_ids.get(model)
        if found is None:
            found = self._model_ids[model] = len(self._model_ids)
        return found

    def access_rows(self, codes: IntArray, models: Sequence[str]) -> npt.NDArray[np.bool_]:
        """(states, typical pods): which typical pods accept each state's model."""
        matrix = np.array(
            [self.access(m) for m in models] + [self.access("")], dtype=np.bool_
        ).reshape(len(models) + 1, len(self.pods))
        found: npt.NDArray[np.bool_] = matrix[codes]  # code -1: the last line, no model
        return found

    def frag_rows(
        self, cpu_left: IntArray, free: IntArray, count: IntArray, access: npt.NDArray[np.bool_]
    ) -> FloatArray:
        """``frag`` of many node states: CPU left (S,), free milli (S, W) whose first
        ``count`` entries are GPUs, and which typical pods each state's model accepts
        (S, M)."""
        out = np.empty(len(cpu_left), dtype=np.float64)
        for start in range(0, len(cpu_left), _CHUNK):
            stop = start + _CHUNK
            out[start:stop] = self._frag_chunk(
                cpu_left[start:stop], free[start:stop], count[start:stop], access[start:stop]
            )
        return out

    def _frag_chunk(
        self, cpu_left: IntArray, free: IntArray, count: IntArray, access: npt.NDArray[np.bool_]
    ) -> FloatArray:
        states, width = free.shape
        if not self.pods:
            return np.zeros(states, dtype=np.float64)
        real = np.arange(width) < count[:, None]  # (S, W): the state's GPUs
        values = np.where(real, free, 0)
        total = values.sum(axis=1)  # (S,)
        # Per distinct GPU milli g of the typical pods: GPUs with g free, and their milli.
        fits = real[:, None, :] & (free[:, None, :] >= self._levels[None, :, None])  # (S, G, W)
        room = fits.sum(axis=2)[:, self._level_of]  # (S, M)
        large = (fits * values[:, None, :]).sum(axis=2)[:, self._level_of]
        cpu_ok = cpu_left[:, None] >= self._cpu[None, :]
        case = (
            cpu_ok.view(np.int8)
            + 2 * (room >= self._need[None, :]).view(np.int8)
            + 4 * access.view(np.int8)
            + self._cpu_only_case[None, :]
        )
        kind = _KIND[case]  # (S, M): the bucket each typical pod's milli goes to
        amount = np.where(case == _SATISFIED, total[:, None] - large, total[:, None])
        part = self._freq[None, :] * amount.astype(np.float64)  # p_m * milli, rounded so
        # Each bucket adds its parts in the typical pods' order (cumsum adds left to right),
        # and the buckets are summed in index order, as the artifact's loops do.
        per_bucket = np.where(
            kind[:, None, :] == _SUMMED[None, :, None], part[:, None, :], 0.0
        )  # (S, 6, M)
        sums = np.cumsum(per_bucket, axis=2)[:, :, -1]
        result: FloatArray = np.cumsum(sums, axis=1)[:, -1]
        return result
