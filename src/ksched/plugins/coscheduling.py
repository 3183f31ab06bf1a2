"""Coscheduling: gang scheduling of the pods of a PodGroup.

# kubernetes-sigs/scheduler-plugins pkg/coscheduling/coscheduling.go, core/core.go,
# apis/config (CoschedulingArgs, defaults, ValidateCoschedulingArgs), pkg/util/podgroup.go
A pod joins a group through the ``scheduling.x-k8s.io/pod-group`` label. Members wait at
Permit until ``minMember`` of them hold a node; then all of them go on together. A member
that fits nowhere rejects its waiting siblings at once, so their reservations free now.

Beyond upstream: a group that keeps failing without ever reaching quorum (each failed
attempt re-activating the others, which fail again) is backed off after
``LIVELOCK_FAILURES`` such attempts even when ``podGroupBackoffSeconds`` is 0, so it parks in
the unschedulable pool instead of spinning; :meth:`Coscheduling.group_statuses` says why. A
bound pod leaving or a node coming or changing ends such a backoff at once, so the group is
placed as soon as room appears.

One module of ~630 lines, as upstream's plugin and its core are one unit: the args, the
group states and the extension points share the same per-group bookkeeping.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from .._errors import ConfigError
from ..api import Pod, PodGroup
from ..framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    NodeInfo,
    NodeToStatus,
    PostFilterResult,
    QueuedPodInfo,
    Status,
)

__all__ = ["POD_GROUP_LABEL", "Coscheduling", "CoschedulingArgs"]

NAME = "Coscheduling"
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
PERMIT_STATE_KEY = "PermitCoscheduling"

DEFAULT_WAIT_TIME = 60.0
"""util.DefaultWaitTime: the Permit wait when neither the group nor the args set one."""
PERMITTED_DEFAULT_TTL = 3.0
"""gocache.New(3s, 3s): a zero duration stores with the cache's default expiration."""

LIVELOCK_FAILURES = 3
"""Failed attempts in a row without quorum after which a group is backed off anyway."""
LIVELOCK_BACKOFF_SECONDS = 10.0

# Reason strings, verbatim from upstream.
ERR_POD_GROUP_NOT_FOUND = "PodGroup not found"
ERR_CANNOT_FIND_POD_GROUP = "can not find pod group"
MSG_POSTFILTER_REJECTION = "optimistic rejection in PostFilter"
MSG_UNRESERVE_REJECTION = "rejection in Unreserve"


@attrs.frozen(kw_only=True)
class CoschedulingArgs:
    """CoschedulingArgs with upstream defaults (apis/config/v1/defaults.go)."""

    permit_waiting_time_seconds: int = 60
    pod_group_backoff_seconds: int = 0
    pod_group_reject_percentage: int = 10

    @classmethod
    def from_dict(cls, args: Mapping[str, Any] | None) -> CoschedulingArgs:
        """Parse the pluginConfig args (camelCase keys); raises ConfigError."""
        if args is None:
            return cls()
        if not isinstance(args, Mapping):
            raise ConfigError(f"{NAME}: args: expected a mapping, got {type(args).__name__}")
        known = {
            "permitWaitingTimeSeconds": "permit_waiting_time_seconds",
            "podGroupBackoffSeconds": "pod_group_backoff_seconds",
            "podGroupRejectPercentage": "pod_group_reject_percentage",
        }
        values: dict[str, int] = {}
        for key, value in args.items():
            if key in ("apiVersion", "kind"):
                continue
            field = known.get(key)
            if field is None:
                raise ConfigError(f'{NAME}: args: unknown field "{key}"')
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"{NAME}: args.{key}: expected an integer, got {value!r}")
            values[field] = value
        return cls(**values)

    def validate(self) -> None:
        """ValidateCoschedulingArgs; raises ConfigError listing every problem."""
        errs: list[str] = []
        if self.permit_waiting_time_seconds < 0:
            errs.append(
                "permitWaitingTimeSeconds: Invalid value: "
                f"{self.permit_waiting_time_seconds}: must be greater than 0"
            )
        if self.pod_group_backoff_seconds < 0:
            errs.append(
                "podGroupBackoffSeconds: Invalid value: "
                f"{self.pod_group_backoff_seconds}: must be greater than 0"
            )
        if not 0 <= self.pod_group_reject_percentage <= 100:
            errs.append(
                "podGroupRejectPercentage: Invalid value: "
                f"{self.pod_group_reject_percentage}: must be between 0 and 100"
            )
        if len(errs) == 1:
            raise ConfigError(f"{NAME}: args.{errs[0]}")
        if errs:
            raise ConfigError(f"{NAME}: args: [" + ", ".join(errs) + "]")


