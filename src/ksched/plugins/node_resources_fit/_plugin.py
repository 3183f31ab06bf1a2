"""NodeResourcesFit: does the node have room for the pod's requests; how full would it be.

# pkg/scheduler/framework/plugins/noderesources/fit.go (PreFilter, Filter, Fits, hints),
# resource_allocation.go (the scorer shared with BalancedAllocation), least_allocated.go,
# most_allocated.go, requested_to_capacity_ratio.go, plugins/helper/shape_score.go;
# pkg/scheduler/apis/config/v1/defaults.go and validation/validation_pluginargs.go (args).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ...api import Node, Pod, pod_requests
from ...framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    NodeInfo,
    QueueingHint,
    SpecMemo,
    Status,
)
from ...framework.batch import (
    POD_RESOURCES,
    RESOURCES,
    BoolArray,
    Capabilities,
    IntArray,
    NodeTable,
    SignFragment,
    resources_signer,
)
from ._args import (
    NodeResourcesFitArgs,
    validate_fit_args,
)
from ._constants import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    NAME,
    PRE_FILTER_STATE_KEY,
    PRE_SCORE_STATE_KEY,
    REASON_INSUFFICIENT_CPU,
    REASON_INSUFFICIENT_EPHEMERAL_STORAGE,
    REASON_INSUFFICIENT_MEMORY,
    REASON_TOO_MANY_PODS,
)
from ._fits import (
    PodResourceRequest,
    checked_scalars,
    compute_pod_resource_request,
    fits,
    insufficient,
)
from ._names import (
    is_scalar_resource_name,
)
from ._scorer import (
    ResourceAllocationScorer,
    strategy_batch_scorer,
    strategy_scorer,
)

# ---- the plugin ---------------------------------------------------------------------------


@attrs.frozen(slots=True)
class _PreFilterState:
    request: PodResourceRequest
    checked_scalars: tuple[tuple[str, int], ...]

    def clone(self) -> _PreFilterState:
        return self


@attrs.frozen(slots=True)
class _PreScoreState:
    pod_requests: tuple[int, ...]

    def clone(self) -> _PreScoreState:
        return self


class NodeResourcesFit:
    """Filters nodes without room for the pod's requests and scores the rest by the
    configured strategy (LeastAllocated by default)."""

    name = NAME
    capabilities = Capabilities(
        node_local_filter=True, node_local_score=True, pod_fields=(POD_RESOURCES,)
    )

    def __init__(self, args: NodeResourcesFitArgs | None = None) -> None:
        args = args or NodeResourcesFitArgs()
        validate_fit_args(args)
        self.args = args
        self._ignored = frozenset(args.ignored_resources)
        self._ignored_groups = frozenset(args.ignored_resource_groups)
        self._allocation = ResourceAllocationScorer(
            args.scoring_strategy.resources, use_requested=False
        )
        self._scorer = strategy_scorer(args.scoring_strategy)
        self._batch_scorer = strategy_batch_scorer(args.scoring_strategy)
        # Both states read only the pod's spec: one per spec, shared by a workload's pods.
        self._pre_filter_state = SpecMemo(self._make_pre_filter_state)
        self._pre_score_state = SpecMemo(self._make_pre_score_state)

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> NodeResourcesFit:
        return cls(NodeResourcesFitArgs.from_dict(args))

    # -- PreFilter / Filter

    def sign_pod(self, pod: Pod) -> Sequence[SignFragment]:
        """Fit and the resource scorers read the pod's requests and overhead."""
        return ((RESOURCES, resources_signer(pod)),)

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> None:
        state.write(PRE_FILTER_STATE_KEY, self._pre_filter_state(pod))
        return None

    def _make_pre_filter_state(self, pod: Pod) -> _PreFilterState:
        request = compute_pod_resource_request(pod)
        scalars = checked_scalars(request, self._ignored, self._ignored_groups)
        return _PreFilterState(request, scalars)

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status(
                Code.ERROR, (f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found',)
            )
        missing = insufficient(s.request, s.checked_scalars, node_info)
        if missing is None:
            return None
        unresolvable = any(m.unresolvable for m in missing)
        code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE
        return Status(code, tuple(m.reason for m in missing))

    def filter_batch(self, state: CycleState, pod: Pod, table: NodeTable) -> BoolArray | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return None
        request = s.request
        mask: BoolArray = table.free_pods > 0
        if request.milli_cpu > 0:
            mask &= request.milli_cpu <= table.free_cpu
        if request.memory > 0:
            mask &= request.memory <= table.free_memory
        if request.ephemeral_storage > 0:
            mask &= request.ephemeral_storage <= table.free_ephemeral
        for name, qty in s.checked_scalars:
            alloc_col, req_col = table.scalar(name)
            mask &= qty <= alloc_col - req_col
        return mask

    def filter_batch_statuses(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> list[Status | None]:
        """:meth:`filter`'s statuses for rejected ``rows``, one per row."""
        made, which = self.filter_batch_status_groups(state, pod, table, rows)
        return [made[i] for i in which.tolist()]

    def filter_batch_status_groups(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> tuple[list[Status | None], IntArray]:
        """:meth:`filter`'s statuses for rejected ``rows``, grouped: each row's missing
        resources (in :func:`insufficient`'s order) as bits, one Status per distinct
        combination, and per row the index of its Status."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            each = [self.filter(state, pod, info) for info in map(table.infos.__getitem__, rows)]
            return each, np.arange(len(each), dtype=np.int64)
        request = s.request
        checks: list[tuple[str, BoolArray, BoolArray]] = [
            (
                REASON_TOO_MANY_PODS,
                table.pod_count[rows] >= table.alloc_pods[rows],
                np.zeros(len(rows), dtype=np.bool_),
            )
        ]
        for qty, alloc_col, req_col, reason in (
            (request.milli_cpu, table.alloc_cpu, table.req_cpu, REASON_INSUFFICIENT_CPU),
            (request.memory, table.alloc_memory, table.req_memory, REASON_INSUFFICIENT_MEMORY),
            (
                request.ephemeral_storage,
                table.alloc_ephemeral,
                table.req_ephemeral,
                REASON_INSUFFICIENT_EPHEMERAL_STORAGE,
            ),
        ):
            if qty > 0:
                alloc = alloc_col[rows]
                checks.append((reason, qty > alloc - req_col[rows], qty > alloc))
        for name, qty in s.checked_scalars:
            alloc_col, req_col = table.scalar(name)
            alloc = alloc_col[rows]
            checks.append((f"Insufficient {name}", qty > alloc - req_col[rows], qty > alloc))
        missing = np.zeros(len(rows), dtype=np.int64)
        unresolvable = np.zeros(len(rows), dtype=np.bool_)
        for bit, (_, lacking, beyond) in enumerate(checks):
            missing |= lacking.astype(np.int64) << bit
            unresolvable |= lacking & beyond
        codes = missing * 2 + unresolvable
        distinct, which = np.unique(codes, return_inverse=True)
        made: list[Status | None] = []
        for code in distinct.tolist():
            reasons = tuple(
                reason for bit, (reason, _, _) in enumerate(checks) if code >> 1 >> bit & 1
            )
            kind = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if code & 1 else Code.UNSCHEDULABLE
            made.append(Status(kind, reasons))
        return made, which.astype(np.int64, copy=False)

    # -- PreScore / Score

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> None:
        state.write(PRE_SCORE_STATE_KEY, self._pre_score_state(pod))
        return None

    def _make_pre_score_state(self, pod: Pod) -> _PreScoreState:
        return _PreScoreState(self._allocation.pod_request_list(pod))

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        s = state.get(PRE_SCORE_STATE_KEY)
        reqs = s.pod_requests if s is not None else self._allocation.pod_request_list(pod)
        return self._scorer(self._allocation.gather(node_info, reqs))

    def score_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray | None:
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None or self._batch_scorer is None or not len(rows):
            return None
        return self._batch_scorer(self._allocation.gather_columns(table, rows, s.pod_requests))

    def score_extensions(self) -> None:
        return None

    # -- EnqueueExtensions

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN
                ),
                self.is_schedulable_after_pod_event,
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE
                ),
                self.is_schedulable_after_node_change,
            ),
        ]

    def is_schedulable_after_pod_event(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """A scheduled pod deleted, or a pod scaled down in something ``pod`` requests."""
        if (new is not None and not isinstance(new, Pod)) or not isinstance(old, Pod):
            return QueueingHint.QUEUE
        if new is None:
            if not old.spec.node_name and not old.status.nominated_node_name:
                return QueueingHint.SKIP
            return QueueingHint.QUEUE
        if _scaled_down_for(pod, old, new):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def is_schedulable_after_node_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """A node added that fits the pod, or one whose allocatable grew in what it asks."""
        if not isinstance(new, Node) or (old is not None and not isinstance(old, Node)):
            return QueueingHint.QUEUE
        if fits(pod, NodeInfo.of(new)):  # something is missing: the pod cannot go there
            return QueueingHint.SKIP
        if old is None:
            return QueueingHint.QUEUE
        if _requested_resources_increased(pod, old, new):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP


def _scaled_down_for(target: Pod, old: Pod, new: Pod) -> bool:
    """Upstream isSchedulableAfterPodScaleDown."""
    if new.uid == target.uid:
        return True
    if not new.spec.node_name:
        return False
    before = compute_pod_resource_request(old)
    after = compute_pod_resource_request(new)
    before_scalar = dict(before.scalars)
    after_scalar = dict(after.scalars)
    for name, qty in pod_requests(target).items():
        if qty == 0:
            continue
        if name == CPU:
            if before.milli_cpu > after.milli_cpu:
                return True
        elif name == MEMORY:
            if before.memory > after.memory:
                return True
        elif name == EPHEMERAL_STORAGE:
            if before.ephemeral_storage > after.ephemeral_storage:
                return True
        elif is_scalar_resource_name(name) and before_scalar.get(name, 0) > after_scalar.get(
            name, 0
        ):
            return True
    return False


def _requested_resources_increased(pod: Pod, old: Node, new: Node) -> bool:
    """Upstream haveAnyRequestedResourcesIncreased."""
    request = compute_pod_resource_request(pod)
    before = NodeInfo.of(old).allocatable
    after = NodeInfo.of(new).allocatable
    if after.allowed_pod_number > before.allowed_pod_number:
        return True
    if (
        request.milli_cpu == 0
        and request.memory == 0
        and request.ephemeral_storage == 0
        and not request.scalars
    ):
        return False
    if (
        (request.milli_cpu > 0 and after.milli_cpu > before.milli_cpu)
        or (request.memory > 0 and after.memory > before.memory)
        or (request.ephemeral_storage > 0 and after.ephemeral_storage > before.ephemeral_storage)
    ):
        return True
    return any(
        qty != 0 and after.scalar.get(name, 0) > before.scalar.get(name, 0)
        for name, qty in request.scalars
    )
