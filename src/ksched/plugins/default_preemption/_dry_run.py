"""Dry runs decided by the NodeResourcesFit comparisons, and what dry runs share.

# pkg/scheduler/framework/plugins/noderesources/fit.go (fitsRequest), replayed
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs

from ...api import Node, Pod, PodDisruptionBudget
from ...framework import Code, CycleState, Handle, NodeInfo, NodeToStatus, PodInfo, Resource, Status
from .. import node_resources_fit as fit
from ..node_affinity import NodeAffinity
from ..node_name import NodeName
from ..node_unschedulable import NodeUnschedulable
from ..taint_toleration import TaintToleration
from ._candidates import Candidate, Victims, by_importance

__all__ = [
    "MSG_NO_VICTIMS",
    "DryRunContext",
    "FitBound",
    "StepError",
    "VictimsEntry",
    "aggregate_errors",
    "dry_run_context",
    "fit_error_message",
    "fit_outcome",
    "node_checks_pass",
    "order_reads_now",
]

MSG_NO_VICTIMS = "No preemption victims found for incoming pod"

_CPU, _MEMORY, _EPHEMERAL_STORAGE = "cpu", "memory", "ephemeral-storage"
_NODE_ONLY_FILTERS: tuple[type, ...] = (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity)
"""Built-in Filters whose verdict reads only the Node object and the pod, never the pods
on the node: removing or adding pods cannot change it."""

NodeCheck = Callable[[CycleState, Pod, NodeInfo], "Status | None"]


def fit_error_message(num_all_nodes: int, statuses: NodeToStatus) -> str:
    """FitError.Error() text for preemption's own diagnosis (no PreFilter message)."""
    counts: dict[str, int] = {}
    for status, times in statuses.counts():
        for reason in status.reasons:
            counts[reason] = counts.get(reason, 0) + times
    absent = num_all_nodes - len(statuses)
    if absent > 0:
        for reason in statuses.absent.reasons:
            counts[reason] = counts.get(reason, 0) + absent
    text = f"0/{num_all_nodes} nodes are available:"
    parts = sorted(f"{count} {reason}" for reason, count in counts.items())
    if parts:
        text += f" {', '.join(parts)}."
    return text


