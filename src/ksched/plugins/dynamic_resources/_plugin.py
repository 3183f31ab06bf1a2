"""DynamicResources: pods get the devices their ResourceClaims ask for.

# pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go: PreEnqueue (the
# claims exist), PreFilter (claims in use, pending allocations, device classes; the
# allocator), Filter (allocated claims' node selectors; allocation on the node), PostFilter
# (deallocate one unavailable claim nobody else holds), Score (computeScore: the
# firstAvailable subrequests chosen), Reserve (allocation in flight),
# Unreserve, PreBind (allocation and reservedFor written), EventsToRegister and hints.
# resourceclaim.Name / IsForPod / CanBeReserved / IsReservedForPod:
# staging/src/k8s.io/dynamic-resource-allocation/resourceclaim/resourceclaim.go
Devices count as in use when a claim in the cluster has them allocated or when a claim
reserved by a pod still in its binding cycle is about to get them (in flight), as
upstream's DRA manager counts assumed and in-flight claims.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Protocol, runtime_checkable

import attrs

from ...api import (
    RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE,
    AllocationResult,
    Device,
    DeviceClass,
    NodeSelector,
    Pod,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimStatus,
    compile_selector,
)
from ...framework import (
    SKIP,
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
    QueueingHint,
    Status,
    default_normalize_score,
)
from ...framework.batch import SignFragment
from ._allocator import (
    AllocationError,
    Allocator,
    DeviceID,
    InvalidPoolsError,
    PoolCache,
    Solution,
)

__all__ = [
    "ERR_CANNOT_ALLOCATE",
    "ERR_CLAIM_IN_USE",
    "ERR_NOT_AVAILABLE",
    "DynamicResources",
    "claim_names",
]

NAME: Final = "DynamicResources"
STATE_KEY: Final = NAME

# Reason strings, verbatim from upstream.
ERR_CANNOT_ALLOCATE: Final = "cannot allocate all claims"
ERR_NOT_AVAILABLE: Final = "resourceclaim not available on the node"
ERR_CLAIM_IN_USE: Final = "resourceclaim in use"
MSG_NO_NEW_CLAIMS: Final = "no new claims to deallocate"
MSG_DEALLOCATED: Final = "deallocation of ResourceClaim completed"
MSG_STILL_NOT_SCHEDULABLE: Final = "still not schedulable"

_MATCH_CACHE_MAX: Final = 1 << 18
FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE: Final = 8


class _ClaimProblem(Exception):
    """Why a pod's claims cannot be used now (always UnschedulableAndUnresolvable)."""


