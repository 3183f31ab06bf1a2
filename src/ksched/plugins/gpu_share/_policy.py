"""What the six GPU Score policies share: the pod's GPU ask and the nodes' GPU state.

# hkust-adsl/kubernetes-scheduler-simulator pkg/utils/utils.go (GetNodeResourceViaNodeInfo:
# cpu left = allocatable - requested; GPUs as Open-Gpu-Share holds them)
A policy reads the GPU state through the profile's Open-Gpu-Share plugin, so it sees the
GPUs Reserve gave to pods still being bound; without that plugin it derives its own (from
the pods' gpu-index annotations).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from ...api import Pod
from ...framework import Code, Handle, NodeInfo, Status
from ...framework.batch import RESOURCES, NodeTable, SignFragment, resources_signer
from ._columns import GpuColumns
from ._ledger import GpuLedger, NodeGpus
from ._plugin import SIGN_KEY, OpenGpuShare, gpu_fragment, select_by_method
from ._request import GpuRequest

__all__ = ["GpuPolicy", "cpu_left"]


def cpu_left(node_info: NodeInfo) -> int:
    """The node's allocatable CPU milli minus what its pods request (MilliCpuLeft)."""
    return node_info.allocatable.milli_cpu - node_info.requested.milli_cpu


class GpuPolicy:
    """Base of the GPU Score policies: the GPU state, signing, GPU selection."""

    name: str
    gpu_selection: str = "best"
    """The GPU selection method the artifact's experiments pair with this policy."""

    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        self._share: OpenGpuShare | None = None
        self._share_known = False
        self._own = GpuLedger()
        self._own_columns = GpuColumns(self._own, lambda name: Status(Code.UNSCHEDULABLE))

    def _open_gpu_share(self) -> OpenGpuShare | None:
        if not self._share_known:  # the profile is complete from the first cycle on
            for point in ("reserve", "filter"):
                self._share = next(
                    (p for _, p in self._handle.plugins_at(point) if isinstance(p, OpenGpuShare)),
                    None,
                )
                if self._share is not None:
                    break
            self._share_known = True
        return self._share

    @property
    def ledger(self) -> GpuLedger:
        share = self._open_gpu_share()
        return self._own if share is None else share.ledger

    def node_gpus(self, node_info: NodeInfo) -> NodeGpus:
        return self.ledger.node_gpus(node_info)

    def columns(self, table: NodeTable) -> GpuColumns:
        share = self._open_gpu_share()
        if share is not None:
            return share.columns(table)
        self._own_columns.sync(table)
        return self._own_columns

    def sign_pod(self, pod: Pod) -> Sequence[SignFragment]:
        """The policies read the pod's requests (its cpu) and its GPU annotations."""
        return ((RESOURCES, resources_signer(pod)), (SIGN_KEY, gpu_fragment(pod, self.ledger)))

    def score_extensions(self) -> None:
        return None

    def select_gpus(
        self, pod: Pod, request: GpuRequest, node_info: NodeInfo, gpus: NodeGpus
    ) -> tuple[int, ...] | None:
        """The GPUs the pod takes by this policy's selection method."""
        return select_by_method(self.gpu_selection, request, gpus.free, self._rng())

    def _rng(self) -> random.Random:
        return self._handle.rng
