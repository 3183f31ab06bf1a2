"""Which GPUs of a node a pod may take, and which it is given.

# hkust-adsl/kubernetes-scheduler-simulator pkg/type/open-gpu-share/cache/gpunodeinfo.go
# (AllocateGpuId), pkg/simulator/plugin/open_gpu_share.go (allocateGpuIdBasedOnBestFit,
# ...WorstFit, ...RandomFit), pkg/type/resource.go (AllocateExclusiveGpuId,
# NodeResource.Sub, SortedMilliGpuLeftIndexList)
A node's GPUs are a sequence of free milli per GPU (1000 minus what its pods use), indexed as
the devices are.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from ._names import MILLI
from ._request import GpuRequest

__all__ = [
    "best_fit_gpu",
    "exclusive_gpus",
    "open_gpu_share_fit",
    "random_fit_gpu",
    "subtract",
    "worst_fit_gpu",
]

Gpus = tuple[int, ...]


def open_gpu_share_fit(
    free: Sequence[int], request: GpuRequest, preset: Gpus | None
) -> Gpus | None:
    """AllocateGpuId: the GPUs Open-Gpu-Share would give the pod, None when it does not fit.

    ``preset`` is the pod's own valid gpu-index: each GPU named must have the pod's milli
    free. One GPU: the fullest one that still has room (lowest index among equals). Several:
    GPUs in index order, each taking the pod's milli as often as it has room for it."""
    milli, count = request.milli, request.gpu_count
    if milli <= 0 or count <= 0 or not free:
        return None
    n = len(free)
    if preset:
        if all(0 <= d < n and free[d] >= milli for d in preset):
            return preset
        return None
    if count == 1:
        found = best_fit_gpu(free, milli)
        return None if found is None else (found,)
    taken: list[int] = []
    left = list(free)
    device = 0
    while device < n and len(taken) < count:  # the artifact's two pointers
        if left[device] >= milli:
            taken.append(device)
            left[device] -= milli
        else:
            device += 1
    return tuple(taken) if len(taken) == count else None


def best_fit_gpu(free: Sequence[int], milli: int) -> int | None:
    """The GPU with the least free milli that is at least ``milli`` (lowest index first)."""
    found: int | None = None
    for device, left in enumerate(free):
        if left >= milli and (found is None or left < free[found]):
            found = device
    return found


def worst_fit_gpu(free: Sequence[int], milli: int) -> int | None:
    """The GPU with the most free milli, if at least ``milli`` (lowest index first)."""
    found: int | None = None
    for device, left in enumerate(free):
        if left >= milli and (found is None or left > free[found]):
            found = device
    return found


def random_fit_gpu(free: Sequence[int], milli: int, rng: random.Random) -> int | None:
    """One of the GPUs with ``milli`` free, uniformly (reservoir sampling: one draw of
    ``rng.randrange(k)`` at the k-th candidate, as the artifact draws ``rand.Intn(k)``)."""
    found: int | None = None
    candidates = 0
    for device, left in enumerate(free):
        if left >= milli:
            candidates += 1
            if rng.randrange(candidates) == 0:
                found = device
    return found


def exclusive_gpus(free: Sequence[int], total_milli: int) -> Gpus | None:
    """AllocateExclusiveGpuId: the lowest-indexed whole free GPUs covering ``total_milli``
    (none for a pod without GPUs); None when the node has too few of them."""
    taken: list[int] = []
    wanted = total_milli
    for device, left in enumerate(free):
        if wanted <= 0:
            break
        if left == MILLI:
            taken.append(device)
            wanted -= MILLI
    return None if wanted > 0 else tuple(taken)


def subtract(cpu_left: int, free: Sequence[int], request: GpuRequest) -> tuple[int, list[int]]:
    """NodeResource.Sub with its error dropped, as FGD and Bellman use it: the node's CPU
    and GPUs after placing the pod's milli on the fullest GPUs that still fit it.

    A node short of CPU or of GPU count is left as it is; a node short of fitting GPUs keeps
    what was taken before the shortage showed (the artifact's partial result)."""
    out = list(free)
    if cpu_left < request.cpu or len(free) < request.gpu_count:
        return cpu_left, out
    cpu_left -= request.cpu
    wanted = request.gpu_count
    if wanted == 0:
        return cpu_left, out
    for device in sorted(range(len(out)), key=out.__getitem__):  # stable, ascending
        if request.milli <= out[device]:
            wanted -= 1
            out[device] -= request.milli
            if wanted <= 0:
                break
    return cpu_left, out
