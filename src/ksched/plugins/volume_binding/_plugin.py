"""VolumeBinding: PVCs bound or bindable on the node; assume in Reserve, bind in PreBind.

# pkg/scheduler/framework/plugins/volumebinding/volume_binding.go
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import anyio
import attrs
import numpy as np

from ksched import InMemoryCluster, Pod
from ksched.api import ephemeral_claim_owner_error, pod_claim_names
from ksched.cluster._store import VolumeUpdateError, VolumeUpdater
from ksched.framework import (
    SKIP,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    NodeInfo,
    QueueingHint,
    Status,
    parse_plugin_args,
)
from ksched.framework.batch import VOLUMES, BoolArray, NodeTable, SignFragment, volumes_signer

from ._binder import BinderError, PodVolumeClaims, PodVolumes, VolumeBinder
from ._controller import bind_in_memory, check_bindings
from ._scorer import VolumeBindingArgs, build_scorer

__all__ = ["ERR_UNBOUND_IMMEDIATE", "VolumeBinding"]

NAME: Final = "VolumeBinding"
STATE_KEY: Final = NAME
ERR_UNBOUND_IMMEDIATE: Final = "pod has unbound immediate PersistentVolumeClaims"
POLL_SECONDS = 1.0
"""binder.go's checkBindings period; through an API, changes of the watched kinds wake the
check sooner (the check reads caches only)."""
_BINDING_KINDS: Final = frozenset({"PersistentVolume", "PersistentVolumeClaim", "Pod", "Node"})


@attrs.define(eq=False)
class _State:
    """Per-attempt data; shared by clones (Filter writes per node, Reserve reads one)."""

    claims: PodVolumeClaims | None = None
    by_node: dict[str, PodVolumes] = attrs.field(factory=dict)
    has_static_bindings: bool = False
    all_bound: bool = False

    def clone(self) -> _State:
        return self


_NO_CLAIMS: Final = _State(all_bound=True)
"""The state of every pod without claims (upstream writes an empty stateData); never changed."""


class VolumeBinding:
    """Checks that the pod's claims can be bound on the node and binds them (PreBind)."""

    name = NAME

    def __init__(self, args: VolumeBindingArgs, handle: Handle) -> None:
        args.validate(NAME)
        self.args = args
        self._cluster: Any = handle.cluster
        self.binder = VolumeBinder(self._cluster)
        self._scorer = build_scorer(args.shape) if args.shape else None

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> VolumeBinding:
        return cls(parse_plugin_args(VolumeBindingArgs, args, plugin=NAME), handle)

    def sign_pod(self, pod: Pod) -> Sequence[SignFragment]:
        return ((VOLUMES, volumes_signer(pod)),)

    # ---- PreFilter ----------------------------------------------------------------

    def _claim_error(self, pod: Pod) -> tuple[bool, str | None]:
        """podHasPVCs: whether the pod uses claims, and why it cannot (yet)."""
        has_pvc = False
        for name, ephemeral in pod_claim_names(pod):
            has_pvc = True
            pvc = self._cluster.get("PersistentVolumeClaim", f"{pod.namespace}/{name}")
            if pvc is None:
                if ephemeral:
                    return True, (
                        "waiting for ephemeral volume controller to create the "
                        f'persistentvolumeclaim "{name}"'
                    )
                return True, f'persistentvolumeclaim "{name}" not found'
            if pvc.phase == "Lost":
                return True, (
                    f'persistentvolumeclaim "{name}" bound to non-existent persistentvolume '
                    f'"{pvc.volume_name}"'
                )
            if pvc.metadata.deletion_timestamp is not None:
                return True, f'persistentvolumeclaim "{name}" is being deleted'
            if ephemeral and (err := ephemeral_claim_owner_error(pod, pvc)) is not None:
                return True, err
        return has_pvc, None

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        if not pod.spec.volumes:
            state.write(STATE_KEY, _NO_CLAIMS)
            return SKIP
        has_pvc, err = self._claim_error(pod)
        if err is not None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (err,))
        if not has_pvc:
            state.write(STATE_KEY, _NO_CLAIMS)
            return SKIP
        try:
            claims = self.binder.pod_volume_claims(pod)
        except BinderError as exc:
            return Status(Code.ERROR, (str(exc),))
        if claims.unbound_immediate:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_UNBOUND_IMMEDIATE,))
        state.write(STATE_KEY, _State(claims=claims))
        return None

    def pre_filter_extensions(self) -> None:
        return None

    # ---- Filter / Score -----------------------------------------------------------

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        data: _State | None = state.get(STATE_KEY)
        if data is None or data.claims is None:
            return Status(Code.ERROR, (f'reading "{STATE_KEY}" from cycleState: not found',))
        try:
            volumes, reasons = self.binder.find_pod_volumes(pod, data.claims, node_info.node)
        except BinderError as exc:
            return Status(Code.ERROR, (str(exc),))
        if reasons:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, tuple(reasons))
        data.by_node[node_info.name or node_info.node.name] = volumes
        data.has_static_bindings = data.has_static_bindings or bool(volumes.static_bindings)
        return None

    def filter_batch(self, state: CycleState, pod: Pod, table: NodeTable) -> BoolArray | None:
        """Every node passes when the pod's claims are all bound to PVs that exist and
        have no node affinity: ``find_pod_volumes`` would find nothing to bind and no
        conflict on any node. Otherwise None (each node is judged by ``filter``)."""
        data: _State | None = state.get(STATE_KEY)
        if data is None or data.claims is None:
            return None
        claims = data.claims
        if claims.unbound_delay_binding or claims.unbound_immediate or not claims.bound:
            return None
        get_pv = self.binder.get_pv
        for pvc in claims.bound:
            pv = get_pv(pvc.volume_name)
            if pv is None or pv.node_affinity is not None:
                return None
        return np.ones(len(table), dtype=np.bool_)

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        if self._scorer is None:
            return SKIP
        if state.get(STATE_KEY) is None:
            return Status(Code.ERROR, (f'reading "{STATE_KEY}" from cycleState: not found',))
        return None  # scoring on: static bindings and provisions are both scored

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """Storage utilization per class on the node, on the shape: the PVs a static
        binding would use, else the CSIStorageCapacity that showed room for provisions."""
        data: _State | None = state.get(STATE_KEY)
        if self._scorer is None or data is None:
            return 0
        volumes = data.by_node.get(node_info.name or node_info.node.name)
        if volumes is None:
            return 0
        classes: dict[str, tuple[int, int]] = {}
        if volumes.static_bindings:
            for binding in volumes.static_bindings:
                req, cap = classes.get(binding.storage_class_name, (0, 0))
                classes[binding.storage_class_name] = (
                    req + binding.requested,
                    cap + binding.capacity,
                )
        else:
            for pvc in volumes.dynamic_provisions:
                node_capacity = volumes.node_capacities.get(pvc.key)
                if node_capacity is None:
                    continue
                cls = pvc.storage_class_name or ""
                req, _ = classes.get(cls, (0, 0))
                # One pool per class on the node: its capacity is set, not summed.
                classes[cls] = (req + (pvc.request or 0), node_capacity.capacity or 0)
        return self._scorer(classes)

    def score_extensions(self) -> None:
        return None

    # ---- Reserve / PreBind / Unreserve --------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        data: _State | None = state.get(STATE_KEY)
        if data is None:
            return Status(Code.ERROR, (f'reading "{STATE_KEY}" from cycleState: not found',))
        if data is _NO_CLAIMS:
            return None
        volumes = data.by_node.get(node_name)
        data.all_bound = True if volumes is None else self.binder.assume(pod, node_name, volumes)
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        data: _State | None = state.get(STATE_KEY)
        if data is None:
            return
        volumes = data.by_node.get(node_name)
        if volumes is not None:
            self.binder.revert(volumes)

    def explain_decision(self, state: CycleState, node_name: str) -> dict[str, Any] | None:
        """For ``--explain``: claim -> chosen PV, and the claims to provision on the node."""
        data: _State | None = state.get(STATE_KEY)
        volumes = None if data is None else data.by_node.get(node_name)
        if volumes is None:
            return None
        out: dict[str, Any] = {}
        if volumes.static_bindings:
            out["bind"] = {b.pvc.key: b.pv.name for b in volumes.static_bindings}
        if volumes.dynamic_provisions:
            out["provision"] = [pvc.key for pvc in volumes.dynamic_provisions]
        return out or None

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """SKIP when every claim of the pod is bound already (PreBind has nothing to do).
        # volumebinding/volume_binding.go PreBindPreFlight"""
        data: _State | None = state.get(STATE_KEY)
        if data is not None and data.all_bound:
            return SKIP
        return None

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        data: _State | None = state.get(STATE_KEY)
        if data is None:
            return Status(Code.ERROR, (f'reading "{STATE_KEY}" from cycleState: not found',))
        if data.all_bound:
            return None
        volumes = data.by_node.get(node_name)
        if volumes is None:
            return Status(Code.ERROR, (f'no pod volumes found for node "{node_name}"',))
        if isinstance(self._cluster, VolumeUpdater):
            return await self._bind_through_api(self._cluster, pod, node_name, volumes)
        if not isinstance(self._cluster, InMemoryCluster):
            return Status(Code.ERROR, ("binding volumes: the cluster store cannot update PVs",))
        try:
            bind_in_memory(self._cluster, volumes, node_name)
            with anyio.move_on_after(self.args.bind_timeout_seconds):
                while True:
                    if check_bindings(self._cluster, pod, node_name, volumes):
                        return None
                    await anyio.sleep(POLL_SECONDS)
        except BinderError as exc:
            self.binder.revert(volumes)
            return Status(Code.ERROR, (f"binding volumes: {exc}",))
        return Status(Code.ERROR, ("binding volumes: context deadline exceeded",))

    async def _bind_through_api(
        self, cluster: VolumeUpdater, pod: Pod, node_name: str, volumes: PodVolumes
    ) -> Status | None:
        """BindPodVolumes: write the assumed PVs and claims (bindAPIUpdate), then wait for
        the PV controller and provisioners to bind them (checkBindings), woken by the
        watch caches, within bindTimeoutSeconds. The writes are not rolled back."""
        wake = anyio.Event()

        def on_change(kind: str, old: Any, new: Any) -> None:
            if kind in _BINDING_KINDS:
                wake.set()

        self._cluster.subscribe(on_change)
        try:
            with anyio.move_on_after(self.args.bind_timeout_seconds):
                try:
                    for binding in volumes.static_bindings:
                        await cluster.update_volume(binding.pv)
                    for claim in volumes.dynamic_provisions:
                        await cluster.update_volume(claim)
                except VolumeUpdateError as exc:
                    self.binder.revert(volumes)
                    return Status(Code.ERROR, (str(exc),))
                while True:
                    try:
                        if check_bindings(self._cluster, pod, node_name, volumes):
                            return None
                    except BinderError as exc:
                        return Status(Code.ERROR, (f"binding volumes: {exc}",))
                    with anyio.move_on_after(POLL_SECONDS):
                        await wake.wait()
                    wake = anyio.Event()
        finally:
            self._cluster.unsubscribe(on_change)
        return Status(Code.ERROR, ("binding volumes: context deadline exceeded",))

    # ---- events -------------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        add_update = ActionType.ADD | ActionType.UPDATE
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.STORAGE_CLASS, add_update),
                self.is_schedulable_after_storage_class_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, add_update),
                self.is_schedulable_after_pvc_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME, add_update),
                self.is_schedulable_after_pv_change,
            ),
            # Queueing hints are on, so no UpdateNodeTaint workaround for preCheck.
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_NODE, add_update),
                self.is_schedulable_after_csi_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_DRIVER, ActionType.UPDATE),
                self.is_schedulable_after_csi_driver_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_STORAGE_CAPACITY, add_update),
                self.is_schedulable_after_csi_storage_capacity_change,
            ),
        ]

    def is_schedulable_after_pv_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """A PV appearing or changing matters only to pods using claims."""
        if any(True for _ in pod_claim_names(pod)):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def is_schedulable_after_pvc_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Any creation or change of one of the pod's claims (ephemeral ones included)."""
        if new is None or new.metadata.namespace != pod.namespace:
            return QueueingHint.SKIP
        if any(name == new.name for name, _ in pod_claim_names(pod)):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def is_schedulable_after_storage_class_change(
        self, pod: Pod, old: Any, new: Any
    ) -> QueueingHint:
        """A new class, or a change of allowedTopologies (the binding mode is immutable)."""
        if old is None or old.allowed_topologies != new.allowed_topologies:
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def is_schedulable_after_csi_node_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """A new CSINode, or a change of its migrated-plugins annotation."""
        if old is None or old.migrated_plugins() != new.migrated_plugins():
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def is_schedulable_after_csi_driver_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """A driver of the pod's inline CSI volumes stopped tracking storage capacity."""
        for v in pod.spec.volumes:
            if v.csi is None or v.csi.driver != new.name:
                continue
            if old.storage_capacity and not new.storage_capacity:
                return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def is_schedulable_after_csi_storage_capacity_change(
        self, pod: Pod, old: Any, new: Any
    ) -> QueueingHint:
        """A new CSIStorageCapacity, or a higher volume limit (maximum size, else capacity)."""
        if old is None:
            return QueueingHint.QUEUE
        old_limit, new_limit = old.limit(), new.limit()
        if new_limit is not None and (old_limit is None or new_limit > old_limit):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP
