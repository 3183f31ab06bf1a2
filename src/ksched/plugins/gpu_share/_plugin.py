"""Open-Gpu-Share: GPUs shared by milli or taken whole, as Filter, Reserve and PreBind.

# hkust-adsl/kubernetes-scheduler-simulator pkg/simulator/plugin/open_gpu_share.go (Filter,
# Reserve, Unreserve, allocateGpuId), pkg/type/open-gpu-share/cache/gpunodeinfo.go
# (AllocateGpuId), pkg/utils/utils.go (IsNodeAccessibleToPodByType)
Filter passes pods without gpu-milli; it rejects a node without GPUs, of a model the pod
does not accept, or without room ("Node:<name>", Unschedulable, for each). Reserve picks
the GPUs by the configured selection method and records them; Unreserve forgets them;
PreBind writes them to the pod as ``alibabacloud.com/gpu-index`` (the artifact patches the
pod at Reserve; here the write waits for the binding cycle, so the scheduling loop never
does I/O). On a cluster that cannot write annotations the choice is kept until the pod
leaves.

Where the artifact stops the process (a pod asking for several GPUs in part, a selection
that finds no GPU), Reserve gives an Error status instead: several GPUs in part are placed
by Open-Gpu-Share's own two-pointer allocation.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

import attrs
import numpy as np

from ...api import Pod
from ...cluster import InMemoryCluster
from ...framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    NodeInfo,
    Status,
    parse_plugin_args,
)
from ...framework.batch import BoolArray, IntArray, NodeTable, SignFragment
from ._allocate import (
    best_fit_gpu,
    exclusive_gpus,
    open_gpu_share_fit,
    random_fit_gpu,
    worst_fit_gpu,
)
from ._columns import GpuColumns
from ._ledger import GpuLedger, NodeGpus
from ._names import (
    DEVICE_SEPARATOR,
    GPU_INDEX,
    GPU_MODEL,
    MILLI,
    OPEN_GPU_SHARE,
    reject_reason,
)
from ._request import GpuRequest, accessible, gpu_request

__all__ = [
    "SIGN_KEY",
    "GpuSelector",
    "OpenGpuShare",
    "OpenGpuShareArgs",
    "PodAnnotator",
    "gpu_fragment",
    "model_mask",
    "select_by_method",
]

PRE_FILTER_STATE_KEY = "PreFilter" + OPEN_GPU_SHARE
SIGN_KEY = "alibabacloud.com/gpu"
"""The signature fragment of what the GPU plugins read of a pod's annotations."""

SelectionMethod = Literal["auto", "best", "worst", "random", "FGDScore", "DotProductScore"]


@attrs.frozen(kw_only=True)
class OpenGpuShareArgs:
    """``pluginConfig`` args of Open-Gpu-Share."""

    gpu_sel_method: SelectionMethod = "auto"
    """How Reserve picks a pod's GPUs: ``best`` (the fullest GPU with room), ``worst``
    (the emptiest), ``random``, ``FGDScore`` / ``DotProductScore`` (the GPU that plugin
    scores best); ``auto``: the method of the profile's first GPU Score policy (``best``
    without one), as the artifact's run scripts configure it."""


@runtime_checkable
class PodAnnotator(Protocol):
    """A cluster that can write annotations on a pod (``ksched.InMemoryCluster`` does it
    in place; another store offers this method to have PreBind write gpu-index)."""

    async def annotate_pod(self, pod: Pod, annotations: Mapping[str, str]) -> None: ...


@runtime_checkable
class GpuSelector(Protocol):
    """A GPU Score policy that also says which GPUs a pod gets on a node."""

    name: str
    gpu_selection: str
    """The selection method the policy's experiments use (``best``, ``random``, its name)."""

    def select_gpus(
        self, pod: Pod, request: GpuRequest, node_info: NodeInfo, gpus: NodeGpus
    ) -> tuple[int, ...] | None:
        """The GPUs the pod takes on the node by this policy; None when none fits."""
        ...


_SKIP = Status(Code.SKIP)


_REJECTIONS: dict[str, Status] = {}
_REJECTIONS_LIMIT = 1 << 17


def _reject(node_name: str) -> Status:
    """The node's rejection, one object per node name (a status per node name is what
    the artifact says; made once, it costs nothing when a pod fits nowhere)."""
    status = _REJECTIONS.get(node_name)
    if status is None:
        if len(_REJECTIONS) >= _REJECTIONS_LIMIT:
            _REJECTIONS.clear()
        status = _REJECTIONS[node_name] = Status(
            Code.UNSCHEDULABLE, (reject_reason(node_name),), plugin=OPEN_GPU_SHARE
        )
    return status


