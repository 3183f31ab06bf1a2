"""DefaultPreemption: when no node fits, evict lower-priority pods to make room.

# pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go
# pkg/scheduler/framework/preemption/preemption.go (Evaluator.Preempt, findCandidates,
# DryRunPreemption, SelectCandidate, pickOneNodeForPreemption, prepareCandidate)
# pkg/scheduler/util/utils.go (MoreImportantPod, GetEarliestPodStartTime)

Preemption runs synchronously in the PostFilter (upstream with SchedulerAsyncPreemption
off): victims are evicted before the pod is nominated to the chosen node.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from .._errors import ConfigError
from ..api import Pod, PodDisruptionBudget
from ..framework import (
    ClusterEventWithHint,
    Code,
    CycleState,
    Handle,
    NodeInfo,
    NodeToStatus,
    PodInfo,
    PostFilterResult,
    Status,
)

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


def _by_importance(now: float) -> Callable[[PodInfo], Any]:
    def compare(x: PodInfo, y: PodInfo) -> int:
        if more_important_pod(x.pod, y.pod, now):
            return -1
        if more_important_pod(y.pod, x.pod, now):
            return 1
        return 0

    return functools.cmp_to_key(compare)


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
    remaining = [c.name for c in candidates]

    def latest_start(node: str) -> float:
        earliest = earliest_start_of_highest_priority(by_name[node].pods, now)
        return -math.inf if earliest is None else earliest

    score_funcs: list[Callable[[str], float]] = [
        lambda node: -by_name[node].num_pdb_violations,
        lambda node: -by_name[node].pods[0].priority,
        lambda node: -sum(p.priority + _MAX_INT32 + 1 for p in by_name[node].pods),
        lambda node: -len(by_name[node].pods),
        latest_start,
    ]
    for score in score_funcs:
        best: list[str] = []
        best_score = -math.inf
        for node in remaining:
            s = score(node)
            if s > best_score:
                best_score, best = s, [node]
            elif s == best_score:
                best.append(node)
        if len(best) == 1:
            return best[0]
        remaining = best
    return remaining[0]


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


class _StepError(Exception):
    """A PreFilter extension failed during a dry run; carries its status."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


# ---- the plugin ------------------------------------------------------------------------


class DefaultPreemption:
    """The default PostFilter: find the cheapest node to preempt on, evict, nominate."""

    name = NAME

    def __init__(self, args: DefaultPreemptionArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle

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
        potential = [i for i in all_nodes if statuses.get(i.name).code is Code.UNSCHEDULABLE]
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
        Candidates without violations come first."""
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        node_statuses = NodeToStatus()
        errors: list[str] = []
        n = len(potential_nodes)
        for i in range(n):
            info = potential_nodes[(offset + i) % n].clone()
            victims, num_violations, status = await self.select_victims_on_node(
                state.clone(), pod, info, pdbs
            )
            if status.is_success and victims:
                candidate = Candidate(info.name, Victims(tuple(victims), num_violations))
                bucket = non_violating if num_violations == 0 else violating
                if len(bucket) < num_candidates:
                    bucket.append(candidate)
                if non_violating and len(non_violating) + len(violating) >= num_candidates:
                    break
                continue
            if status.is_success:
                status = Status(
                    Code.ERROR, (f'expected at least one victim pod on node "{info.name}"',)
                )
            if status.code is Code.ERROR:
                errors.append(status.message)
            node_statuses.set(info.name, status)
        error = _aggregate(errors) if errors else None
        return non_violating + violating, node_statuses, error

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
        handle = self.handle

        def remove(info: PodInfo) -> None:
            node_info.remove_pod(info.pod)
            status = handle.run_pre_filter_extension_remove_pod(state, pod, info, node_info)
            if not status.is_success:
                raise _StepError(status)

        def add(info: PodInfo) -> None:
            node_info.add_pod(info)
            status = handle.run_pre_filter_extension_add_pod(state, pod, info, node_info)
            if not status.is_success:
                raise _StepError(status)

        potential = [p for p in node_info.pods if self._preemption_allowed(p, pod)]
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
        violating, non_violating = filter_pods_with_pdb_violation(
            potential, [p for p, _ in pdbs], [a for _, a in pdbs]
        )
        victims: list[PodInfo] = []

        async def reprieve(info: PodInfo) -> bool:
            add(info)
            fits = (
                await handle.run_filter_plugins_with_nominated_pods(state, pod, node_info)
            ).is_success
            if not fits:
                remove(info)
                victims.append(info)
            return fits

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