@attrs.define(eq=False)
class _PermitState:
    """core.PermitState: the first member to reach Permit activates its siblings."""

    activate: bool = False

    def clone(self) -> _PermitState:
        return _PermitState(self.activate)


@attrs.define(eq=False)
class _Group:
    """What the plugin remembers of one PodGroup (keyed ``namespace/name``)."""

    assigned: set[str] = attrs.field(factory=set)
    """assignedPodsByPG: members past Permit (waiting or bound), by pod name."""
    permitted_until: float | None = None
    """permittedPG: minResources already checked, until this time."""
    backoff_until: float | None = None
    """backedOffPG: PreFilter turns members away until this time."""
    last_failed: float | None = None
    """lastFailedSchedulePG: QueueSort uses it instead of the creation time."""
    last_failure: str | None = None
    attempt_open: bool = False
    """A member reached Permit since the last failure (one failed attempt counts once)."""
    failures: int = 0
    """Failed attempts in a row since the group last reached quorum."""
    quorum_gap: int = 0
    """minMember minus the assigned members, as of the last Permit."""
    guarded: bool = False
    """Parked by the livelock guard: the next cluster change that may make room
    (:meth:`Coscheduling._room_appeared`) ends the backoff and re-activates the members."""


def group_label(pod: Pod) -> str:
    """util.GetPodGroupLabel."""
    return pod.labels.get(POD_GROUP_LABEL, "")


def group_full_name(pod: Pod) -> str:
    """util.GetPodGroupFullName: ``namespace/group`` or "" when the pod has no group."""
    label = group_label(pod)
    return f"{pod.namespace}/{label}" if label else ""


