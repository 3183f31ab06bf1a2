"""DefaultPreemption: when no node fits, evict lower-priority pods to make room.

# pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go
# pkg/scheduler/framework/preemption/preemption.go (Evaluator.Preempt, findCandidates,
# DryRunPreemption, SelectCandidate, pickOneNodeForPreemption, prepareCandidate)
# pkg/scheduler/util/utils.go (MoreImportantPod, GetEarliestPodStartTime)

Preemption runs synchronously in the PostFilter (upstream with SchedulerAsyncPreemption
off): victims are evicted before the pod is nominated to the chosen node.

When the profile runs the built-in NodeResourcesFit Filter, dry runs take shortcuts
that change no outcome: a node where the pod cannot fit by resources even with every
lower-priority pod gone is passed over (it cannot be a candidate), and a pod added back
while the Fit comparisons reject the node stays a victim without a Filter run. When,
besides, every other Filter that runs for the pod reads only the Node object (as
NodeUnschedulable, NodeName, TaintToleration and NodeAffinity do) and no PreFilter
extension runs, a node's victims are decided by the Fit comparisons alone: no clone of
the node and no Filter run but one call of each node-only Filter.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from .._errors import ConfigError
from ..api import Node, Pod, PodDisruptionBudget
from ..framework import (
    ClusterEventWithHint,
    Code,
    CycleState,
    Handle,
    NodeInfo,
    NodeToStatus,
    PodInfo,
    PostFilterResult,
    Resource,
    Status,
    run_chunked,
)
from . import node_resources_fit as fit
from .node_affinity import NodeAffinity
from .node_name import NodeName
from .node_unschedulable import NodeUnschedulable
from .taint_toleration import TaintToleration

__all__ = [
    "Candidate",
    "DefaultPreemption",
    "DefaultPreemptionArgs",
    "Victims",
    "disruptions_allowed",
    "filter_pods_with_pdb_violation",
    "pick_one_node_for_preemption",
]

NAME = "DefaultPreemption"

PREEMPT_NEVER = "Never"
MSG_POLICY_NEVER = "not eligible due to preemptionPolicy=Never."
MSG_TERMINATING_ON_NOMINATED = "not eligible due to a terminating pod on the nominated node."
MSG_NO_VICTIMS = "No preemption victims found for incoming pod"
MSG_NOT_HELPFUL = "Preemption is not helpful for scheduling"
MSG_NO_CANDIDATE = "no candidate node for preemption"
MSG_NO_NODES = "no nodes available"
MSG_PREFIX = "preemption: "
WAITING_POD_REJECT_MSG = "preempted"

_MAX_INT32 = 2**31 - 1
_CPU, _MEMORY, _EPHEMERAL_STORAGE = "cpu", "memory", "ephemeral-storage"
_REMAINING_CACHE_LIMIT = 50_000
_NODE_ONLY_FILTERS: tuple[type, ...] = (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity)
"""Built-in Filters whose verdict reads only the Node object and the pod, never the pods
on the node: removing or adding pods cannot change it."""


# ---- args -----------------------------------------------------------------------------


@attrs.frozen
class DefaultPreemptionArgs:
    """DefaultPreemptionArgs with the v1 defaults (10 %, 100 nodes)."""

    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any] | None) -> DefaultPreemptionArgs:
        """Read the pluginConfig ``args`` (camelCase) and validate them as upstream."""
        if raw is None:
            return cls()
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{NAME}: args: must be a mapping, not {type(raw).__name__}")
        known = {"minCandidateNodesPercentage", "minCandidateNodesAbsolute", "apiVersion", "kind"}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise ConfigError(f"{NAME}: args.{unknown[0]}: unknown field")
        args = cls(
            min_candidate_nodes_percentage=_int_arg(raw, "minCandidateNodesPercentage", 10),
            min_candidate_nodes_absolute=_int_arg(raw, "minCandidateNodesAbsolute", 100),
        )
        args.validate()
        return args

    def validate(self) -> None:
        """Upstream ValidateDefaultPreemptionArgs: raises ConfigError listing every problem."""
        pct, absolute = self.min_candidate_nodes_percentage, self.min_candidate_nodes_absolute
        pct_path, abs_path = "args.minCandidateNodesPercentage", "args.minCandidateNodesAbsolute"
        errs: list[str] = []
        if not 0 <= pct <= 100:
            errs.append(f"{pct_path}: Invalid value: {pct}: not in valid range [0, 100]")
        if absolute < 0:
            errs.append(f"{abs_path}: Invalid value: {absolute}: not in valid range [0, inf)")
        if pct == 0 and absolute == 0:
            errs.append(
                f"{pct_path}: Invalid value: 0: "
                "cannot be zero at the same time as minCandidateNodesAbsolute"
            )
            errs.append(
                f"{abs_path}: Invalid value: 0: "
                "cannot be zero at the same time as minCandidateNodesPercentage"
            )
        if errs:
            raise ConfigError(f"{NAME}: " + "; ".join(errs))


def _int_arg(raw: Mapping[str, Any], key: str, default: int) -> int:
    value = raw.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{NAME}: args.{key}: must be an integer, not {value!r}")
    return value


# ---- candidates -----------------------------------------------------------------------


@attrs.frozen
class Victims:
    """The pods to evict on a node (most important first) and how many break a PDB."""

    pods: tuple[Pod, ...]
    num_pdb_violations: int = 0


@attrs.frozen
class Candidate:
    """A node the preemptor could run on once ``victims`` are gone."""

    name: str
    victims: Victims


# ---- pod ordering ---------------------------------------------------------------------


def pod_start_time(pod: Pod, now: float) -> float:
    """``status.startTime``, or now for a pod that has not started (upstream GetPodStartTime)."""
    start = pod.status.start_time
    return now if start is None else start


def more_important_pod(a: Pod, b: Pod, now: float) -> bool:
    """Higher priority first; on a tie the pod that started earlier (MoreImportantPod)."""
    pa, pb = a.priority, b.priority
    if pa != pb:
        return pa > pb
    return pod_start_time(a, now) < pod_start_time(b, now)


def _by_importance(now: float) -> Callable[[PodInfo], tuple[int, float]]:
    """Sort key: most important first, the same order as :func:`more_important_pod`."""

    def key(info: PodInfo) -> tuple[int, float]:
        pod = info.pod
        start = pod.status.start_time
        return -pod.priority, now if start is None else start

    return key


def earliest_start_of_highest_priority(pods: Sequence[Pod], now: float) -> float | None:
    """The earliest start time among the highest-priority pods (GetEarliestPodStartTime)."""
    if not pods:
        return None
    best_priority = pods[0].priority
    earliest = pod_start_time(pods[0], now)
    for pod in pods:
        priority = pod.priority
        if priority == best_priority:
            earliest = min(earliest, pod_start_time(pod, now))
        elif priority > best_priority:
            best_priority = priority
            earliest = pod_start_time(pod, now)
    return earliest


# ---- PodDisruptionBudgets ---------------------------------------------------------------


def _scaled(value: int | str, total: int) -> int | None:
    """intstr GetScaledValueFromIntOrPercent with rounding up; None when malformed."""
    if isinstance(value, int):
        return value
    if not value.endswith("%"):
        return None
    try:
        pct = int(value[:-1])
    except ValueError:
        return None
    return math.ceil(pct * total / 100)


def _pdb_selects(pdb: PodDisruptionBudget, pod: Pod) -> bool:
    """Same namespace and a non-empty selector that matches (the preemption side's rule)."""
    selector = pdb.selector
    return (
        pdb.metadata.namespace == pod.namespace
        and selector is not None
        and not selector.is_empty
        and selector.matches(pod.labels)
    )


def disruptions_allowed(pdb: PodDisruptionBudget, pods: Iterable[Pod]) -> int:
    """``status.disruptionsAllowed``, or what the disruption controller would compute.

    The pods the budget selects are the expected count (each counted as its own
    controller's replica); running (bound, not terminating) ones are the healthy count.
    """
    if pdb.disruptions_allowed is not None:
        return pdb.disruptions_allowed
    selector = pdb.selector
    if selector is None:
        return 0
    namespace = pdb.metadata.namespace
    selected = [p for p in pods if p.namespace == namespace and selector.matches(p.labels)]
    expected = len(selected)
    healthy = sum(1 for p in selected if p.spec.node_name and not p.is_terminating)
    if pdb.max_unavailable is not None:
        max_unavailable = _scaled(pdb.max_unavailable, expected)
        if max_unavailable is None:
            return 0
        desired = max(expected - max_unavailable, 0)
    elif pdb.min_available is not None:
        min_available = _scaled(pdb.min_available, expected)
        if min_available is None:
            return 0
        desired = min_available
    else:
        desired = 0
    allowed = healthy - desired
    if expected <= 0 or allowed <= 0:
        return 0
    return allowed


def filter_pods_with_pdb_violation(
    pod_infos: Sequence[PodInfo],
    pdbs: Sequence[PodDisruptionBudget],
    allowed: Sequence[int],
) -> tuple[list[PodInfo], list[PodInfo]]:
    """Split pods (order kept) into those whose eviction breaks a budget and the rest.

    ``allowed`` holds each budget's disruptions allowed; it is copied, not changed.
    """
    budget = list(allowed)
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for info in pod_infos:
        pod = info.pod
        violated = False
        if pod.labels:
            for i, pdb in enumerate(pdbs):
                if not _pdb_selects(pdb, pod):
                    continue
                budget[i] -= 1
                if budget[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(info)
    return violating, non_violating


# ---- choosing a node ---------------------------------------------------------------------


def pick_one_node_for_preemption(candidates: Sequence[Candidate], now: float) -> str:
    """The best node, by upstream's criteria in order; ties go to the first candidate.

    Fewest PDB violations, lowest highest-victim priority, lowest sum of priorities,
    fewest victims, latest start of the highest-priority victims.
    """
    if not candidates:
        return ""
    by_name = {c.name: c.victims for c in candidates}
    # Filtering by each criterion in turn keeps, after the k-th, the nodes whose first k
    # scores are the lexicographic maximum: the answer is the first node (in candidate
    # order) with the greatest score tuple, found in one pass.
    best_name = ""
    best_key: tuple[float, ...] = ()
    offset = _MAX_INT32 + 1
    for c in candidates:
        victims = by_name[c.name]
        first = -victims.num_pdb_violations
        if best_key and first < best_key[0]:
            continue
        pods = victims.pods
        # The highest victim priority, the sum, and the earliest start among the pods
        # of the highest priority (GetEarliestPodStartTime), in one pass.
        total = 0
        top = pods[0].priority
        earliest = math.inf
        for pod in pods:
            priority = pod.priority
            total += priority + offset
            start = pod.status.start_time
            start = now if start is None else start
            if priority > top:
                top, earliest = priority, start
            elif priority == top and start < earliest:
                earliest = start
        key = (first, -pods[0].priority, -total, -len(pods), earliest)
        if not best_key or key > best_key:
            best_name, best_key = c.name, key
    return best_name


def _fit_error_message(num_all_nodes: int, statuses: NodeToStatus) -> str:
    """FitError.Error() text for preemption's own diagnosis (no PreFilter message)."""
    counts: dict[str, int] = {}
    for _, status in statuses.items():
        for reason in status.reasons:
            counts[reason] = counts.get(reason, 0) + 1
    absent = num_all_nodes - len(statuses)
    if absent > 0:
        for reason in statuses.absent.reasons:
            counts[reason] = counts.get(reason, 0) + absent
    text = f"0/{num_all_nodes} nodes are available:"
    parts = sorted(f"{count} {reason}" for reason, count in counts.items())
    if parts:
        text += f" {', '.join(parts)}."
    return text


def _aggregate(errors: Sequence[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message alone, several in brackets."""
    if len(errors) == 1:
        return errors[0]
    return "[" + ", ".join(errors) + "]"


@attrs.frozen
class _FitBound:
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
        used = node.requested
        num_pods = len(node.pods)
        cpu, memory, storage = used.milli_cpu, used.memory, used.ephemeral_storage
        scalars = self.scalars
        scalar_used = [used.scalar.get(name, 0) for name, _ in scalars]
        for info in node.pods:
            if info.pod.priority >= priority:
                continue
            num_pods -= 1
            requests = info.requests
            cpu -= requests.get(_CPU, 0)
            memory -= requests.get(_MEMORY, 0)
            storage -= requests.get(_EPHEMERAL_STORAGE, 0)
            for i, (name, _) in enumerate(scalars):
                scalar_used[i] -= requests.get(name, 0)
        return (num_pods, cpu, memory, storage, *scalar_used)


@attrs.frozen
class _DryRunContext:
    """What every dry run of one attempt shares.

    ``bound``: the Fit filter's comparisons, when the profile runs that filter for the
    pod. ``extensions``: whether any PreFilter extension (AddPod/RemovePod) runs for it;
    without any, adding or removing a pod changes only the NodeInfo.
    """

    bound: _FitBound | None
    extensions: bool
    waits: bool = False
    """Some Filter plugin is ``async``: dry runs across nodes go in parallel."""
    node_checks: tuple[Callable[[CycleState, Pod, NodeInfo], Status | None], ...] | None = None
    """When not None (``bound`` is set, no extension runs, nothing waits): the Filters,
    besides NodeResourcesFit, that run for the pod, all of them node-only
    (:data:`_NODE_ONLY_FILTERS`). Victims are then decided by ``bound`` alone."""


@attrs.frozen
class _VictimsEntry:
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


def _order_reads_now(pods: Iterable[PodInfo]) -> bool:
    """Whether ordering ``pods`` by importance can depend on the clock: two of the same
    priority, one started and one not."""
    started: set[int] = set()
    unstarted: set[int] = set()
    for info in pods:
        pod = info.pod
        (unstarted if pod.status.start_time is None else started).add(pod.priority)
    return not started.isdisjoint(unstarted)


class _StepError(Exception):
    """A PreFilter extension failed during a dry run; carries its status."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


# ---- the plugin ------------------------------------------------------------------------


class DefaultPreemption:
    """The default PostFilter: find the cheapest node to preempt on, evict, nominate."""

    name = NAME
    arithmetic_dry_runs = True
    """Decide victims by the Fit comparisons when the profile allows (see the module
    docstring); False runs every dry run through the Filter plugins."""

    def __init__(self, args: DefaultPreemptionArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle
        self._remaining_cache: dict[
            tuple[str, int, tuple[tuple[str, int], ...]], tuple[NodeInfo, int, tuple[int, ...]]
        ] = {}
        self._victims_cache: dict[str, _VictimsEntry] = {}

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> DefaultPreemption:
        return cls(DefaultPreemptionArgs.from_dict(args), handle)

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # Upstream registers events only for async preemption, which ksched does not run.
        return []

    # -- PostFilter

    async def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        result, status = await self.preempt(state, pod, statuses)
        if status.message:
            return result, Status(status.code, (MSG_PREFIX + status.message,))
        return result, None if status.is_success else status

    async def preempt(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        """Evaluator.Preempt: eligibility, candidates, the best one, its preparation."""
        handle = self.handle
        current = handle.cluster.get_pod(pod.key)
        if current is None:
            return None, Status(Code.ERROR, (f'pods "{pod.name}" not found',))
        pod = current
        nominated_status = statuses.get(pod.status.nominated_node_name or "")
        eligible, reason = self.pod_eligible_to_preempt_others(pod, nominated_status)
        if not eligible:
            return None, Status(Code.UNSCHEDULABLE, (reason,))
        all_nodes = handle.snapshot.list()
        candidates, node_statuses, error = await self.find_candidates(
            state, all_nodes, pod, statuses
        )
        if error is not None and not candidates:
            return None, Status(Code.ERROR, (error,))
        if not candidates:
            assert node_statuses is not None
            node_statuses.set_absent(
                Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (MSG_NOT_HELPFUL,))
            )
            message = _fit_error_message(len(all_nodes), node_statuses)
            return PostFilterResult(nominated_node_name=""), Status(Code.UNSCHEDULABLE, (message,))
        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, Status(Code.UNSCHEDULABLE, (MSG_NO_CANDIDATE,))
        status = await self.prepare_candidate(best, pod)
        if not status.is_success:
            return None, status
        return PostFilterResult(nominated_node_name=best.name), Status(Code.SUCCESS)

    # -- eligibility

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: Status | None
    ) -> tuple[bool, str]:
        """Never-policy pods may not preempt; nor may a pod whose nominated node still
        has lower-priority pods terminating (its earlier victims), unless Filter now
        finds that node unresolvable."""
        if pod.spec.preemption_policy == PREEMPT_NEVER:
            return False, MSG_POLICY_NEVER
        nominated = pod.status.nominated_node_name
        if nominated:
            if (
                nominated_node_status is not None
                and nominated_node_status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            ):
                return True, ""
            info = self.handle.snapshot.get(nominated)
            if info is not None:
                for p in info.pods:
                    if self._preemption_allowed(p, pod) and p.pod.is_terminating:
                        return False, MSG_TERMINATING_ON_NOMINATED
        return True, ""

    @staticmethod
    def _preemption_allowed(victim: PodInfo, preemptor: Pod) -> bool:
        return victim.pod.priority < preemptor.priority

    # -- candidates

    def calculate_num_candidates(self, num_nodes: int) -> int:
        n = num_nodes * self.args.min_candidate_nodes_percentage // 100
        n = max(n, self.args.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return self.handle.rng.randrange(num_nodes), self.calculate_num_candidates(num_nodes)

    async def find_candidates(
        self,
        state: CycleState,
        all_nodes: Sequence[NodeInfo],
        pod: Pod,
        statuses: NodeToStatus,
    ) -> tuple[list[Candidate], NodeToStatus | None, str | None]:
        """Dry-run preemption on the nodes Filter found merely Unschedulable."""
        if not all_nodes:
            return [], None, MSG_NO_NODES
        unschedulable = Code.UNSCHEDULABLE
        if statuses.absent.code is unschedulable:
            potential = [i for i in all_nodes if statuses.get(i.name).code is unschedulable]
        else:
            names = {name for name, status in statuses.items() if status.code is unschedulable}
            potential = [i for i in all_nodes if i.name in names]
        if not potential:
            return [], NodeToStatus(), None
        pdbs = self._pdbs()
        offset, num_candidates = self.get_offset_and_num_candidates(len(potential))
        return await self.dry_run_preemption(state, pod, potential, pdbs, offset, num_candidates)

    def _pdbs(self) -> list[tuple[PodDisruptionBudget, int]]:
        cluster = self.handle.cluster
        pdbs: list[PodDisruptionBudget] = list(cluster.objects("PodDisruptionBudget"))
        if not pdbs:
            return []
        needs_pods = any(p.disruptions_allowed is None for p in pdbs)
        pods: list[Pod] = list(cluster.pods()) if needs_pods else []
        return [(pdb, disruptions_allowed(pdb, pods)) for pdb in pdbs]

    async def dry_run_preemption(
        self,
        state: CycleState,
        pod: Pod,
        potential_nodes: Sequence[NodeInfo],
        pdbs: Sequence[tuple[PodDisruptionBudget, int]],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate], NodeToStatus, str | None]:
        """Try the nodes from ``offset`` (wrapping) until enough candidates were found:
        at least ``num_candidates`` in all, at least one without a PDB violation.
        Candidates without violations come first.

        A node where the pod cannot fit by resources even with every lower-priority pod
        gone is passed over without a dry run (it cannot be a candidate). When candidates
        were found, the statuses leave such nodes out (callers read statuses only when
        there is none); when none was, they are dry-run after all, so statuses and errors
        are exactly what dry-running every node gives.
        """
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        # Failed nodes in visiting order; a None status marks a node passed over.
        failed: list[tuple[NodeInfo, Status | None]] = []
        ctx = self._context(state)
        bound = ctx.bound
        nominated_for = self.handle.nominated_pods_for_node
        priority = pod.priority
        n = len(potential_nodes)

        async def visit(i: int) -> tuple[Candidate | None, Status | None]:
            """Dry-run the ``i``-th node from ``offset``; (None, None): passed over."""
            node = potential_nodes[(offset + i) % n]
            if bound is not None:
                base = bound.with_nominated(
                    pod, self._remaining(bound, node, priority), nominated_for(node.name)
                )
                if bound.lacks_room_at(node, base):
                    return None, None
                if ctx.node_checks is not None:
                    outcome = self._dry_run_by_fit(
                        state, pod, node, pdbs, bound, ctx.node_checks, base
                    )
                    if outcome is not None:
                        return outcome
            return await self._dry_run_node(state, pod, node, pdbs, ctx)

        visited = await self._visit_in_parallel(visit, n, num_candidates) if ctx.waits else None
        for i in range(n):
            node = potential_nodes[(offset + i) % n]
            if visited is None:
                candidate, status = await visit(i)
            elif i in visited:
                candidate, status = visited[i]
            else:
                break  # the fan-out stopped: enough candidates came before this node
            if candidate is None and status is None:
                failed.append((node, None))
                continue
            if candidate is None:
                failed.append((node, status))
                continue
            bucket = non_violating if candidate.victims.num_pdb_violations == 0 else violating
            if len(bucket) < num_candidates:
                bucket.append(candidate)
            if non_violating and len(non_violating) + len(violating) >= num_candidates:
                break
        candidates = non_violating + violating
        node_statuses = NodeToStatus()
        errors: list[str] = []
        for node, maybe_status in failed:
            if maybe_status is None:
                if candidates:
                    continue
                candidate, maybe_status = await self._dry_run_node(state, pod, node, pdbs, ctx)
                assert candidate is None, f"node {node.name} was passed over but fits"
            if maybe_status.code is Code.ERROR:
                errors.append(maybe_status.message)
            node_statuses.set(node.name, maybe_status)
        error = _aggregate(errors) if errors else None
        return candidates, node_statuses, error

    async def _visit_in_parallel(
        self,
        visit: Callable[[int], Awaitable[tuple[Candidate | None, Status | None]]],
        n: int,
        num_candidates: int,
    ) -> dict[int, tuple[Candidate | None, Status | None]]:
        """Dry runs across nodes at once (at most ``parallelism``), for Filters that wait.

        Nodes start in order and no new one starts once enough candidates are in hand, so
        replaying the results in order gives what visiting one by one gives.
        """
        results: dict[int, tuple[Candidate | None, Status | None]] = {}
        found = [0, 0]  # candidates without / with PDB violations

        async def work(i: int) -> bool:
            results[i] = outcome = await visit(i)
            candidate = outcome[0]
            if candidate is not None:
                found[candidate.victims.num_pdb_violations != 0] += 1
            return not (found[0] and found[0] + found[1] >= num_candidates)

        await run_chunked(n, self.handle.parallelism, work)
        return results

    async def _dry_run_node(
        self,
        state: CycleState,
        pod: Pod,
        node: NodeInfo,
        pdbs: Sequence[tuple[PodDisruptionBudget, int]],
        ctx: _DryRunContext,
    ) -> tuple[Candidate | None, Status]:
        """Victims on (a clone of) one node: the candidate, or the failure's status.

        Only PreFilter extensions write to the state in a dry run (Filter reads it, as
        when it runs across nodes in the scheduling cycle), so without them the state
        needs no copy.
        """
        victims, num_violations, status = await self._select_victims(
            state.clone() if ctx.extensions else state, pod, node.clone(), pdbs, ctx
        )
        if status.is_success and victims:
            return Candidate(node.name, Victims(tuple(victims), num_violations)), status
        if status.is_success:
            status = Status(
                Code.ERROR, (f'expected at least one victim pod on node "{node.name}"',)
            )
        return None, status

    def _dry_run_by_fit(
        self,
        state: CycleState,
        pod: Pod,
        node: NodeInfo,
        pdbs: Sequence[tuple[PodDisruptionBudget, int]],
        bound: _FitBound,
        node_checks: Sequence[Callable[[CycleState, Pod, NodeInfo], Status | None]],
        base: tuple[int, ...],
    ) -> tuple[Candidate | None, Status] | None:
        """:meth:`_dry_run_node` for a node the Fit filter accepts once every
        lower-priority pod is gone (``base``: the amounts the first Filter pass then
        sees), when the other Filters read only the Node: each of those runs once (on
        the snapshot's node: it cannot tell the difference) and the reprieves are Fit
        comparisons. None when a node-only Filter rejects or fails: the dry run then
        takes the Filter plugins' path for that node's status.

        The victims are kept per node (see :class:`_VictimsEntry`) while nothing they
        depend on changes, for the next preemptor alike.
        """
        priority = pod.priority
        entry = self._victims_cache.get(node.name)
        key = (priority, bound.request, bound.scalars, base, tuple(a for _, a in pdbs))
        if not (
            entry is not None
            and entry.node is node
            and entry.generation == node.generation
            and entry.node_object is node.node
            and entry.key == key
            and len(entry.pdbs) == len(pdbs)
            and all(a is b for a, (b, _) in zip(entry.pdbs, pdbs, strict=True))
            and (entry.now is None or entry.now == self.handle.now())
        ):
            entry = None
            potential = [p for p in node.pods if p.pod.priority < priority]
            if not potential:
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (MSG_NO_VICTIMS,))
        if not self._node_checks_pass(state, pod, node, node_checks):
            return None
        if entry is not None:
            return entry.outcome
        handle = self.handle
        now = handle.now()
        potential.sort(key=_by_importance(now))
        if pdbs:
            violating, non_violating = filter_pods_with_pdb_violation(
                potential, [p for p, _ in pdbs], [a for _, a in pdbs]
            )
            ordered = violating + non_violating
        else:
            violating, non_violating = [], potential
            ordered = potential
        evicted = bound.reprieve(node, base, ordered)
        victims = [info for info, out in zip(ordered, evicted, strict=True) if out]
        outcome: tuple[Candidate | None, Status]
        if not victims:
            outcome = (
                None,
                Status(Code.ERROR, (f'expected at least one victim pod on node "{node.name}"',)),
            )
        else:
            num_violating = sum(evicted[: len(violating)])
            if violating and non_violating:
                victims.sort(key=_by_importance(handle.now()))
            victims_of = Victims(tuple(v.pod for v in victims), num_violating)
            outcome = Candidate(node.name, victims_of), Status(Code.SUCCESS)
        if len(self._victims_cache) >= _REMAINING_CACHE_LIMIT:
            self._victims_cache.clear()
        self._victims_cache[node.name] = _VictimsEntry(
            node,
            node.generation,
            node.node,
            key,
            tuple(p for p, _ in pdbs),
            now if _order_reads_now(potential) else None,
            outcome,
        )
        return outcome

    @staticmethod
    def _node_checks_pass(
        state: CycleState,
        pod: Pod,
        node: NodeInfo,
        node_checks: Sequence[Callable[[CycleState, Pod, NodeInfo], Status | None]],
    ) -> bool:
        for check in node_checks:
            try:
                status = check(state, pod, node)
            except Exception:
                return False
            if status is not None and status.code not in (Code.SUCCESS, Code.SKIP):
                return False
        return True

    def _remaining(self, bound: _FitBound, node: NodeInfo, priority: int) -> tuple[int, ...]:
        """``bound.remaining(node, priority)``, kept per node while its NodeInfo (the
        snapshot's, replaced when the node changes) and its generation stay the same."""
        key = (node.name, priority, bound.scalars)
        entry = self._remaining_cache.get(key)
        if entry is not None and entry[0] is node and entry[1] == node.generation:
            return entry[2]
        amounts = bound.remaining(node, priority)
        if len(self._remaining_cache) >= _REMAINING_CACHE_LIMIT:
            self._remaining_cache.clear()
        self._remaining_cache[key] = (node, node.generation, amounts)
        return amounts

    def _context(self, state: CycleState) -> _DryRunContext:
        """What the profile runs for this pod, read from its framework when the handle
        has one (without, nothing is assumed: no shortcut is taken)."""
        framework = getattr(self.handle, "framework", None)
        points = getattr(framework, "points", None)
        plugins = getattr(framework, "plugins", None)
        waits = bool(getattr(framework, "filters_async", False))
        if not isinstance(points, Mapping) or not isinstance(plugins, Mapping):
            return _DryRunContext(None, True, waits)
        skip = state.skip_filter_plugins
        extensions = False
        for name in points.get("preFilter", ()):
            ext_fn = getattr(plugins.get(name), "pre_filter_extensions", None)
            if name not in skip and ext_fn is not None and ext_fn() is not None:
                extensions = True
        bound = self._fit_bound(state, points, plugins)
        node_checks = None
        # Only a framework that says its Filters are all sync (ksched's own does) is
        # trusted to run them as the arithmetic replays them.
        sync = getattr(framework, "filters_async", None) is False
        if bound is not None and not extensions and sync and self.arithmetic_dry_runs:
            node_checks = self._node_checks(skip, points, plugins)
        return _DryRunContext(bound, extensions, waits, node_checks)

    @staticmethod
    def _node_checks(
        skip: frozenset[str], points: Mapping[str, Any], plugins: Mapping[str, Any]
    ) -> tuple[Callable[[CycleState, Pod, NodeInfo], Status | None], ...] | None:
        """The Filter methods that run besides NodeResourcesFit, in chain order, when all
        of them are node-only built-ins; otherwise None."""
        checks: list[Callable[[CycleState, Pod, NodeInfo], Status | None]] = []
        for name in points.get("filter", ()):
            if name in skip or name == fit.NAME:
                continue
            plugin: Any = plugins.get(name)
            if type(plugin) not in _NODE_ONLY_FILTERS:
                return None
            checks.append(plugin.filter)
        return tuple(checks)

    @staticmethod
    def _fit_bound(
        state: CycleState, points: Mapping[str, Any], plugins: Mapping[str, Any]
    ) -> _FitBound | None:
        """The Fit filter's comparisons, when they are sound: the profile runs the
        built-in NodeResourcesFit Filter for this pod and its PreFilter state (the
        request the Filter compares) is in ``state``."""
        if fit.NAME not in points.get("filter", ()) or fit.NAME in state.skip_filter_plugins:
            return None
        if type(plugins.get(fit.NAME)) is not fit.NodeResourcesFit:
            return None
        data = state.get(fit.PRE_FILTER_STATE_KEY)
        request = getattr(data, "request", None)
        scalars = getattr(data, "checked_scalars", None)
        if not isinstance(request, fit.PodResourceRequest) or not isinstance(scalars, tuple):
            return None
        return _FitBound(request, scalars)

    async def select_victims_on_node(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        pdbs: Sequence[tuple[PodDisruptionBudget, int]],
    ) -> tuple[list[Pod], int, Status]:
        """The fewest pods to evict from this node (a clone) for ``pod`` to fit.

        Remove every lower-priority pod; if the pod then fits, add them back one by one
        (budget-violating ones first, each group most important first) and keep out
        only those without which it no longer fits.
        """
        return await self._select_victims(state, pod, node_info, pdbs, self._context(state))

    async def _select_victims(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        pdbs: Sequence[tuple[PodDisruptionBudget, int]],
        ctx: _DryRunContext,
    ) -> tuple[list[Pod], int, Status]:
        handle = self.handle
        bound, extensions = ctx.bound, ctx.extensions

        def remove(info: PodInfo) -> None:
            node_info.remove_pod(info.pod)
            if extensions:
                status = handle.run_pre_filter_extension_remove_pod(state, pod, info, node_info)
                if not status.is_success:
                    raise _StepError(status)

        def add(info: PodInfo) -> None:
            node_info.add_pod(info)
            if extensions:
                status = handle.run_pre_filter_extension_add_pod(state, pod, info, node_info)
                if not status.is_success:
                    raise _StepError(status)

        priority = pod.priority
        potential = [p for p in node_info.pods if p.pod.priority < priority]
        try:
            for info in potential:
                remove(info)
        except _StepError as exc:
            return [], 0, Status(Code.ERROR, (exc.status.message,))
        if not potential:
            return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (MSG_NO_VICTIMS,))
        status = await handle.run_filter_plugins_with_nominated_pods(state, pod, node_info)
        if not status.is_success:
            return [], 0, status
        potential.sort(key=_by_importance(handle.now()))
        if pdbs:
            violating, non_violating = filter_pods_with_pdb_violation(
                potential, [p for p, _ in pdbs], [a for _, a in pdbs]
            )
        else:
            violating, non_violating = [], potential
        victims: list[PodInfo] = []

        async def reprieve(info: PodInfo) -> bool:
            # Only whether the pod fits matters here, and the Filter chain fails when the
            # Fit filter rejects the node: that needs no Filter run. Without extensions,
            # adding a pod without host ports and removing it again leaves the node as
            # it was, so the pair is skipped too.
            if bound is not None and not extensions and not info.host_ports:
                if bound.rejects(node_info, info):
                    victims.append(info)
                    return False
                add(info)
            else:
                add(info)
                if bound is not None and bound.rejects(node_info):
                    remove(info)
                    victims.append(info)
                    return False
            status = await handle.run_filter_plugins_with_nominated_pods(state, pod, node_info)
            if not status.is_success:
                remove(info)
                victims.append(info)
                return False
            return True

        num_violating = 0
        try:
            for info in violating:
                if not await reprieve(info):
                    num_violating += 1
            for info in non_violating:
                await reprieve(info)
        except _StepError as exc:
            return [], 0, Status(Code.ERROR, (exc.status.message,))
        if violating and non_violating:
            victims.sort(key=_by_importance(handle.now()))
        return [v.pod for v in victims], num_violating, Status(Code.SUCCESS)

    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        """SelectCandidate: the only one, or the one pickOneNodeForPreemption prefers."""
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        name = pick_one_node_for_preemption(candidates, self.handle.now())
        for c in candidates:
            if c.name == name:
                return c
        return candidates[0]

    # -- preparation

    async def prepare_candidate(self, candidate: Candidate, pod: Pod) -> Status:
        """Evict the victims (a victim held at Permit is rejected instead), then clear
        the nominations of lower-priority pods nominated to the node.

        A failed eviction stops the preparation and comes back as an Error status; the
        preemptor is not nominated and is retried.
        """
        handle = self.handle
        for victim in candidate.victims.pods:
            if victim.is_terminating:
                continue
            if handle.get_waiting_pod(victim.uid) is not None:
                handle.reject_waiting_pod(victim.uid, self.name, WAITING_POD_REJECT_MSG)
            else:
                try:
                    await handle.cluster.evict(victim)
                except LookupError:
                    pass  # already gone: nothing left to do for this victim
                except Exception as exc:
                    return Status(Code.ERROR, (f"evicting pod {victim.key}: {exc}",))
            handle.record_event(
                victim, "Preempted", f"Preempted by pod {pod.uid} on node {candidate.name}"
            )
        for info in handle.nominated_pods_for_node(candidate.name):
            nominated = info.pod
            if nominated.uid == pod.uid or nominated.priority >= pod.priority:
                continue
            try:
                await handle.cluster.update_pod_status(
                    nominated, nominated_node_name=None, condition=None
                )
            except Exception:
                continue
        return Status(Code.SUCCESS)
