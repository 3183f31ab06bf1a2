"""The volume binder: a pod's claims, their matching PVs, provisioning, the assume cache.

# pkg/scheduler/framework/plugins/volumebinding/binder.go (GetPodVolumeClaims,
# FindPodVolumes, checkBoundClaims, findMatchingVolumes, checkVolumeProvisions,
# hasEnoughCapacity, AssumePodVolumes, RevertAssumedPodVolumes), assume_cache.go;
# component-helpers/storage/volume pv_helpers.go (FindMatchingVolume, CheckNodeAffinity,
# IsDelayBindingMode, GetBindVolumeToClaim).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

from ksched import Node, Pod
from ksched.api import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    ClaimRef,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    claim_class,
    ephemeral_claim_owner_error,
    pod_claim_names,
    volume_class,
)

__all__ = [
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
    "BinderError",
    "BindingInfo",
    "PodVolumeClaims",
    "PodVolumes",
    "VolumeBinder",
]

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) had volume node affinity conflict"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = (
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
)
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"


class BinderError(Exception):
    """A lookup that failed; ``not_found`` when the object is missing (unresolvable)."""

    def __init__(self, message: str, *, not_found: bool = False) -> None:
        super().__init__(message)
        self.not_found = not_found


@attrs.frozen
class BindingInfo:
    """A PVC and the PV proposed for it."""

    pvc: PersistentVolumeClaim
    pv: PersistentVolume

    @property
    def storage_class_name(self) -> str:
        return self.pv.storage_class_name

    @property
    def requested(self) -> int:
        return self.pvc.request or 0

    @property
    def capacity(self) -> int:
        return self.pv.capacity


@attrs.define(eq=False)
class PodVolumeClaims:
    bound: list[PersistentVolumeClaim] = attrs.field(factory=list)
    unbound_delay_binding: list[PersistentVolumeClaim] = attrs.field(factory=list)
    unbound_immediate: list[PersistentVolumeClaim] = attrs.field(factory=list)
    unbound_volumes_delay_binding: dict[str, list[PersistentVolume]] = attrs.field(factory=dict)


@attrs.define(eq=False)
class PodVolumes:
    """A node's answer for the pod: PVs to bind statically and claims to provision."""

    static_bindings: list[BindingInfo] = attrs.field(factory=list)
    dynamic_provisions: list[PersistentVolumeClaim] = attrs.field(factory=list)
    node_capacities: dict[str, CSIStorageCapacity] = attrs.field(factory=dict)
    """Claim key -> the CSIStorageCapacity that showed room for it (drivers that track it)."""


def check_node_affinity(pv: PersistentVolume, node: Node) -> bool:
    """CheckNodeAffinity: no required affinity, or a term matching the node's labels."""
    if pv.node_affinity is None:
        return True
    # Upstream matches the terms against a node object holding only the labels.
    return pv.node_affinity.matches("", node.labels)