class Coscheduling:
    """QueueSort, PreFilter, PostFilter, Reserve, Permit and PostBind for PodGroups."""

    name = NAME

    def __init__(self, args: CoschedulingArgs, handle: Handle) -> None:
        self.args = args
        self._handle = handle
        self._cluster = handle.cluster
        self._schedule_timeout = float(args.permit_waiting_time_seconds)
        self._backoff: float | None = (
            float(args.pod_group_backoff_seconds) if args.pod_group_backoff_seconds > 0 else None
        )
        self._reject_threshold = args.pod_group_reject_percentage / 100.0
        self._groups: dict[str, _Group] = {}
        # The pod informer: pods by group, and the bound ones counted as assigned.
        self._members: dict[str, dict[str, Pod]] = {}
        # Each PodGroup's time on the event loop's clock, which the queue order compares
        # with the loop's own timestamps: a group created later is seen when it comes;
        # the groups present now keep the gaps between their creationTimestamps, the
        # newest of them placed at now (cluster time is read only as differences).
        self._seen: dict[str, float] = {}
        now = self._now()
        present = list(self._cluster.objects("PodGroup"))
        stamps = [g.metadata.creation_timestamp for g in present]
        newest = max((s for s in stamps if s is not None), default=None)
        for group, stamp in zip(present, stamps, strict=True):
            key = f"{group.metadata.namespace}/{group.metadata.name}"
            self._seen[key] = now if stamp is None or newest is None else now - (newest - stamp)
        self._cluster.subscribe(self._on_change)
        for pod in self._cluster.pods():
            self._on_change("Pod", None, pod)

    def close(self) -> None:
        """Stop following the cluster (what is known of the groups stays readable)."""
        self._cluster.unsubscribe(self._on_change)

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> Coscheduling:
        parsed = CoschedulingArgs.from_dict(args)
        parsed.validate()
        return cls(parsed, handle)

    # ---- informer side ----------------------------------------------------------------

    def _on_change(self, kind: str, old: Any, new: Any) -> None:
        if kind == "PodGroup":
            if new is None:
                self._seen.pop(f"{old.metadata.namespace}/{old.metadata.name}", None)
            elif old is None:
                self._seen.setdefault(f"{new.metadata.namespace}/{new.metadata.name}", self._now())
            return
        if kind == "Node":
            if new is not None and (old is None or _node_changed(old, new)):
                self._room_appeared()
            return
        if kind != "Pod":
            return
        if old is not None:
            full = group_full_name(old)
            if full:
                members = self._members.get(full)
                if members is not None:
                    members.pop(old.name, None)
                    if not members:
                        del self._members[full]
                if new is None and old.spec.node_name:
                    # A bound member was deleted: it no longer counts (core.go DeleteFunc).
                    self._unassign(full, old.name)
            if new is None and old.spec.node_name:
                self._room_appeared()
        if new is not None:
            full = group_full_name(new)
            if full:
                self._members.setdefault(full, {})[new.name] = new
                if old is None and new.spec.node_name:
                    self._group(full).assigned.add(new.name)  # core.go AddPodFactory

    def _room_appeared(self) -> None:
        """A bound pod left, or a node came or changed: each group parked by the livelock
        guard gets one more attempt now.

        Its members rest in the unschedulable pool, last turned away by this plugin's
        PreFilter, and no event they wait for would move them; without this they would wait
        for the pool's periodic flush. A group that fails again is parked again at once
        (its failure count stays), so only real cluster changes buy attempts.
        """
        wake: list[Pod] = []
        for full_name, gstate in self._groups.items():
            if not gstate.guarded:
                continue
            gstate.guarded = False
            gstate.backoff_until = None
            members = self._members.get(full_name, {})
            wake.extend(p for p in members.values() if not p.spec.node_name)
        if wake:
            self._handle.activate(wake)

    def _group(self, full_name: str) -> _Group:
        group = self._groups.get(full_name)
        if group is None:
            group = self._groups[full_name] = _Group()
        return group

    def _unassign(self, full_name: str, pod_name: str) -> None:
        group = self._groups.get(full_name)
        if group is not None:
            group.assigned.discard(pod_name)

    def _siblings(self, pod: Pod) -> list[Pod]:
        """Every pod carrying the pod's group label in its namespace (the pod lister)."""
        return list(self._members.get(group_full_name(pod), {}).values())

    def _pod_group(self, pod: Pod) -> tuple[str, PodGroup | None]:
        """core.go GetPodGroup: (full name or "", the PodGroup or None)."""
        label = group_label(pod)
        if not label:
            return "", None
        group: PodGroup | None = self._cluster.get("PodGroup", f"{pod.namespace}/{label}")
        return f"{pod.namespace}/{label}", group

    def _now(self) -> float:
        return self._handle.now()

    # ---- QueueSort --------------------------------------------------------------------

    def _creation_time(self, qpi: QueuedPodInfo) -> float:
        """core.go GetCreationTimestamp: last group failure, else PodGroup creation time,
        else the pod's initial attempt time, all on the event loop's clock."""
        pod = qpi.pod
        fallback = qpi.initial_attempt_timestamp
        if fallback is None:
            fallback = qpi.timestamp
        label = group_label(pod)
        if not label:
            return fallback
        full_name = f"{pod.namespace}/{label}"
        state = self._groups.get(full_name)
        if state is not None and state.last_failed is not None:
            return state.last_failed
        seen = self._seen.get(full_name)
        if seen is None or self._cluster.get("PodGroup", full_name) is None:
            return fallback
        return seen

    def _in_progress(self, pod: Pod) -> bool:
        """Members of the pod's group hold nodes at Permit, below quorum."""
        label = group_label(pod)
        if not label:
            return False
        state = self._groups.get(f"{pod.namespace}/{label}")
        return state is not None and state.attempt_open and state.quorum_gap > 0

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Higher priority, then a group whose members wait at Permit, then earlier group
        (or pod) time, then namespace/name.

        Beyond upstream: the siblings that the first waiting member activates go before
        other pods of their priority, so the group's attempt is one pass and its
        reservations are not held while unrelated pods are scheduled.
        """
        pa, pb = a.pod.priority, b.pod.priority
        if pa != pb:
            return pa > pb
        ia, ib = self._in_progress(a.pod), self._in_progress(b.pod)
        if ia != ib:
            return ia
        ta, tb = self._creation_time(a), self._creation_time(b)
        if ta == tb:
            return f"{a.pod.namespace}/{a.pod.name}" < f"{b.pod.namespace}/{b.pod.name}"
        return ta < tb

    # ---- PreFilter --------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """core.go PreFilter; any failure is UnschedulableAndUnresolvable."""
        message = self._pre_filter(pod, nodes)
        if message is None:
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (message,))

    def _pre_filter(self, pod: Pod, nodes: Sequence[NodeInfo]) -> str | None:
        full_name, group = self._pod_group(pod)
        if group is None:
            return None
        state = self._groups.get(full_name)
        now = self._now()
        if state is not None and state.backoff_until is not None:
            if now < state.backoff_until:
                return f"podGroup {full_name} failed recently"
            state.backoff_until = None
        siblings = self._siblings(pod)
        quorum_gap = group.min_member - len(siblings)
        if quorum_gap > 0:
            return (
                f"pre-filter pod {pod.name} cannot find enough sibling pods, "
                f"current pods number: {len(siblings)}, minMember of group: {group.min_member}"
            )
        # Gated members count against the quorum (minMember may be below the replicas).
        quorum_gap += sum(1 for p in siblings if p.spec.scheduling_gates)
        if quorum_gap > 0:
            return (
                f"pre-filter pod {pod.name} cannot proceed due to gated pods in the same PodGroup"
            )
        if not group.min_resources:
            return None
        state = self._group(full_name)
        if state.permitted_until is not None and now < state.permitted_until:
            return None
        request = dict(group.min_resources)
        request["pods"] = group.min_member
        gap = check_cluster_resource(nodes, request, full_name)
        if gap is not None:
            return gap
        ttl = self._schedule_timeout or PERMITTED_DEFAULT_TTL
        state.permitted_until = now + ttl
        return None

    def pre_filter_extensions(self) -> None:
        return None

    # ---- PostFilter -------------------------------------------------------------------

    def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """Reject the whole group when one member fits nowhere (unless the gap is small)."""
        full_name, group = self._pod_group(pod)
        if group is None:
            return PostFilterResult(), Status(Code.UNSCHEDULABLE, (ERR_CANNOT_FIND_POD_GROUP,))
        gstate = self._group(full_name)
        assigned = len(gstate.assigned)
        if assigned >= group.min_member:
            return PostFilterResult(), Status(Code.UNSCHEDULABLE)
        not_assigned = (group.min_member - assigned) / group.min_member
        if not_assigned <= self._reject_threshold:
            return PostFilterResult(), Status(Code.UNSCHEDULABLE)
        self._reject_waiting(pod.namespace, group_label(pod), MSG_POSTFILTER_REJECTION)
        if self._backoff is not None and len(self._siblings(pod)) >= group.min_member:
            gstate.backoff_until = self._now() + self._backoff
        message = (
            f"PodGroup {full_name} gets rejected due to Pod {pod.name} "
            "is unschedulable even after PostFilter"
        )
        self._group_failed(full_name, gstate, message)
        return PostFilterResult(), Status(Code.UNSCHEDULABLE, (message,))

    def _reject_waiting(self, namespace: str, label: str, message: str) -> None:
        now = self._now()
        for waiting in self._handle.iterate_waiting_pods():
            other = waiting.pod
            if other.namespace != namespace or group_label(other) != label:
                continue
            if waiting.pending and waiting.deadline <= now:
                # Its own timer has already fired (its task has not run yet): the
                # timeout is what rejects it, as upstream's per-pod timer would.
                continue
            waiting.reject(NAME, message)

    def _group_failed(self, full_name: str, gstate: _Group, message: str) -> None:
        """DeletePermittedPodGroup + MarkPodGroupScheduleFailure, and the livelock guard."""
        now = self._now()
        gstate.permitted_until = None
        gstate.last_failed = now
        gstate.last_failure = message
        if gstate.attempt_open:
            gstate.attempt_open = False
            gstate.failures += 1
            if self._backoff is None and gstate.failures >= LIVELOCK_FAILURES:
                gstate.backoff_until = now + LIVELOCK_BACKOFF_SECONDS
                gstate.guarded = True
        if gstate.guarded:
            # Members turned away while parked keep the reason in the report.
            gstate.last_failure = (
                f"{message}; PodGroup {full_name} failed {gstate.failures} attempts in a row "
                f"without reaching quorum, backed off for {LIVELOCK_BACKOFF_SECONDS:g}s"
            )

    # ---- Reserve / Permit -------------------------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """A member that will not bind takes its waiting siblings down with it."""
        full_name, group = self._pod_group(pod)
        if group is None:
            return
        gstate = self._group(full_name)
        gstate.assigned.discard(pod.name)
        self._reject_waiting(pod.namespace, group_label(pod), MSG_UNRESERVE_REJECTION)
        self._group_failed(full_name, gstate, f"pod {pod.name}: {MSG_UNRESERVE_REJECTION}")

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Wait until minMember members hold a node; at quorum allow them all."""
        full_name, group = self._pod_group(pod)
        if not full_name:
            return None
        if group is None:
            return Status(Code.UNSCHEDULABLE, (ERR_POD_GROUP_NOT_FOUND,))
        gstate = self._group(full_name)
        gstate.attempt_open = True
        gstate.assigned.add(pod.name)
        gstate.quorum_gap = group.min_member - len(gstate.assigned)
        if len(gstate.assigned) >= group.min_member:
            gstate.last_failed = None
            gstate.failures = 0
            gstate.guarded = False
            gstate.last_failure = None
            for waiting in self._handle.iterate_waiting_pods():
                if group_full_name(waiting.pod) == full_name:
                    waiting.allow(NAME)
            return None
        if len(gstate.assigned) == 1:
            state.write(PERMIT_STATE_KEY, _PermitState(activate=True))
        timeout = self._schedule_timeout
        wait = wait_time(group, self._schedule_timeout)
        if wait != 0:
            timeout = wait
        self._activate_siblings(state, pod)
        return Status.wait(timeout)

    def _activate_siblings(self, state: CycleState, pod: Pod) -> None:
        """core.go ActivateSiblings: only the group's first member past Permit asks."""
        permit_state = state.get(PERMIT_STATE_KEY)
        if not isinstance(permit_state, _PermitState) or not permit_state.activate:
            return
        others = [p for p in self._siblings(pod) if p.uid != pod.uid]
        if others:
            self._handle.activate(others)

    # ---- PostBind ---------------------------------------------------------------------

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Bound members are read from the cluster; a bind closes any failure record."""
        full_name = group_full_name(pod)
        gstate = self._groups.get(full_name) if full_name else None
        if gstate is not None and gstate.failures == 0:
            gstate.last_failure = None

    # ---- EnqueueExtensions ------------------------------------------------------------

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.ADD)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD_GROUP, ActionType.ADD | ActionType.UPDATE)
            ),
        ]

    # ---- reporting --------------------------------------------------------------------

    def group_statuses(self) -> dict[str, dict[str, Any]]:
        """Each known PodGroup: phase, bound and waiting members, the last failure."""
        waiting_by_group: dict[str, int] = {}
        for waiting in self._handle.iterate_waiting_pods():
            full = group_full_name(waiting.pod)
            if full and waiting.verdict is None:
                waiting_by_group[full] = waiting_by_group.get(full, 0) + 1
        names: set[str] = set(self._groups) | set(self._members)
        for known in self._cluster.objects("PodGroup"):
            names.add(f"{known.metadata.namespace}/{known.metadata.name}")
        now = self._now()
        out: dict[str, dict[str, Any]] = {}
        for full in sorted(names):
            namespace, _, label = full.partition("/")
            group: PodGroup | None = self._cluster.get("PodGroup", f"{namespace}/{label}")
            members = self._members.get(full, {})
            bound = sum(1 for p in members.values() if p.spec.node_name)
            held = waiting_by_group.get(full, 0)
            gstate = self._groups.get(full)
            last_failure = gstate.last_failure if gstate is not None else None
            if group is None:
                phase = "NotFound"
            elif bound >= group.min_member and group.min_member > 0:
                phase = "Scheduled"
            elif (
                gstate is not None
                and gstate.backoff_until is not None
                and now < gstate.backoff_until
            ):
                phase = "BackedOff"
            elif held:
                phase = "Scheduling"
            elif last_failure is not None:
                phase = "Unschedulable"
            else:
                phase = "Pending"
            out[full] = {
                "phase": phase,
                "bound": bound,
                "waiting": held,
                "lastFailure": last_failure,
            }
        return out


def _node_changed(old: Any, new: Any) -> bool:
    """Whether a node update may make room: allocatable, labels, taints or cordon."""
    return bool(
        dict(old.status.allocatable) != dict(new.status.allocatable)
        or dict(old.labels) != dict(new.labels)
        or old.spec.taints != new.spec.taints
        or old.spec.unschedulable != new.spec.unschedulable
    )


def wait_time(group: PodGroup | None, schedule_timeout: float) -> float:
    """util.GetWaitTimeDuration: the group's scheduleTimeoutSeconds, else the args, else 60s."""
    if group is not None and group.schedule_timeout_seconds is not None:
        return float(group.schedule_timeout_seconds)
    if schedule_timeout != 0:
        return schedule_timeout
    return DEFAULT_WAIT_TIME


