"""What a pod asks of the GPUs, read once from its annotations.

# hkust-adsl/kubernetes-scheduler-simulator pkg/type/open-gpu-share/utils/pod.go
# (GetGpuMilliFromPodAnnotation, GetGpuCountFromPodAnnotation, GetGpuModelFromPodAnnotation,
# GetGpuIdFromAnnotation, GpuIdStrToIntList, GetGpuAffinityFromPodAnnotation),
# pkg/utils/utils.go (GetPodResource, IsNodeAccessibleToPodByType)
A gpu-milli that is not a quantity reads as 0 and a gpu-count that is not a decimal integer
(or is negative) as 0, as the artifact reads them; a gpu-index that is not a list of
integers counts as absent.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping
from typing import NamedTuple

from ...api import InvalidQuantityError, Pod, parse_quantity, pod_requests
from ._names import (
    DEVICE_SEPARATOR,
    GPU_COUNT,
    GPU_INDEX,
    GPU_MILLI,
    GPU_MODEL,
    MAX_GPU_MILLI,
    MILLI,
    MODEL_SEPARATOR,
    SHARE_GPU,
)

__all__ = ["GpuRequest", "accessible", "gpu_request", "parse_gpu_index"]

DEFAULT_MILLI_CPU = 100
"""CPU milli a container without a cpu request counts (GetNonzeroRequests)."""

_INT64_MAX = (1 << 63) - 1
_DECIMAL = re.compile(r"[+-]?[0-9]{1,19}")
_QUANTITY_HEAD = re.compile(r"([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE]([+-]?[0-9]+))?")
_MAX_EXPONENT = 30
"""Exponents beyond this are not worked out: the value is far past MAX_GPU_MILLI (or 0)."""


class GpuRequest(NamedTuple):
    """A pod's GPU ask (the artifact's PodResource, with the annotation strings kept).

    A named tuple: one is made per pod version on the hot path, and read per node."""

    milli: int
    """Milli of each GPU (``gpu-milli``); at most 0 for a pod without GPUs."""
    gpu_count: int
    """How many GPUs (``gpu-count``)."""
    model: str
    """The ``gpu-card-model`` annotation as written (``""`` when absent)."""
    models: tuple[str, ...]
    """The models it accepts (empty: any)."""
    index_text: str
    """The ``gpu-index`` annotation as written (``""`` when absent)."""
    devices: tuple[int, ...] | None
    """``index_text`` read (GpuIdStrToIntList): () when absent, None when not a list of ints."""
    cpu: int
    """CPU milli the scoring rules count: each container's request, 100 without one."""
    has_requests: bool
    """Whether the pod requests any resource at all (FGD gives such pods 100)."""
    affinity: str | None
    """The pod's GPU affinity class (GetGpuAffinityFromPodAnnotation); None: no GPU. The
    artifact stops on combinations it has no class for (several GPUs, each in part); those
    get a class of their own here."""
    total_milli: int
    """``milli * count`` (the artifact's TotalMilliGpu)."""
    is_share: bool
    """Part of one GPU (``count == 1``, ``milli < 1000``): IsGpuShare."""

    @property
    def wants_gpu(self) -> bool:
        """Whether the GPU plugins take the pod into account (gpu-milli above 0)."""
        return self.milli > 0

    def spec_key(self) -> tuple[int, int, int, str]:
        """(cpu, milli, gpu count, model): what the score policies read of the pod."""
        return (self.cpu, self.milli, self.gpu_count, self.model)


def affinity_class(milli: int, count: int) -> str | None:
    """GetGpuAffinityFromPodAnnotation, for the annotation values ``milli`` and ``count``."""
    if count == 0:
        return None
    if count == 1 and milli < MILLI:
        return SHARE_GPU
    if milli == MILLI:
        return f"{count}-gpu"
    return f"{count}x{milli}m-gpu"


def accessible(node_model: str, request: GpuRequest) -> bool:
    """IsNodeAccessibleToPodByType: a pod naming models fits only nodes of one of them (a
    model annotation of separators alone names none, but still keeps off GPU-less nodes)."""
    if not request.model:
        return True
    if not node_model:
        return False
    return not request.models or node_model in request.models