def is_bound_to_claim(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> bool:
    ref = pv.claim_ref
    if ref is None or ref.name != pvc.name or ref.namespace != pvc.namespace:
        return False
    return not ref.uid or ref.uid == pvc.metadata.uid


def find_matching_volume(
    pvc: PersistentVolumeClaim,
    volumes: Iterable[PersistentVolume],
    node: Node | None,
    excluded: set[str],
    delay_binding: bool,
) -> PersistentVolume | None:
    """FindMatchingVolume: the PV pre-bound to ``pvc``, else the smallest available match."""
    requested = pvc.request or 0
    requested_class = claim_class(pvc)
    smallest: PersistentVolume | None = None
    for pv in volumes:
        if pv.name in excluded:
            continue
        if pv.claim_ref is not None and not is_bound_to_claim(pv, pvc):
            continue
        if pv.capacity < requested or pv.volume_mode != pvc.volume_mode:
            continue
        if pv.metadata.deletion_timestamp is not None:
            continue
        affinity_ok = node is None or check_node_affinity(pv, node)
        if is_bound_to_claim(pv, pvc):
            return pv if affinity_ok else None
        if node is None and delay_binding:
            continue
        if pv.phase != "Available":
            continue
        if pvc.selector is not None and not pvc.selector.matches(pv.metadata.labels):
            continue
        if volume_class(pv) != requested_class or not affinity_ok:
            continue
        if node is not None and not all(m in pv.access_modes for m in pvc.access_modes):
            continue
        if smallest is None or smallest.capacity > pv.capacity:
            smallest = pv
    return smallest


class VolumeBinder:
    """SchedulerVolumeBinder over a cluster store, with an assume cache for PVs and PVCs.

    An assumed object shadows the cluster's object it was made from, and only that one: once
    the cluster holds a different object under the name (it changed), the assumed version
    is dropped, as upstream's assume cache lets a newer informer version win.
    """

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        self._pvs: dict[str, tuple[PersistentVolume | None, PersistentVolume]] = {}
        self._pvcs: dict[str, tuple[PersistentVolumeClaim | None, PersistentVolumeClaim]] = {}

    # ---- the assume cache --------------------------------------------------------

    def get_pv(self, name: str) -> PersistentVolume | None:
        current: PersistentVolume | None = self.cluster.get("PersistentVolume", name)
        entry = self._pvs.get(name)
        if entry is None:
            return current
        if entry[0] is not current:
            del self._pvs[name]
            return current
        return entry[1]

    def get_pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        current: PersistentVolumeClaim | None = self.cluster.get(
            "PersistentVolumeClaim", f"{namespace}/{name}"
        )
        key = f"{namespace}/{name}"
        entry = self._pvcs.get(key)
        if entry is None:
            return current
        if entry[0] is not current:
            del self._pvcs[key]
            return current
        return entry[1]

    def assume_pv(self, pv: PersistentVolume) -> None:
        self._pvs[pv.name] = (self.cluster.get("PersistentVolume", pv.name), pv)

    def assume_pvc(self, pvc: PersistentVolumeClaim) -> None:
        self._pvcs[pvc.key] = (
            self.cluster.get("PersistentVolumeClaim", f"{pvc.namespace}/{pvc.name}"),
            pvc,
        )

    def list_pvs(self, storage_class: str) -> list[PersistentVolume]:
        out = []
        for pv in self.cluster.objects("PersistentVolume"):
            entry = self._pvs.get(pv.name)
            if entry is not None and entry[0] is pv:
                pv = entry[1]
            if volume_class(pv) == storage_class:
                out.append(pv)
        return out

    # ---- PreFilter ----------------------------------------------------------------

    @staticmethod
    def is_fully_bound(pvc: PersistentVolumeClaim) -> bool:
        return bool(pvc.volume_name) and ANN_BIND_COMPLETED in pvc.metadata.annotations

    def is_delay_binding(self, pvc: PersistentVolumeClaim) -> bool:
        """IsDelayBindingMode: the claim's class binds at the first consumer."""
        name = claim_class(pvc)
        if not name:
            return False
        sc: StorageClass | None = self.cluster.get("StorageClass", name)
        if sc is None:
            return False
        if sc.volume_binding_mode is None:
            raise BinderError(f'VolumeBindingMode not set for StorageClass "{name}"')
        return sc.volume_binding_mode == "WaitForFirstConsumer"

    def pod_volume_claims(self, pod: Pod) -> PodVolumeClaims:
        """GetPodVolumeClaims: the pod's claims as bound, delayed and immediate."""
        claims = PodVolumeClaims()
        for name, ephemeral in pod_claim_names(pod):
            pvc = self.get_pvc(pod.namespace, name)
            if pvc is None:
                raise BinderError(f'error getting PVC "{pod.namespace}/{name}": not found')
            if ephemeral and (err := ephemeral_claim_owner_error(pod, pvc)) is not None:
                raise BinderError(err)
            if self.is_fully_bound(pvc):
                claims.bound.append(pvc)
            elif self.is_delay_binding(pvc) and not pvc.volume_name:
                claims.unbound_delay_binding.append(pvc)
            else:
                claims.unbound_immediate.append(pvc)
        for pvc in claims.unbound_delay_binding:
            cls = claim_class(pvc)
            claims.unbound_volumes_delay_binding[cls] = self.list_pvs(cls)
        return claims

    # ---- Filter -------------------------------------------------------------------

    def find_pod_volumes(
        self, pod: Pod, claims: PodVolumeClaims, node: Node
    ) -> tuple[PodVolumes, list[str]]:
        """FindPodVolumes: the node's bindings and provisions, or the reasons it fails."""
        volumes = PodVolumes()
        bound_ok = unbound_ok = storage_ok = pvs_found = True
        if claims.bound:
            bound_ok, pvs_found = self._check_bound_claims(claims.bound, node)
        if claims.unbound_delay_binding:
            to_match: list[PersistentVolumeClaim] = []
            to_provision: list[PersistentVolumeClaim] = []
            for pvc in claims.unbound_delay_binding:
                selected = pvc.metadata.annotations.get(ANN_SELECTED_NODE)
                if selected is None:
                    to_match.append(pvc)
                elif selected != node.name:
                    unbound_ok = False
                    break
                else:
                    to_provision.append(pvc)
            else:
                if to_match:
                    unbound_ok, volumes.static_bindings, unmatched = self._find_matching(
                        to_match, claims.unbound_volumes_delay_binding, node
                    )
                    to_provision.extend(unmatched)
                if to_provision:
                    unbound_ok, storage_ok, provisions = self._check_provisions(to_provision, node)
                    volumes.dynamic_provisions = [pvc for pvc, _ in provisions]
                    volumes.node_capacities = {
                        pvc.key: cap for pvc, cap in provisions if cap is not None
                    }
        reasons = []
        if not bound_ok:
            reasons.append(ERR_REASON_NODE_CONFLICT)
        if not unbound_ok:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not storage_ok:
            reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        if not pvs_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return volumes, reasons

    def _check_bound_claims(
        self, bound: list[PersistentVolumeClaim], node: Node
    ) -> tuple[bool, bool]:
        for pvc in bound:
            pv = self.get_pv(pvc.volume_name)
            if pv is None:
                return True, False
            if not check_node_affinity(pv, node):
                return False, True
        return True, True

    def _find_matching(
        self,
        claims: list[PersistentVolumeClaim],
        pvs_by_class: dict[str, list[PersistentVolume]],
        node: Node,
    ) -> tuple[bool, list[BindingInfo], list[PersistentVolumeClaim]]:
        chosen: set[str] = set()
        bindings: list[BindingInfo] = []
        unmatched: list[PersistentVolumeClaim] = []
        found = True
        # Smallest requests first, so each gets the smallest PV that fits.
        for pvc in sorted(claims, key=lambda c: c.request or 0):
            pvs = pvs_by_class.get(claim_class(pvc), [])
            pv = find_matching_volume(pvc, pvs, node, chosen, True)
            if pv is None:
                unmatched.append(pvc)
                found = False
                continue
            chosen.add(pv.name)
            bindings.append(BindingInfo(pvc, pv))
        return found, bindings, unmatched

    def _check_provisions(
        self, claims: list[PersistentVolumeClaim], node: Node
    ) -> tuple[bool, bool, list[tuple[PersistentVolumeClaim, CSIStorageCapacity | None]]]:
        provisions: list[tuple[PersistentVolumeClaim, CSIStorageCapacity | None]] = []
        for pvc in claims:
            name = claim_class(pvc)
            if not name:
                raise BinderError(f'no class for claim "{pvc.key}"')
            sc: StorageClass | None = self.cluster.get("StorageClass", name)
            if sc is None:
                raise BinderError(f'failed to find storage class "{name}"')
            if not sc.provisioner or sc.provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True, []
            if not sc.allows(node.labels):
                return False, True, []
            sufficient, capacity = self._has_enough_capacity(sc, pvc, node)
            if not sufficient:
                return True, False, []
            provisions.append((pvc, capacity))
        return True, True, provisions

    def _has_enough_capacity(
        self, sc: StorageClass, pvc: PersistentVolumeClaim, node: Node
    ) -> tuple[bool, CSIStorageCapacity | None]:
        """hasEnoughCapacity: only for CSI drivers that opt into capacity tracking; the
        first accessible CSIStorageCapacity of the class with room is returned."""
        if pvc.request is None:
            return True, None
        driver = self.cluster.get("CSIDriver", sc.provisioner)
        if driver is None or not driver.storage_capacity:
            return True, None
        for cap in self.cluster.objects("CSIStorageCapacity"):
            limit = cap.limit()
            if (
                cap.storage_class_name == sc.name
                and limit is not None
                and limit >= pvc.request
                and cap.node_topology is not None
                and cap.node_topology.matches(node.labels)
            ):
                return True, cap
        return False, None

    # ---- Reserve / Unreserve ------------------------------------------------------

    def assume(self, pod: Pod, node_name: str, volumes: PodVolumes) -> bool:
        """AssumePodVolumes: PVs pre-bound and claims marked for provisioning, in the
        cache only. Returns whether every claim of the pod is already fully bound."""
        if self.all_bound(pod):
            return True
        bindings = []
        for binding in volumes.static_bindings:
            pv = bind_volume_to_claim(binding.pv, binding.pvc)
            if pv is not binding.pv:
                self.assume_pv(pv)
            bindings.append(BindingInfo(binding.pvc, pv))
        provisions = []
        for pvc in volumes.dynamic_provisions:
            annotations = {**pvc.metadata.annotations, ANN_SELECTED_NODE: node_name}
            marked = attrs.evolve(pvc, metadata=attrs.evolve(pvc.metadata, annotations=annotations))
            self.assume_pvc(marked)
            provisions.append(marked)
        volumes.static_bindings = bindings
        volumes.dynamic_provisions = provisions
        return False

    def revert(self, volumes: PodVolumes) -> None:
        """RevertAssumedPodVolumes."""
        for binding in volumes.static_bindings:
            self._pvs.pop(binding.pv.name, None)
        for pvc in volumes.dynamic_provisions:
            self._pvcs.pop(pvc.key, None)

    def all_bound(self, pod: Pod) -> bool:
        for name, _ in pod_claim_names(pod):
            pvc = self.get_pvc(pod.namespace, name)
            if pvc is None or not self.is_fully_bound(pvc):
                return False
        return True


def bind_volume_to_claim(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> PersistentVolume:
    """GetBindVolumeToClaim: the PV with its claimRef set (the same object if it was)."""
    ref = pv.claim_ref
    uid = pvc.metadata.uid
    by_controller = not is_bound_to_claim(pv, pvc)
    same = ref is not None and (ref.name, ref.namespace, ref.uid) == (pvc.name, pvc.namespace, uid)
    if same and (not by_controller or ANN_BOUND_BY_CONTROLLER in pv.metadata.annotations):
        return pv
    annotations = dict(pv.metadata.annotations)
    if by_controller:
        annotations.setdefault(ANN_BOUND_BY_CONTROLLER, "yes")
    return attrs.evolve(
        pv,
        claim_ref=ClaimRef(name=pvc.name, namespace=pvc.namespace, uid=uid),
        metadata=attrs.evolve(pv.metadata, annotations=annotations),
    )