def _node_left(info: NodeInfo, group_full: str) -> dict[str, int]:
    """core.go getNodeResource: allocatable minus requested, the group's own pods removed."""
    requested: dict[str, int] = {}
    pods = 0
    for pod_info in info.pods:
        if group_full_name(pod_info.pod) == group_full:
            continue
        pods += 1
        for name, amount in pod_info.requests.items():
            requested[name] = requested.get(name, 0) + amount
    alloc = info.allocatable
    left = {
        "cpu": alloc.milli_cpu - requested.get("cpu", 0),
        "memory": alloc.memory - requested.get("memory", 0),
        "pods": alloc.allowed_pod_number - pods,
        "ephemeral-storage": alloc.ephemeral_storage - requested.get("ephemeral-storage", 0),
    }
    for name, amount in alloc.scalar.items():
        left[name] = amount - requested.get(name, 0)
    return left


def check_cluster_resource(
    nodes: Iterable[NodeInfo], request: Mapping[str, int], group_full: str
) -> str | None:
    """core.go CheckClusterResource: None when the nodes' free resources, summed, cover
    ``request``; else the upstream "resource gap" message."""
    remaining = dict(request)
    for info in nodes:
        if info is None or info.node is None:
            continue
        left = _node_left(info, group_full)
        for name in list(remaining):
            rest = remaining[name] - left.get(name, 0)
            if rest <= 0:
                del remaining[name]
            else:
                remaining[name] = rest
        if not remaining:
            return None
    parts = " ".join(f"{k}:{_quantity(k, v)}" for k, v in sorted(remaining.items()))
    return f"resource gap: map[{parts}]"


def _quantity(name: str, amount: int) -> str:
    """A short quantity text (cpu from millicores)."""
    if name == "cpu":
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    return str(amount)