def aggregate_errors(errors: Sequence[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message alone, several in brackets."""
    if len(errors) == 1:
        return errors[0]
    return "[" + ", ".join(errors) + "]"


@attrs.frozen
class FitBound:
    """The comparisons of the NodeResourcesFit Filter, for pods the profile runs it on.

    A node this check rejects fails the whole Filter chain (whatever runs before the Fit
    filter can only fail too), which is all preemption needs to know in two places: a
    node that cannot fit the pod even with every lower-priority pod gone yields no
    candidate, and a pod added back while the pod no longer fits stays a victim.
    """

    request: fit.PodResourceRequest
    scalars: tuple[tuple[str, int], ...]

    def _lacks_room(
        self,
        alloc: Resource,
        num_pods: int,
        cpu: int,
        memory: int,
        storage: int,
        scalar_used: Sequence[int],
    ) -> bool:
        if num_pods + 1 > alloc.allowed_pod_number:
            return True
        request = self.request
        if request.milli_cpu > 0 and request.milli_cpu > alloc.milli_cpu - cpu:
            return True
        if request.memory > 0 and request.memory > alloc.memory - memory:
            return True
        storage_req = request.ephemeral_storage
        if storage_req > 0 and storage_req > alloc.ephemeral_storage - storage:
            return True
        for (name, qty), in_use in zip(self.scalars, scalar_used, strict=True):
            if qty > alloc.scalar.get(name, 0) - in_use:
                return True
        return False

    def rejects(self, node: NodeInfo, adding: PodInfo | None = None) -> bool:
        """Whether the Fit filter rejects ``node`` as it is, or with ``adding`` added."""
        used = node.requested
        num_pods = len(node.pods)
        cpu, memory, storage = used.milli_cpu, used.memory, used.ephemeral_storage
        scalar_used = [used.scalar.get(name, 0) for name, _ in self.scalars]
        if adding is not None:
            requests = adding.requests
            num_pods += 1
            cpu += requests.get(_CPU, 0)
            memory += requests.get(_MEMORY, 0)
            storage += requests.get(_EPHEMERAL_STORAGE, 0)
            for i, (name, _) in enumerate(self.scalars):
                scalar_used[i] += requests.get(name, 0)
        return self._lacks_room(node.allocatable, num_pods, cpu, memory, storage, scalar_used)

    def with_nominated(
        self, pod: Pod, remaining: tuple[int, ...], nominated: Sequence[PodInfo]
    ) -> tuple[int, ...]:
        """The ``remaining`` amounts (see :meth:`remaining`) with the pods nominated to
        the node that the first Filter pass adds (higher or equal priority, not ``pod``)."""
        if not nominated:
            return remaining
        num_pods, cpu, memory, storage, *scalar_used = remaining
        priority, uid = pod.priority, pod.uid
        for info in nominated:
            if info.pod.priority < priority or info.pod.uid == uid:
                continue
            num_pods += 1
            requests = info.requests
            cpu += requests.get(_CPU, 0)
            memory += requests.get(_MEMORY, 0)
            storage += requests.get(_EPHEMERAL_STORAGE, 0)
            for i, (name, _) in enumerate(self.scalars):
                scalar_used[i] += requests.get(name, 0)
        return (num_pods, cpu, memory, storage, *scalar_used)

    def lacks_room_at(self, node: NodeInfo, amounts: Sequence[int]) -> bool:
        """Whether the Fit filter rejects ``node`` holding ``amounts`` (pods, cpu, memory,
        ephemeral storage, the checked scalars)."""
        num_pods, cpu, memory, storage, *scalar_used = amounts
        return self._lacks_room(node.allocatable, num_pods, cpu, memory, storage, scalar_used)

    def reprieve(
        self, node: NodeInfo, base: Sequence[int], ordered: Iterable[PodInfo]
    ) -> list[bool]:
        """For each pod of ``ordered`` in turn, whether it stays a victim: added back to
        the ``base`` amounts (see :meth:`with_nominated`) with the pods reprieved before
        it, the Fit filter rejects the node. Reprieved pods are kept; the caller knows
        the rest of the Filter chain cannot reject."""
        num_pods, cpu, memory, storage, *scalar_used = base
        scalars = self.scalars
        alloc = node.allocatable
        lacks_room = self._lacks_room
        out: list[bool] = []
        for info in ordered:
            requests = info.requests
            c = cpu + requests.get(_CPU, 0)
            m = memory + requests.get(_MEMORY, 0)
            e = storage + requests.get(_EPHEMERAL_STORAGE, 0)
            sc = [
                used + requests.get(name, 0)
                for (name, _), used in zip(scalars, scalar_used, strict=True)
            ]
            if lacks_room(alloc, num_pods + 1, c, m, e, sc):
                out.append(True)
                continue
            out.append(False)
            num_pods, cpu, memory, storage, scalar_used = num_pods + 1, c, m, e, sc
        return out

    def remaining(self, node: NodeInfo, priority: int) -> tuple[int, ...]:
        """Pods, cpu, memory, ephemeral storage and the checked scalars in use on
        ``node`` once every pod of lower priority than ``priority`` is gone."""
        return self.without_lower(node, priority)[0]

    def without_lower(self, node: NodeInfo, priority: int) -> tuple[tuple[int, ...], list[PodInfo]]:
        """:meth:`remaining`, and the pods of lower priority (in the node's order)."""
        used = node.requested
        num_pods = len(node.pods)
        cpu, memory, storage = used.milli_cpu, used.memory, used.ephemeral_storage
        scalars = self.scalars
        scalar_used = [used.scalar.get(name, 0) for name, _ in scalars]
        lower: list[PodInfo] = []
        for info in node.pods:
            if info.pod.priority >= priority:
                continue
            lower.append(info)
            num_pods -= 1
            requests = info.requests
            cpu -= requests.get(_CPU, 0)
            memory -= requests.get(_MEMORY, 0)
            storage -= requests.get(_EPHEMERAL_STORAGE, 0)
            for i, (name, _) in enumerate(scalars):
                scalar_used[i] -= requests.get(name, 0)
        return (num_pods, cpu, memory, storage, *scalar_used), lower


@attrs.frozen
class DryRunContext:
    """What every dry run of one attempt shares.

    ``bound``: the Fit filter's comparisons, when the profile runs that filter for the
    pod. ``extensions``: whether any PreFilter extension (AddPod/RemovePod) runs for it;
    without any, adding or removing a pod changes only the NodeInfo.
    """

    bound: FitBound | None
    extensions: bool
    waits: bool = False
    """Some Filter plugin is ``async``: dry runs across nodes go in parallel."""
    node_checks: tuple[Callable[[CycleState, Pod, NodeInfo], Status | None], ...] | None = None
    """When not None (``bound`` is set, no extension runs, nothing waits): the Filters,
    besides NodeResourcesFit, that run for the pod, all of them node-only
    (:data:`_NODE_ONLY_FILTERS`). Victims are then decided by ``bound`` alone."""


@attrs.frozen
class VictimsEntry:
    """One node's arithmetic dry-run outcome and what it was decided from.

    It stands while the snapshot's NodeInfo for the node (replaced or given a new
    generation when the node or its pods change) is the same, and so are the preemptor's
    priority and Fit request, the amounts the first Filter pass sees (nominated pods
    included), the budgets and their allowed disruptions, and, when the victims' order
    compared a pod without a start time (taken as now) with one that has one, the
    clock reading.
    """

    node: NodeInfo
    generation: int
    node_object: Node
    key: tuple[Any, ...]
    pdbs: tuple[PodDisruptionBudget, ...]
    now: float | None
    outcome: tuple[Candidate | None, Status]


def order_reads_now(pods: Iterable[PodInfo]) -> bool:
    """Whether ordering ``pods`` by importance can depend on the clock: two of the same
    priority, one started and one not."""
    started: set[int] = set()
    unstarted: set[int] = set()
    for info in pods:
        pod = info.pod
        (unstarted if pod.status.start_time is None else started).add(pod.priority)
    return not started.isdisjoint(unstarted)


class StepError(Exception):
    """A PreFilter extension failed during a dry run; carries its status."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


def dry_run_context(handle: Handle, state: CycleState, *, arithmetic: bool) -> DryRunContext:
    """What every dry run of this attempt shares, from the profile the handle describes.

    With ``arithmetic`` off, or when the profile's plugins do not allow it, no shortcut
    beyond the Fit bound is taken.
    """
    filters = [(n, p) for n, p in handle.plugins_at("filter") if n not in state.skip_filter_plugins]
    extensions = handle.pre_filter_extensions_active(state)
    waits = handle.filters_wait
    bound = fit_bound(state, filters)
    node_checks = None
    if bound is not None and not extensions and not waits and arithmetic:
        node_checks = _node_checks(filters)
    return DryRunContext(bound, extensions, waits, node_checks)


def _node_checks(filters: Sequence[tuple[str, object]]) -> tuple[NodeCheck, ...] | None:
    """The Filter methods that run besides NodeResourcesFit, in chain order, when all of
    them are node-only built-ins; otherwise None."""
    checks: list[NodeCheck] = []
    for name, plugin in filters:
        if name == fit.NAME:
            continue
        if type(plugin) not in _NODE_ONLY_FILTERS:
            return None
        checks.append(plugin.filter)  # type: ignore[attr-defined]  # a node-only built-in
    return tuple(checks)


def fit_bound(state: CycleState, filters: Sequence[tuple[str, object]]) -> FitBound | None:
    """The Fit filter's comparisons, when they are sound: the profile runs the built-in
    NodeResourcesFit Filter for this pod and its PreFilter state (the request the Filter
    compares) is in ``state``."""
    plugin = next((p for n, p in filters if n == fit.NAME), None)
    if type(plugin) is not fit.NodeResourcesFit:
        return None
    data = state.get(fit.PRE_FILTER_STATE_KEY)
    request = getattr(data, "request", None)
    scalars = getattr(data, "checked_scalars", None)
    if not isinstance(request, fit.PodResourceRequest) or not isinstance(scalars, tuple):
        return None
    return FitBound(request, scalars)


def node_checks_pass(
    state: CycleState, pod: Pod, node: NodeInfo, node_checks: Sequence[NodeCheck]
) -> bool:
    """Whether every node-only Filter accepts the node (a fault counts as a rejection)."""
    for check in node_checks:
        try:
            status = check(state, pod, node)
        except Exception:
            return False
        if status is not None and status.code not in (Code.SUCCESS, Code.SKIP):
            return False
    return True


def fit_outcome(
    state: CycleState,
    pod: Pod,
    node: NodeInfo,
    bound: FitBound,
    node_checks: Sequence[NodeCheck],
    now: Callable[[], float],
) -> tuple[tuple[Candidate | None, Status | None] | None, bool]:
    """A node's arithmetic dry-run outcome when no pod is nominated to it and no budget
    exists, in one pass over its pods: (None, None) when the pod cannot fit even with
    every lower-priority pod gone (passed over), the failure's status, or the candidate;
    None when a node-only Filter rejects (the Filter plugins' path then says why). Also
    whether ordering the victims read the clock (see :func:`order_reads_now`).

    The same outcome as the remaining amounts, the Fit bound and the victims' reprieve
    step by step (``DefaultPreemption._dry_run_by_fit``) give.
    """
    amounts, lower = bound.without_lower(node, pod.priority)
    if bound.lacks_room_at(node, amounts):
        return (None, None), False
    if not lower:
        return (None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (MSG_NO_VICTIMS,))), False
    if not node_checks_pass(state, pod, node, node_checks):
        return None, False
    lower.sort(key=by_importance(now()))
    evicted = bound.reprieve(node, amounts, lower)
    victims = tuple(info.pod for info, out in zip(lower, evicted, strict=True) if out)
    reads_now = order_reads_now(lower)
    if not victims:
        message = f'expected at least one victim pod on node "{node.name}"'
        return (None, Status(Code.ERROR, (message,))), reads_now
    return (Candidate(node.name, Victims(victims, 0)), Status(Code.SUCCESS)), reads_now
