"""The in-memory cluster's side of volume binding: what the API updates of PreBind and the
PV controller and external provisioner that answer them do in a real cluster.

# binder.go bindAPIUpdate, checkBindings; pkg/controller/volume/persistentvolume
# (bind a claim to its volume: volumeName, bind-completed; both phases Bound) and the CSI
# external-provisioner (a PV named pvc-<claim uid> on the selected node's topology).
"""

from __future__ import annotations

import attrs

from ksched import InMemoryCluster, Pod
from ksched.api import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    ClaimRef,
    CSIVolumeSource,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    PersistentVolume,
    PersistentVolumeClaim,
    claim_class,
)

from ._binder import BinderError, PodVolumes, check_node_affinity

__all__ = ["ANN_PROVISIONED_BY", "bind_in_memory", "check_bindings"]

ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"


def _annotate(meta: ObjectMeta, **extra: str) -> ObjectMeta:
    return attrs.evolve(meta, annotations={**meta.annotations, **extra})


def _bind_claim(cluster: InMemoryCluster, pvc: PersistentVolumeClaim, pv: PersistentVolume) -> None:
    """The PV controller's bind: the claim names the volume and both become Bound."""
    ref = ClaimRef(name=pvc.name, namespace=pvc.namespace, uid=pvc.metadata.uid)
    cluster.apply(attrs.evolve(pv, claim_ref=ref, phase="Bound"))
    extra = {ANN_BIND_COMPLETED: "yes", ANN_BOUND_BY_CONTROLLER: "yes"}
    cluster.apply(
        attrs.evolve(
            pvc, volume_name=pv.name, phase="Bound", metadata=_annotate(pvc.metadata, **extra)
        )
    )


def _provision(cluster: InMemoryCluster, pvc: PersistentVolumeClaim, node_name: str) -> None:
    """The external provisioner: a PV of the claim's size on the selected node's topology."""
    sc = cluster.get("StorageClass", claim_class(pvc))
    if sc is None:
        raise BinderError(f'provisioning failed for PVC "{pvc.name}"')
    node = cluster.get("Node", node_name)
    keys: list[str] = []
    csi_node = cluster.get("CSINode", node_name)
    if csi_node is not None:
        keys = [k for d in csi_node.drivers if d.name == sc.provisioner for k in d.topology_keys]
    if not keys:
        keys = [k for t in sc.allowed_topologies for k, _ in t.match_label_expressions]
    labels = node.labels if node is not None else {}
    reqs = tuple(
        NodeSelectorRequirement(key=k, operator="In", values=(labels[k],))
        for k in dict.fromkeys(keys)
        if k in labels
    )
    name = f"pvc-{pvc.metadata.uid}" if pvc.metadata.uid else f"pvc-{pvc.namespace}-{pvc.name}"
    pv = PersistentVolume(
        metadata=ObjectMeta(
            name=name, namespace="", annotations={ANN_PROVISIONED_BY: sc.provisioner}
        ),
        capacity=pvc.request or 0,
        access_modes=pvc.access_modes,
        volume_mode=pvc.volume_mode,
        storage_class_name=sc.name,
        node_affinity=NodeSelector(terms=(NodeSelectorTerm(match_expressions=reqs),))
        if reqs
        else None,
        phase="Bound",
        csi=CSIVolumeSource(driver=sc.provisioner, volume_handle=name),
    )
    _bind_claim(cluster, pvc, pv)


def bind_in_memory(cluster: InMemoryCluster, volumes: PodVolumes, node_name: str) -> None:
    """bindAPIUpdate, answered at once as the controllers would answer it."""
    for binding in volumes.static_bindings:
        cluster.apply(binding.pv)  # the PV pre-bound to the claim
        pvc = cluster.get("PersistentVolumeClaim", f"{binding.pvc.namespace}/{binding.pvc.name}")
        pv = cluster.get("PersistentVolume", binding.pv.name)
        if pvc is None or pv is None:
            raise BinderError(f'failed to check binding: PVC "{binding.pvc.key}" not found')
        _bind_claim(cluster, pvc, pv)
    for claim in volumes.dynamic_provisions:
        cluster.apply(claim)  # the claim with the selected node: the provisioner's cue
        _provision(cluster, claim, node_name)


def check_bindings(cluster: InMemoryCluster, pod: Pod, node_name: str, volumes: PodVolumes) -> bool:
    """checkBindings: True when every claim is fully bound; BinderError when it never will be."""
    if cluster.get_pod(pod.key) is None:
        raise BinderError(f'pod does not exist any more: pod "{pod.name}" not found')
    node = cluster.get("Node", node_name)
    if node is None:
        raise BinderError(f'failed to get node "{node_name}": node "{node_name}" not found')
    for binding in volumes.static_bindings:
        pv = cluster.get("PersistentVolume", binding.pv.name)
        pvc = cluster.get("PersistentVolumeClaim", f"{binding.pvc.namespace}/{binding.pvc.name}")
        if pv is None or pvc is None:
            raise BinderError("failed to check binding: not found")
        if not check_node_affinity(pv, node):
            raise BinderError(
                f'pv "{pv.name}" node affinity doesn\'t match node "{node_name}": '
                "no matching NodeSelectorTerms"
            )
        if pv.claim_ref is None or (pvc.metadata.uid and not pv.claim_ref.uid):
            raise BinderError(f'ClaimRef got reset for pv "{pv.name}"')
        if not (pvc.volume_name and ANN_BIND_COMPLETED in pvc.metadata.annotations):
            return False
    for claim in volumes.dynamic_provisions:
        pvc = cluster.get("PersistentVolumeClaim", f"{claim.namespace}/{claim.name}")
        if pvc is None:
            raise BinderError("failed to check provisioning pvc: not found")
        if not pvc.metadata.annotations:
            raise BinderError(f'selectedNode annotation reset for PVC "{pvc.name}"')
        if pvc.metadata.annotations.get(ANN_SELECTED_NODE) != node_name:
            raise BinderError(f'provisioning failed for PVC "{pvc.name}"')
        if pvc.volume_name:
            pv = cluster.get("PersistentVolume", pvc.volume_name)
            if pv is None:
                return False
            if not check_node_affinity(pv, node):
                raise BinderError(
                    f'pv "{pv.name}" node affinity doesn\'t match node "{node_name}": '
                    "no matching NodeSelectorTerms"
                )
        if not (pvc.volume_name and ANN_BIND_COMPLETED in pvc.metadata.annotations):
            return False
    return True