class OpenGpuShare:
    """Filter, Reserve/Unreserve and PreBind over per-GPU milli (see the module)."""

    name = OPEN_GPU_SHARE

    def __init__(self, args: OpenGpuShareArgs, handle: Handle) -> None:
        self.args = args
        self._handle = handle
        self.ledger = GpuLedger()
        """The GPUs reserved per pod and each node version's GPU state (shared with the
        profile's GPU Score policies)."""
        self._columns = GpuColumns(self.ledger, _reject)
        self._selector: GpuSelector | None = None
        self._selector_known = False
        cluster = handle.cluster
        self._annotator: PodAnnotator | None = (
            cluster if isinstance(cluster, PodAnnotator) else None
        )
        cluster.subscribe(self.ledger.on_cluster_change)

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> OpenGpuShare:
        """On the in-memory cluster (without an ``annotate_pod`` of its own), a plugin whose
        PreBind is a plain ``def`` writing the annotation in place: the binding cycle then
        never waits."""
        parsed = parse_plugin_args(OpenGpuShareArgs, args, plugin=cls.name)
        cluster = handle.cluster
        if isinstance(cluster, InMemoryCluster) and not isinstance(cluster, PodAnnotator):
            return _InMemoryOpenGpuShare(parsed, handle)
        return cls(parsed, handle)

    def close(self) -> None:
        """Stop following the cluster."""
        self._handle.cluster.unsubscribe(self.ledger.on_cluster_change)

    def columns(self, table: NodeTable) -> GpuColumns:
        """The GPU arrays over ``table``'s rows, brought up to date."""
        self._columns.sync(table)
        return self._columns

    # -- signatures, events

    def sign_pod(self, pod: Pod) -> Sequence[SignFragment]:
        return ((SIGN_KEY, gpu_fragment(pod, self.ledger)),)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE,
                    ActionType.ADD
                    | ActionType.UPDATE_NODE_LABEL
                    | ActionType.UPDATE_NODE_ALLOCATABLE,
                )
            ),
        ]

    # -- PreFilter / Filter

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        request = gpu_request(pod)
        if not request.wants_gpu:
            return _SKIP  # Filter passes every node for a pod without gpu-milli
        state.write(PRE_FILTER_STATE_KEY, request)
        return None

    def pre_filter_extensions(self) -> None:
        return None

    def _request(self, state: CycleState, pod: Pod) -> GpuRequest:
        request: GpuRequest | None = state.get(PRE_FILTER_STATE_KEY)
        return gpu_request(pod) if request is None else request

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        request = self._request(state, pod)
        if not request.wants_gpu:
            return None
        gpus = self.ledger.node_gpus(node_info)
        if gpus.gpu_count == 0 or not accessible(gpus.model, request):
            return _reject(node_info.name)
        if open_gpu_share_fit(gpus.free, request, self.ledger.preset(pod, request)) is None:
            return _reject(node_info.name)
        return None

    def filter_batch(self, state: CycleState, pod: Pod, table: NodeTable) -> BoolArray | None:
        request = self._request(state, pod)
        if not request.wants_gpu:
            return np.ones(len(table), dtype=np.bool_)
        if self.ledger.preset(pod, request) is not None:
            return None  # the pod names its GPUs: judged per node
        cols = self.columns(table)
        milli, count = request.milli, request.gpu_count
        if count <= 0:
            return np.zeros(len(table), dtype=np.bool_)
        # A node without GPUs has PAD as its free milli and no full GPU: it fails each test.
        mask: BoolArray
        if count == 1:
            mask = cols.max_free >= milli
        elif milli == MILLI:
            mask = cols.full >= count
        else:
            free = cols.free
            mask = np.where(free >= milli, free // milli, 0).sum(axis=1) >= count
        if request.model:
            mask &= model_mask(table, request)
        return mask

    def filter_batch_status_groups(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> tuple[list[Status | None], IntArray]:
        """Every rejected row has its own reason (its node's name)."""
        distinct: list[Status | None] = self.columns(table).rejections[rows].tolist()
        return distinct, np.arange(len(distinct), dtype=np.int64)

    # -- Reserve / Unreserve

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        request = gpu_request(pod)
        if not request.wants_gpu:
            return None  # pods without GPUs are not recorded
        node_info = self._handle.snapshot.get(node_name)
        if node_info is None:
            return Status.error(f"failed to get node({node_name}) to allocate gpu")
        gpus = self.ledger.node_gpus(node_info)
        found = self._choose(pod, request, node_info, gpus)
        if isinstance(found, Status):
            return found
        self.ledger.reserved[pod.uid] = found
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        self.ledger.reserved.pop(pod.uid, None)

    def _choose(
        self, pod: Pod, request: GpuRequest, node_info: NodeInfo, gpus: NodeGpus
    ) -> tuple[int, ...] | Status:
        """allocateGpuId: the pod's own gpu-index, else the configured selection."""
        node_name = node_info.name
        preset = self.ledger.preset(pod, request)
        if preset is not None:
            if all(0 <= d < gpus.gpu_count and gpus.free[d] >= request.milli for d in preset):
                return preset
            return Status.error(
                f"pod {pod.key}: gpu-index {request.index_text!r} does not fit node {node_name}"
            )
        if request.milli < MILLI and request.gpu_count > 1:
            found = open_gpu_share_fit(gpus.free, request, None)
        else:
            found = self._select(pod, request, node_info, gpus)
        if not found:
            return Status.error(f"failed to allocate gpu to pod({pod.key}) to node({node_name})")
        return found

    def _select(
        self, pod: Pod, request: GpuRequest, node_info: NodeInfo, gpus: NodeGpus
    ) -> tuple[int, ...] | None:
        method = self.args.gpu_sel_method
        if method in ("best", "worst", "random"):
            return select_by_method(method, request, gpus.free, self._handle.rng)
        policy = self._policy(method)
        if policy is None:
            if method != "auto":
                return None  # the policy named is not in the profile
            return select_by_method("best", request, gpus.free, self._handle.rng)
        return policy.select_gpus(pod, request, node_info, gpus)

    def _policy(self, method: str) -> GpuSelector | None:
        """The profile's Score policy that ``method`` names (``auto``: the first one)."""
        if method == "auto":
            if not self._selector_known:  # the profile is complete from the first cycle on
                self._selector = next(
                    (p for _, p in self._handle.plugins_at("score") if isinstance(p, GpuSelector)),
                    None,
                )
                self._selector_known = True
            return self._selector
        for name, plugin in self._handle.plugins_at("score"):
            if name == method and isinstance(plugin, GpuSelector):
                return plugin
        return None

    # -- PreBind

    def _index_to_write(self, pod: Pod) -> str | None:
        """The gpu-index PreBind must write on the pod (None: nothing to write)."""
        devices = self.ledger.reserved.get(pod.uid)
        if devices is None:
            return None
        index = DEVICE_SEPARATOR.join(map(str, devices))
        return None if pod.metadata.annotations.get(GPU_INDEX) == index else index

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if self._annotator is None or self._index_to_write(pod) is None:
            return _SKIP
        return None

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        index = self._index_to_write(pod)
        if index is None or self._annotator is None:
            return None
        await self._annotator.annotate_pod(pod, {GPU_INDEX: index})
        self.ledger.written[pod.uid] = index
        return None


class _InMemoryOpenGpuShare(OpenGpuShare):
    """Open-Gpu-Share on an InMemoryCluster: PreBind writes the annotation in place."""

    def __init__(self, args: OpenGpuShareArgs, handle: Handle) -> None:
        super().__init__(args, handle)
        cluster = handle.cluster
        assert isinstance(cluster, InMemoryCluster)
        self._memory = cluster

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return _SKIP if self._index_to_write(pod) is None else None

    def pre_bind(  # type: ignore[override]  # a plain def: the cycle never waits
        self, state: CycleState, pod: Pod, node_name: str
    ) -> Status | None:
        index = self._index_to_write(pod)
        if index is None:
            return None
        current = self._memory.get_pod(pod.key)
        if current is None or current.uid != pod.uid:
            return Status.error(f"pod {pod.key}: not found")
        annotations = {**current.metadata.annotations, GPU_INDEX: index}
        metadata = attrs.evolve(current.metadata, annotations=annotations)
        self._memory.apply(attrs.evolve(current, metadata=metadata))
        self.ledger.written[pod.uid] = index
        return None


def gpu_fragment(pod: Pod, ledger: GpuLedger) -> object:
    """What the GPU plugins read of a pod's annotations (its signature fragment)."""
    request = gpu_request(pod)
    return (request.milli, request.gpu_count, request.model, ledger.preset(pod, request))


def select_by_method(
    method: str, request: GpuRequest, free: Sequence[int], rng: random.Random
) -> tuple[int, ...] | None:
    """The artifact's allocateGpuIdBasedOn{BestFit,WorstFit,RandomFit}: for part of a GPU,
    the fullest (``best``), emptiest (``worst``) or any (``random``) GPU with room; whole
    GPUs: the lowest-indexed free ones."""
    if request.milli >= MILLI:
        return exclusive_gpus(free, request.total_milli)
    if method == "random":
        device = random_fit_gpu(free, request.milli, rng)
    elif method == "worst":
        device = worst_fit_gpu(free, request.milli)
    else:
        device = best_fit_gpu(free, request.milli)
    return None if device is None else (device,)


def model_mask(table: NodeTable, request: GpuRequest) -> BoolArray:
    """Rows whose node's GPU model the pod accepts (IsNodeAccessibleToPodByType)."""
    codes, vocabulary = table.label_codes(GPU_MODEL)
    if not request.models:
        empty = vocabulary.get("")
        has_model: BoolArray = codes >= 0
        return has_model if empty is None else has_model & (codes != empty)
    wanted = [vocabulary[m] for m in request.models if m in vocabulary]
    return np.isin(codes, np.array(wanted, dtype=np.int64))