@functools.lru_cache(maxsize=4096)
def parse_gpu_index(text: str) -> tuple[int, ...] | None:
    """GpuIdStrToIntList: ``"0-1-2"`` -> (0, 1, 2); None when a part is not an integer."""
    if not text:
        return ()
    out: list[int] = []
    for part in text.split(DEVICE_SEPARATOR):
        value = _atoi(part)
        if value is None:
            return None
        out.append(value)
    return tuple(out)


def _atoi(text: str) -> int | None:
    """Go's strconv.Atoi: an optionally signed decimal that fits int64, else None."""
    if len(text) > 20 or _DECIMAL.fullmatch(text) is None:
        return None
    value = int(text)
    return value if -_INT64_MAX - 1 <= value <= _INT64_MAX else None


@functools.lru_cache(maxsize=1024)
def _gpu_milli(text: str | None) -> int:
    """GetGpuMilliFromPodAnnotation: the quantity's Value() (rounded up), 0 when invalid;
    kept within [., MAX_GPU_MILLI]."""
    if not text or len(text) > 64:
        return 0
    head = _QUANTITY_HEAD.fullmatch(text)
    if head is not None and head[3] is not None and abs(int(head[3])) > _MAX_EXPONENT:
        if float(head[2]) == 0.0:
            return 0
        negative = head[1] == "-"
        if int(head[3]) > 0:
            return 0 if negative else MAX_GPU_MILLI
        return 0 if negative else 1  # a tiny positive value, rounded up
    try:
        value = math.ceil(parse_quantity(text).to_fraction())  # exponents bounded above
    except InvalidQuantityError:
        return 0
    return min(value, MAX_GPU_MILLI)


@functools.lru_cache(maxsize=1024)
def _gpu_count(text: str | None) -> int:
    """GetGpuCountFromPodAnnotation: strconv.Atoi of the annotation, 0 unless >= 0."""
    value = _atoi(text) if text else None
    return value if value is not None and value >= 0 else 0


def _scoring_cpu(pod: Pod) -> int:
    """The artifact's PodResource.MilliCpu: the containers' cpu requests, 100 each for a
    container without one (GetNonzeroRequests; init containers and overhead not counted)."""
    total = 0
    for container in pod.spec.containers:
        cpu = container.requests.get("cpu")
        total += DEFAULT_MILLI_CPU if cpu is None else cpu
    return total


def _read(pod: Pod) -> GpuRequest:
    annotations: Mapping[str, str] = pod.metadata.annotations
    milli = _gpu_milli(_text(annotations.get(GPU_MILLI)))
    count = _gpu_count(_text(annotations.get(GPU_COUNT)))
    model = _text(annotations.get(GPU_MODEL)) or ""
    index = _text(annotations.get(GPU_INDEX)) or ""
    return GpuRequest(
        milli,
        count,
        model,
        _models(model),
        index,
        parse_gpu_index(index),
        _scoring_cpu(pod),
        bool(pod_requests(pod)),
        affinity_class(milli, count),
        milli * count,
        count == 1 and milli < MILLI,
    )


@functools.lru_cache(maxsize=256)
def _models(model: str) -> tuple[str, ...]:
    return tuple(m for m in model.split(MODEL_SEPARATOR) if m)


def _text(value: object) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


_LIMIT = 1 << 16
_kept: dict[str, tuple[object, object, GpuRequest]] = {}


def gpu_request(pod: Pod) -> GpuRequest:
    """The pod's GpuRequest, read once per pod version (its metadata and containers)."""
    uid = pod.uid
    kept = _kept.get(uid)
    if kept is not None and kept[0] is pod.metadata and kept[1] is pod.spec.containers:
        return kept[2]
    request = _read(pod)
    if len(_kept) >= _LIMIT:
        _kept.clear()
    _kept[uid] = (pod.metadata, pod.spec.containers, request)
    return request