def claim_names(pod: Pod) -> list[tuple[str, str | None, bool]]:
    """(entry, claim name or None when not needed, whether the pod must own it) per
    ``spec.resourceClaims`` entry. Raises _ClaimProblem for a claim not created yet."""
    out: list[tuple[str, str | None, bool]] = []
    for entry in pod.spec.resource_claims:
        if entry.resource_claim_name is not None:
            out.append((entry.name, entry.resource_claim_name, False))
            continue
        status = next((s for s in pod.status.resource_claim_statuses if s.name == entry.name), None)
        if status is None:
            raise _ClaimProblem(f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet')
        out.append((entry.name, status.resource_claim_name, True))
    return out


def _is_reserved_for(pod: Pod, claim: ResourceClaim) -> bool:
    return any(r.resource == "pods" and r.uid == pod.uid for r in claim.status.reserved_for)


def _can_be_reserved(claim: ResourceClaim) -> bool:
    return len(claim.status.reserved_for) < RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE


def _allocated_devices(allocation: AllocationResult | None) -> list[DeviceID]:
    if allocation is None:
        return []
    return [(d.driver, d.pool, d.device) for d in allocation.devices if not d.admin_access]


class _InUse:
    """Devices in use: allocated to claims in the cluster, or in flight. Kept up to date
    from the cluster's change notifications, so PreFilter does not walk every claim;
    ``devices`` counts the holders of each device (the allocator tests membership)."""

    __slots__ = ("devices",)

    def __init__(self) -> None:
        self.devices: Counter[DeviceID] = Counter()

    def _move(self, devices: Iterable[DeviceID], step: int) -> None:
        counts = self.devices
        for device in devices:
            counts[device] += step
            if counts[device] <= 0:
                del counts[device]

    def claim_changed(self, old: ResourceClaim | None, new: ResourceClaim | None) -> None:
        if old is not None:
            self._move(_allocated_devices(old.status.allocation), -1)
        if new is not None:
            self._move(_allocated_devices(new.status.allocation), +1)

    def flight(self, allocation: AllocationResult | None, step: int) -> None:
        self._move(_allocated_devices(allocation), step)


@attrs.define(eq=False)
class _State:
    """The pod's claims for this cycle; shared by reference (Clone returns itself)."""

    claims: list[ResourceClaim] = attrs.field(factory=list)
    available_on: list[NodeSelector | None] = attrs.field(factory=list)
    allocator: Allocator | None = None
    unavailable: set[int] = attrs.field(factory=set)
    node_allocations: dict[str, Solution] = attrs.field(factory=dict)
    allocations: dict[int, AllocationResult] = attrs.field(factory=dict)

    def clone(self) -> _State:
        return self


@runtime_checkable
class ClaimWriter(Protocol):
    """A cluster store that can write a claim's status (allocation, reservedFor)."""

    async def update_resource_claim(self, claim: ResourceClaim) -> ResourceClaim: ...


class DynamicResources:
    """Allocates the devices of a pod's ResourceClaims on the node it goes to."""

    name = NAME

    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        cluster = handle.cluster
        self.enabled = isinstance(cluster, ClaimWriter)
        """False on a cluster that cannot write claims (no resource.k8s.io API there):
        the plugin then does nothing."""
        self._in_flight: dict[str, ResourceClaim] = {}
        """Claim uid -> the claim with the allocation Reserve picked, until PreBind wrote it."""
        self._matches: dict[tuple[int, str], tuple[Device, bool]] = {}
        self._in_use = _InUse()
        self._pools = PoolCache()
        if self.enabled:
            for claim in cluster.objects("ResourceClaim"):
                self._in_use.claim_changed(None, claim)
            cluster.subscribe(self._on_cluster_change)

    def _take_off(self, claim: ResourceClaim) -> None:
        """Reserve: the claim's allocation is in flight until PreBind or Unreserve."""
        self._land(claim.uid)
        self._in_flight[claim.uid] = claim
        self._in_use.flight(claim.status.allocation, +1)

    def _land(self, uid: str) -> None:
        claim = self._in_flight.pop(uid, None)
        if claim is not None:
            self._in_use.flight(claim.status.allocation, -1)

    def _on_cluster_change(self, kind: str, old: Any, new: Any) -> None:
        if kind == "ResourceClaim":
            self._in_use.claim_changed(old, new)

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> DynamicResources:
        return cls(handle)

    # ---- claims of a pod ---------------------------------------------------------

    @property
    def _cluster(self) -> Any:
        return self._handle.cluster

    def _pod_claims(self, pod: Pod) -> list[ResourceClaim]:
        claims: list[ResourceClaim] = []
        for _, name, must_own in claim_names(pod):
            if name is None:
                continue  # no claim needed for this entry
            claim: ResourceClaim | None = self._cluster.get(
                "ResourceClaim", f"{pod.namespace}/{name}"
            )
            if claim is None:
                raise _ClaimProblem(f'resourceclaim.resource.k8s.io "{name}" not found')
            if claim.metadata.deletion_timestamp is not None:
                raise _ClaimProblem(f'resourceclaim "{name}" is being deleted')
            if must_own and not any(
                o.controller and o.uid == pod.uid for o in claim.metadata.owner_references
            ):
                raise _ClaimProblem(
                    f"ResourceClaim {claim.key} was not created for pod {pod.key} "
                    "(pod is not owner)"
                )
            claims.append(claim)
        return claims

    def sign_pod(self, pod: Pod) -> Sequence[SignFragment] | Status:
        if pod.spec.resource_claims and self.enabled:
            return Status(Code.UNSCHEDULABLE, ("pod has resource claims",))
        return ()

    # ---- PreEnqueue ----------------------------------------------------------------

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not self.enabled or not pod.spec.resource_claims:
            return None
        try:
            self._pod_claims(pod)
        except _ClaimProblem as exc:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (str(exc),))
        return None

    # ---- PreFilter / Filter ------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        if not self.enabled or not pod.spec.resource_claims:
            return SKIP
        s = _State()
        state.write(STATE_KEY, s)
        try:
            claims = self._pod_claims(pod)
        except _ClaimProblem as exc:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (str(exc),))
        if not claims:
            return SKIP
        to_allocate: list[ResourceClaim] = []
        classes: dict[str, DeviceClass] = {}
        for claim in claims:
            allocation = claim.status.allocation
            if allocation is not None:
                if not _can_be_reserved(claim) and not _is_reserved_for(pod, claim):
                    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_CLAIM_IN_USE,))
                s.available_on.append(allocation.node_selector)
                continue
            s.available_on.append(None)
            to_allocate.append(claim)
            if claim.uid in self._in_flight:
                return Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    (f"resource claim {claim.key} is in the process of being allocated",),
                )
            for request in claim.spec.requests:
                wanted = (
                    [(request.name, request.device_class_name)]
                    if not request.first_available
                    else [
                        (f"{request.name}/{sub.name}", sub.device_class_name)
                        for sub in request.first_available
                    ]
                )
                for request_name, class_name in wanted:
                    if not class_name:
                        return Status.error(f"request {request_name}: unsupported request type")
                    found = self._cluster.get("DeviceClass", class_name)
                    if found is None:
                        return Status(
                            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                            (f"request {request_name}: device class {class_name} does not exist",),
                        )
                    classes[class_name] = found
        s.claims = claims
        if to_allocate:
            s.allocator = Allocator(
                to_allocate,
                classes,
                self._cluster.objects("ResourceSlice"),
                self._in_use.devices,
                self._matches_selector,
                self._pools,
            )
        return None

    def pre_filter_extensions(self) -> None:
        return None

    def _matches_selector(self, expression: str, device: Device, driver: str) -> bool:
        """A CEL verdict, kept across cycles while the device object stays the same."""
        key = (id(device), expression)
        known = self._matches.get(key)
        if known is not None and known[0] is device:
            return known[1]
        verdict = compile_selector(expression).matches(device, driver)
        if len(self._matches) >= _MATCH_CACHE_MAX:
            self._matches.clear()
        self._matches[key] = (device, verdict)
        return verdict

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not self.enabled:
            return None
        s: _State | None = state.get(STATE_KEY)
        if s is None:
            return Status.error(f'reading "{STATE_KEY}" from cycleState: not found')
        if not s.claims:
            return None
        node = node_info.node
        unavailable = [
            i
            for i, selector in enumerate(s.available_on)
            if selector is not None and not selector.matches(node.metadata.name, node.labels)
        ]
        solution: Solution | None = None
        if s.allocator is not None:
            try:
                solution = s.allocator.solve(node)
            except InvalidPoolsError as exc:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (str(exc),))
            except AllocationError as exc:
                return Status.error(str(exc))
            if solution is None:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_CANNOT_ALLOCATE,))
        if unavailable:
            s.unavailable.update(unavailable)
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_NOT_AVAILABLE,))
        if solution is not None:
            s.node_allocations[node.metadata.name] = solution
        return None

    # ---- PreScore / Score -----------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """Skip unless a claim to allocate has ``firstAvailable`` requests: only those
        score (upstream's Score gives every other pod 0 everywhere)."""
        s: _State | None = state.get(STATE_KEY)
        if not self.enabled or s is None or s.allocator is None:
            return SKIP
        if not any(r.first_available for c in s.allocator.claims for r in c.spec.requests):
            return SKIP
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """computeScore: for each subrequest chosen, 8 minus its position in the list."""
        s: _State | None = state.get(STATE_KEY)
        solution = None if s is None else s.node_allocations.get(node_info.name)
        if s is None or s.allocator is None or solution is None:
            return 0
        total = 0
        for claim, allocation in zip(s.allocator.claims, solution.results(), strict=True):
            chosen = {d.request for d in allocation.devices if "/" in d.request}
            for request in claim.spec.requests:
                for i, sub in enumerate(request.first_available):
                    if f"{request.name}/{sub.name}" in chosen:
                        total += FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE - i
        return total

    def score_extensions(self) -> DynamicResources:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> None:
        default_normalize_score(scores)

    # ---- PostFilter ----------------------------------------------------------------

    async def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        if not self.enabled:
            return None, Status(Code.UNSCHEDULABLE)
        if not pod.spec.resource_claims:
            # As upstream: the reason joins the PostFilter message of every unschedulable
            # pod in the default profile ("... no new claims to deallocate, preemption: ...").
            return None, Status(Code.UNSCHEDULABLE, (MSG_NO_NEW_CLAIMS,))
        s: _State | None = state.get(STATE_KEY)
        if s is None:
            return None, Status.error(f'reading "{STATE_KEY}" from cycleState: not found')
        if not s.claims:
            return None, Status(Code.UNSCHEDULABLE, (MSG_NO_NEW_CLAIMS,))
        # Upstream picks one at random; the lowest index keeps simulations repeatable.
        for index in sorted(s.unavailable):
            claim = s.claims[index]
            reserved = claim.status.reserved_for
            if not reserved or (len(reserved) == 1 and reserved[0].uid == pod.uid):
                freed = attrs.evolve(claim, status=ResourceClaimStatus())
                await self._cluster.update_resource_claim(freed)
                return None, Status(Code.UNSCHEDULABLE, (MSG_DEALLOCATED,))
        return None, Status(Code.UNSCHEDULABLE, (MSG_STILL_NOT_SCHEDULABLE,))

    # ---- Reserve / Unreserve -----------------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s: _State | None = state.get(STATE_KEY)
        if not self.enabled or s is None or not s.claims:
            return None
        pending = [i for i, c in enumerate(s.claims) if c.status.allocation is None]
        if not pending:
            return None
        solution = s.node_allocations.get(node_name)
        if solution is None or s.allocator is None:
            return Status.error("claim allocation not found for node")
        allocations = solution.results()
        if len(allocations) != len(pending):
            return Status.error(
                f"internal error, have {len(allocations)} allocations, "
                f"{len(s.allocator.claims)} claims to allocate, want {len(pending)} claims"
            )
        for index, allocation in zip(pending, allocations, strict=True):
            claim = s.claims[index]
            s.allocations[index] = allocation
            status = attrs.evolve(claim.status, allocation=allocation)
            self._take_off(attrs.evolve(claim, status=status))
        return None

    async def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        s: _State | None = state.get(STATE_KEY)
        if not self.enabled or s is None or not s.claims:
            return
        for claim in s.claims:
            self._land(claim.uid)
            current: ResourceClaim | None = self._cluster.get(
                "ResourceClaim", f"{claim.namespace}/{claim.name}"
            )
            if current is None or not _is_reserved_for(pod, current):
                continue
            reserved = tuple(r for r in current.status.reserved_for if r.uid != pod.uid)
            freed = attrs.evolve(
                current, status=attrs.evolve(current.status, reserved_for=reserved)
            )
            try:
                await self._cluster.update_resource_claim(freed)
            except LookupError:
                continue  # gone meanwhile: nothing to unreserve

    # ---- PreBind -------------------------------------------------------------------

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """SKIP when the pod has no claims (PreBind has nothing to do).
        # dynamicresources/dynamicresources.go PreBindPreFlight"""
        s: _State | None = state.get(STATE_KEY)
        if not self.enabled or s is None or not s.claims:
            return SKIP
        return None

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s: _State | None = state.get(STATE_KEY)
        if not self.enabled or s is None or not s.claims:
            return None
        for index, claim in enumerate(s.claims):
            if _is_reserved_for(pod, claim):
                continue
            try:
                s.claims[index] = await self._bind_claim(s, index, pod)
            except (LookupError, ValueError) as exc:
                return Status.error(str(exc))
        return None

    async def _bind_claim(self, s: _State, index: int, pod: Pod) -> ResourceClaim:
        """Write the allocation from Reserve (if any) and the pod into ``reservedFor``."""
        claim = s.claims[index]
        allocation = s.allocations.get(index)
        try:
            current: ResourceClaim | None = self._cluster.get(
                "ResourceClaim", f"{claim.namespace}/{claim.name}"
            )
            if current is None or current.uid != claim.uid:
                raise LookupError(f"resourceclaim {claim.key}: not found")
            if current.metadata.deletion_timestamp is not None:
                raise ValueError(f"claim {claim.key} got deleted in the meantime")
            status = current.status
            if allocation is not None:
                if status.allocation is not None:
                    raise ValueError(f"claim {claim.key} got allocated elsewhere in the meantime")
                status = attrs.evolve(status, allocation=allocation)
            consumer = ResourceClaimConsumerReference(resource="pods", name=pod.name, uid=pod.uid)
            status = attrs.evolve(status, reserved_for=(*status.reserved_for, consumer))
            updated: ResourceClaim = await self._cluster.update_resource_claim(
                attrs.evolve(current, status=status)
            )
            return updated
        finally:
            if allocation is not None:
                self._land(claim.uid)

    # ---- events --------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        if not self.enabled:
            return []
        return [
            # A resource might depend on node labels for topology filtering.
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
            ),
            # Allocation is tracked in ResourceClaims: changes may make pods schedulable.
            ClusterEventWithHint(
                ClusterEvent(EventResource.RESOURCE_CLAIM, ActionType.ADD | ActionType.UPDATE),
                self.is_schedulable_after_claim_change,
            ),
            # The claim's name in the pod status unblocks pods waiting for their claim.
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
                self.is_schedulable_after_pod_change,
            ),
            # A pod might be waiting for a class to get created or modified.
            ClusterEventWithHint(
                ClusterEvent(EventResource.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE)
            ),
            # New or changed slices may bring devices.
            ClusterEventWithHint(
                ClusterEvent(EventResource.RESOURCE_SLICE, ActionType.ADD | ActionType.UPDATE)
            ),
        ]

    def is_schedulable_after_claim_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Queue when a claim of the pod was created or its status changed, or when any
        claim was deallocated (devices came free)."""
        if not isinstance(new, ResourceClaim):
            return QueueingHint.QUEUE
        try:
            uses = any(c.uid == new.uid for c in self._pod_claims(pod))
        except _ClaimProblem:
            return QueueingHint.SKIP
        if (
            isinstance(old, ResourceClaim)
            and old.status.allocation is not None
            and new.status.allocation is None
        ):
            return QueueingHint.QUEUE
        if not uses:
            return QueueingHint.SKIP
        if old is None:
            return QueueingHint.QUEUE
        if isinstance(old, ResourceClaim) and old.status == new.status:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE

    def is_schedulable_after_pod_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Queue when this pod's update gave it all the claims it waited for."""
        if not isinstance(new, Pod) or new.uid != pod.uid:
            return QueueingHint.SKIP
        try:
            self._pod_claims(new)
        except _ClaimProblem:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE
