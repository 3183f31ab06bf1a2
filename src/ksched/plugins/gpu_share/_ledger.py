"""Per-GPU state of a node, derived from the pods on its NodeInfo.

# hkust-adsl/kubernetes-scheduler-simulator pkg/type/open-gpu-share/cache/{gpunodeinfo.go,
# deviceinfo.go} (GetUsedGpuMilli: each pod's milli on each GPU its gpu-index names),
# pkg/utils/utils.go (GetNodeResourceViaNodeInfo: GPU affinity of the node's pods)
The artifact keeps a side cache of devices, updated at Reserve and Unreserve. Here what a
node's GPUs hold is worked out from the pods its NodeInfo lists, so every NodeInfo the engine
makes — the snapshot's, one with the assumed pod, a preemption dry run's copy without its
victims — shows its own usage. A pod's GPUs come from, in order:

1. the GPUs Reserve chose for it, while the pod is assumed (or bound, until the cluster
   reports it with its gpu-index annotation);
2. its ``alibabacloud.com/gpu-index`` annotation;
3. for a GPU pod with neither (bound by another scheduler, or before a restart): the GPUs
   Open-Gpu-Share would give it now, pods taken in the NodeInfo's order; a pod that fits
   nowhere counts on no GPU.

What a NodeInfo shows is worked out once per NodeInfo version (object and generation).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from ...api import Node, Pod
from ...framework import NodeInfo
from ._allocate import open_gpu_share_fit
from ._names import GPU_COUNT, GPU_INDEX, GPU_MODEL, MAX_GPUS_PER_NODE, MILLI
from ._request import GpuRequest, gpu_request, parse_gpu_index

__all__ = ["GpuLedger", "NodeGpus", "node_gpu_count", "node_gpu_model"]

_NO_AFFINITY: Mapping[str, int] = {}


class NodeGpus(NamedTuple):
    """What the GPU plugins read of one node version (the artifact's NodeResource)."""

    model: str
    """The node's ``alibabacloud.com/gpu-card-model`` label ("" without one)."""
    free: tuple[int, ...]
    """Free milli per GPU, by device index (1000 minus what the pods there use)."""
    affinity: Mapping[str, int]
    """GPU affinity class -> how many of the node's pods have it (GpuClustering)."""
    total_free: int
    """GetTotalMilliGpuLeft."""
    fully_free: int
    """GetFullyFreeGpuNum."""
    ordered: tuple[int, ...]
    """``free`` sorted (what the fragmentation sees of the GPUs)."""

    @property
    def gpu_count(self) -> int:
        return len(self.free)

    @classmethod
    def of(cls, model: str, free: tuple[int, ...], affinity: Mapping[str, int]) -> NodeGpus:
        return cls(model, free, affinity, sum(free), free.count(MILLI), tuple(sorted(free)))


def node_gpu_count(node: Node) -> int:
    """GetGpuCountOfNode (capacity, else allocatable); 0 beyond MAX_GPUS_PER_NODE."""
    status = node.status
    count = status.capacity.get(GPU_COUNT)
    if count is None:
        count = status.allocatable.get(GPU_COUNT, 0)
    return count if 0 < count <= MAX_GPUS_PER_NODE else 0


def node_gpu_model(node: Node) -> str:
    """GetGpuModelOfNode."""
    return node.metadata.labels.get(GPU_MODEL, "")


class GpuLedger:
    """The GPUs Reserve gave to pods not yet reported bound with them, and each node
    version's GPU state. One per Open-Gpu-Share plugin; its Score policies read the same."""

    def __init__(self) -> None:
        self.reserved: dict[str, tuple[int, ...]] = {}
        """Pod uid -> the GPUs Reserve chose."""
        self.written: dict[str, str] = {}
        """Pod uid -> the gpu-index PreBind wrote (not a choice of the pod's own if it
        comes back unbound)."""
        self._nodes: dict[str, tuple[NodeInfo, int, NodeGpus]] = {}

    def node_gpus(self, info: NodeInfo) -> NodeGpus:
        """The GPU state ``info`` shows (kept per NodeInfo object and generation)."""
        kept = self._nodes.get(info.name)
        if kept is not None and kept[0] is info and kept[1] == info.generation:
            return kept[2]
        gpus = self._derive(info)
        self._nodes[info.name] = (info, info.generation, gpus)  # one entry per node name
        return gpus

    def preset(self, pod: Pod, request: GpuRequest) -> tuple[int, ...] | None:
        """The GPUs a pending pod names itself (a valid, non-empty gpu-index it was not
        given by an earlier attempt of this scheduler), else None."""
        if not request.index_text or self.written.get(pod.uid) == request.index_text:
            return None
        return request.devices or None

    def forget(self, uid: str) -> None:
        """Drop what is kept for the pod (gone, or reported bound with its gpu-index)."""
        self.reserved.pop(uid, None)
        self.written.pop(uid, None)

    def on_cluster_change(self, kind: str, old: Any, new: Any) -> None:
        """The cluster listener: a pod deleted, or reported bound carrying its GPUs in its
        annotation, needs no record here any more."""
        if kind != "Pod":
            return
        if new is None:
            if old is not None:
                self.forget(old.uid)
            return
        uid = new.uid
        if new.spec.node_name and uid in self.reserved:
            index = new.metadata.annotations.get(GPU_INDEX)
            if index and parse_gpu_index(index) == self.reserved[uid]:
                self.forget(uid)

    def _derive(self, info: NodeInfo) -> NodeGpus:
        node = info.node
        count = node_gpu_count(node)
        used = [0] * count
        affinity: dict[str, int] = {}
        unplaced: list[GpuRequest] = []
        reserved = self.reserved
        for pod_info in info.pods:
            pod = pod_info.pod
            request = gpu_request(pod)
            cls = request.affinity
            if cls is not None:
                affinity[cls] = affinity.get(cls, 0) + 1
            if request.milli <= 0:
                continue
            devices = reserved.get(pod.uid)
            if devices is None:
                devices = request.devices
                if not devices:
                    if devices == ():  # no annotation: placed below; a bad one counts nowhere
                        unplaced.append(request)
                    continue
            for device in devices:
                if 0 <= device < count:
                    used[device] += request.milli
        free = [MILLI - u for u in used]
        for request in unplaced:
            devices = open_gpu_share_fit(free, request, None)
            for device in devices or ():
                free[device] -= request.milli
        return NodeGpus.of(node_gpu_model(node), tuple(free), affinity or _NO_AFFINITY)
