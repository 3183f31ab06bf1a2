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

_MEMO_LIMIT = 1 << 16
"""Node states whose fragmentation ``frag`` keeps."""
_CHUNK = 2048
"""Node states per numpy pass (bounds the (states, pods, GPUs) temporaries)."""


def _percentage_in_range(instance: object, attribute: object, value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"percentage: must be between 0 and 1, not {value!r}")


def _not_negative(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if value < 0:
        raise ValueError(f"{attribute.name}: must not be negative, not {value!r}")


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
        # GPU counts and sums are needed per distinct GPU milli of the typical pods only.
        self._levels, self._level_of = np.unique(self._gpu, return_inverse=True)
        self._access: dict[str, npt.NDArray[np.bool_]] = {}
        self._memo: dict[tuple[int, tuple[int, ...], str], float] = {}

    def access(self, node_model: str) -> npt.NDArray[np.bool_]:
        """Which typical pods accept a node of ``node_model`` (kept per model)."""
        found = self._access.get(node_model)
        if found is None:
            found = np.array([_accepts(p.gpu_type, node_model) for p in self.pods], dtype=np.bool_)
            self._access[node_model] = found
        return found

    def frag(self, cpu_left: int, free: Sequence[int], model: str) -> float:
        """NodeGpuShareFragAmountScore of one node state (the reference; kept per state)."""
        key = (cpu_left, tuple(free), model)
        found = self._memo.get(key)
        if found is None:
            if len(self._memo) >= _MEMO_LIMIT:
                self._memo.clear()
            found = self._memo[key] = self._frag(cpu_left, key[1], model)
        return found

    def _frag(self, cpu_left: int, free: tuple[int, ...], model: str) -> float:
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
        gpus = np.arange(width) < count[:, None]  # (S, W): real devices
        real = np.where(gpus, free, 0)
        total = real.sum(axis=1)  # (S,)
        # Per distinct GPU milli g: devices with g free, and the milli on them.
        fits = gpus[:, None, :] & (free[:, None, :] >= self._levels[None, :, None])  # (S, G, W)
        room = fits.sum(axis=2)[:, self._level_of]  # (S, M)
        large = np.where(fits, real[:, None, :], 0).sum(axis=2)[:, self._level_of]
        small = total[:, None] - large  # milli on devices with less than g free
        cpu_ok = cpu_left[:, None] >= self._cpu[None, :]
        gpu_ok = room >= self._need[None, :]
        satisfied = ~self._cpu_only[None, :] & access & gpu_ok & cpu_ok
        kind = np.where(
            self._cpu_only[None, :],
            np.where(cpu_ok, XL_SATISFIED, XR_LACK_CPU),
            np.where(
                ~access,
                NO_ACCESS,
                np.where(
                    gpu_ok,
                    np.where(cpu_ok, Q2_LACK_GPU, Q4_LACK_CPU),  # Q3's small part goes to Q2
                    np.where(cpu_ok, Q2_LACK_GPU, Q1_LACK_BOTH),
                ),
            ),
        )
        amount = np.where(satisfied, small, total[:, None]).astype(np.float64)
        part = self._freq[None, :] * amount  # (S, M): p_m * milli, as the artifact rounds it
        result = np.zeros(states, dtype=np.float64)
        if part.shape[1] == 0:
            return result
        for bucket in _BUCKETS_SUMMED:
            # cumsum adds left to right, as the artifact's loop over the typical pods does.
            added = np.cumsum(np.where(kind == bucket, part, 0.0), axis=1)[:, -1]
            result = result + added
        return result
