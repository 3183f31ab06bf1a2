"""Workload controllers in simulated time: Deployments, ReplicaSets, StatefulSets, Jobs
and DaemonSets turned into pods as their controllers would.

# pkg/controller/deployment (a ReplicaSet NAME-HASH per template, pod-template-hash),
# pkg/controller/replicaset (pods NAME-xxxxx, unscheduled pods deleted first),
# pkg/controller/statefulset (ordinal names, OrderedReady / Parallel),
# pkg/controller/job (parallelism, completions), pkg/controller/daemon and
# daemon/util/daemonset_util.go (AddOrUpdateDaemonPodTolerations,
# ReplaceDaemonSetPodNodeNameNodeAffinity; NodeShouldRunDaemonPod's predicates).

A simulator has no kubelet: a pod "runs" once it is bound, and "Running and Ready" (what
an OrderedReady StatefulSet waits for) means bound. Pods never finish, so a Job keeps
``min(parallelism, completions)`` pods forever. Controllers react to cluster changes in
their own task, so their pods appear in simulated time, after the change that asked.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import anyio
import attrs

from ..api import (
    POD_TEMPLATE_HASH_LABEL,
    Affinity,
    DaemonSet,
    Deployment,
    Job,
    LabelSelector,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    OwnerReference,
    Pod,
    PodTemplate,
    ReplicaSet,
    ReplicationController,
    StatefulSet,
    Toleration,
)
from ..cluster import InMemoryCluster, object_key
from ._claims import with_claim_volumes
from ._scenario import ScenarioError

__all__ = ["DAEMON_POD_TOLERATIONS", "Controllers", "owner_of"]

DAEMON_POD_TOLERATIONS: tuple[Toleration, ...] = (
    Toleration(key="node.kubernetes.io/not-ready", operator="Exists", effect="NoExecute"),
    Toleration(key="node.kubernetes.io/unreachable", operator="Exists", effect="NoExecute"),
    Toleration(key="node.kubernetes.io/disk-pressure", operator="Exists", effect="NoSchedule"),
    Toleration(key="node.kubernetes.io/memory-pressure", operator="Exists", effect="NoSchedule"),
    Toleration(key="node.kubernetes.io/pid-pressure", operator="Exists", effect="NoSchedule"),
    Toleration(key="node.kubernetes.io/unschedulable", operator="Exists", effect="NoSchedule"),
)
"""What the DaemonSet controller adds to every daemon pod (network-unavailable too
with hostNetwork, which ksched does not model)."""

_OWNER_KINDS = (
    "Deployment",
    "ReplicaSet",
    "ReplicationController",
    "StatefulSet",
    "Job",
    "DaemonSet",
)
_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"
VolumeClaims = Callable[[StatefulSet, int], Sequence[Any]]


def owner_of(obj: Any) -> tuple[str, str] | None:
    """``(kind, namespace/name)`` of the object's controller (ownerReferences)."""
    meta = getattr(obj, "metadata", None)
    if meta is None:
        return None
    for ref in meta.owner_references:
        if ref.controller:
            return ref.kind, f"{meta.namespace}/{ref.name}"
    return None


def _uid(kind: str, meta: ObjectMeta) -> str:
    """The object's uid, or a stable one made from its kind and key (as a uid reads)."""
    return meta.uid or str(uuid.uuid5(uuid.NAMESPACE_URL, f"ksched:{kind}/{meta.key}"))


def _owner_ref(kind: str, meta: ObjectMeta) -> OwnerReference:
    return OwnerReference(kind=kind, name=meta.name, uid=_uid(kind, meta), controller=True)


def _tolerated(node: Node, tolerations: Iterable[Toleration]) -> bool:
    tolerations = tuple(tolerations)
    return all(
        any(t.tolerates(taint) for t in tolerations)
        for taint in node.spec.taints
        if taint.effect in ("NoSchedule", "NoExecute")
    )


def _daemon_target(pod: Pod) -> str | None:
    """GetTargetNodeName: nodeName, else the node the matchFields term names."""
    if pod.spec.node_name:
        return pod.spec.node_name
    node_affinity = pod.spec.affinity.node_affinity if pod.spec.affinity else None
    required = node_affinity.required if node_affinity else None
    for term in required.terms if required else ():
        for req in term.match_fields:
            if req.key == "metadata.name" and req.operator == "In" and len(req.values) == 1:
                return req.values[0]
    return None


@attrs.define(eq=False)
class Controllers:
    """The controllers of one simulated cluster.

    ``create_pods`` and ``delete_pod`` are the runner's, so controller pods are stamped,
    reported and deleted like any other. ``volume_claims`` makes a StatefulSet's
    ``volumeClaimTemplates`` claims: called with the set and an ordinal, it returns the
    claims to create before that pod, whose volumes then point at them.
    """

    cluster: InMemoryCluster
    create_pods: Callable[[Sequence[Pod]], None]
    delete_pod: Callable[[str], None]
    volume_claims: VolumeClaims | None = None
    _dirty: dict[tuple[str, str], None] = attrs.field(factory=dict)
    _owned: dict[tuple[str, str], dict[str, None]] = attrs.field(factory=dict)
    _wake: anyio.Event = attrs.field(factory=anyio.Event)

    # ---- events ---------------------------------------------------------------------

    def on_change(self, kind: str, old: Any, new: Any) -> None:
        """A ClusterListener: note what needs a reconcile (done later, in ``serve``)."""
        if kind == "Pod":
            pod = new if new is not None else old
            if pod.metadata.owner_references:  # most pods of a large run have no owner
                self._on_pod(pod, old, new)
        elif kind in _OWNER_KINDS:
            self._mark(kind, object_key(new if new is not None else old))
        elif kind == "Node":
            for ds in self.cluster.objects("DaemonSet"):
                self._mark("DaemonSet", object_key(ds))

    def _on_pod(self, pod: Pod, old: Pod | None, new: Pod | None) -> None:
        owner = owner_of(pod)
        if owner is None or owner[0] not in _OWNER_KINDS:
            return
        pods = self._owned.setdefault(owner, {})
        if new is None:
            pods.pop(pod.key, None)
            self._mark(*owner)  # replace a deleted or evicted pod
        else:
            pods[pod.key] = None
            if (
                owner[0] == "StatefulSet"
                and new.spec.node_name
                and not (old is not None and old.spec.node_name)
            ):
                self._mark(*owner)  # OrderedReady: the next ordinal may start

    def _mark(self, kind: str, key: str) -> None:
        self._dirty[(kind, key)] = None
        self._wake.set()

    async def serve(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        """Reconcile what changed, whenever something did; runs until cancelled."""
        task_status.started()
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            self.reconcile_pending()

    def reconcile_pending(self) -> None:
        """Reconcile every owner marked since the last call (and what that marks)."""
        while self._dirty:
            kind, key = next(iter(self._dirty))
            del self._dirty[(kind, key)]
            obj = self.cluster.get(kind, key)
            if obj is None:
                self._cascade(kind, key)
            elif isinstance(obj, Deployment):
                self._deployment(obj)
            elif isinstance(obj, ReplicaSet | ReplicationController) and obj.template is not None:
                self._replicas(obj, obj.template, obj.replicas, kind)
            elif isinstance(obj, Job):
                active = obj.parallelism
                if obj.completions is not None:
                    active = min(active, obj.completions)
                self._replicas(obj, obj.template, active, "Job")
            elif isinstance(obj, StatefulSet) and obj.template is not None:
                self._stateful_set(obj, obj.template)
            elif isinstance(obj, DaemonSet):
                self._daemon_set(obj)

    # ---- steps ----------------------------------------------------------------------

    def scale(self, kind: str, key: str, replicas: int) -> None:
        """A ``scale`` step: set the replica count (a Job's parallelism)."""
        obj = self.cluster.get(kind, key)
        if obj is None:
            raise ScenarioError(f"scale: {kind} {key} does not exist")
        if isinstance(obj, Job):
            self.cluster.apply(attrs.evolve(obj, parallelism=replicas))
        else:
            self.cluster.apply(attrs.evolve(obj, replicas=replicas))

    def report(self) -> dict[str, Any]:
        """``workloads`` of the report: each owner's desired, existing and bound pods."""
        out: dict[str, Any] = {}
        for kind in _OWNER_KINDS:
            for obj in self.cluster.objects(kind):
                if getattr(obj, "template", None) is None:
                    continue
                key = object_key(obj)
                owners = [(kind, key)]
                if kind == "Deployment":  # its pods are its ReplicaSets' pods
                    owners = [
                        ("ReplicaSet", object_key(rs))
                        for rs in self.cluster.objects("ReplicaSet")
                        if owner_of(rs) == (kind, key)
                    ]
                pods = [self.cluster.get_pod(k) for o in owners for k in self._owned.get(o, {})]
                entry: dict[str, Any] = {
                    "pods": len(pods),
                    "bound": sum(1 for p in pods if p is not None and p.spec.node_name),
                }
                if isinstance(obj, Job):
                    entry["parallelism"] = obj.parallelism
                elif not isinstance(obj, DaemonSet):
                    entry["replicas"] = obj.replicas
                owner = owner_of(obj)
                if owner is not None:
                    entry["owner"] = f"{owner[0]} {owner[1]}"
                out[f"{kind} {key}"] = entry
        return dict(sorted(out.items()))

    # ---- controllers ----------------------------------------------------------------

    def _cascade(self, kind: str, key: str) -> None:
        """The owner is gone: its pods (and a Deployment's ReplicaSets) go too."""
        for pod_key in list(self._owned.pop((kind, key), {})):
            if self.cluster.get_pod(pod_key) is not None:
                self.delete_pod(pod_key)
        if kind == "Deployment":
            for rs in self.cluster.objects("ReplicaSet"):
                if owner_of(rs) == (kind, key):
                    self.cluster.remove("ReplicaSet", object_key(rs))

    def _deployment(self, deployment: Deployment) -> None:
        template = deployment.template
        labels = {**template.metadata.labels, POD_TEMPLATE_HASH_LABEL: template.hash}
        meta = deployment.metadata
        name = f"{meta.name}-{template.hash}"
        key = f"{meta.namespace}/{name}"
        # A changed template replaces the pods at once (as strategy Recreate would).
        for rs in self.cluster.objects("ReplicaSet"):
            mine = owner_of(rs) == ("Deployment", meta.key)
            if mine and object_key(rs) != key and rs.replicas:
                self.cluster.apply(attrs.evolve(rs, replicas=0))
        current: ReplicaSet | None = self.cluster.get("ReplicaSet", key)
        if current is not None:
            if current.replicas != deployment.replicas:
                self.cluster.apply(attrs.evolve(current, replicas=deployment.replicas))
            return
        selector = deployment.selector or LabelSelector(match_labels=template.metadata.labels)
        self.cluster.apply(
            ReplicaSet(
                metadata=ObjectMeta(
                    name=name,
                    namespace=meta.namespace,
                    labels=labels,
                    owner_references=(_owner_ref("Deployment", meta),),
                ),
                selector=LabelSelector(  # CloneSelectorAndAddLabel
                    match_labels={**selector.match_labels, POD_TEMPLATE_HASH_LABEL: template.hash},
                    match_expressions=selector.match_expressions,
                ),
                replicas=deployment.replicas,
                template=attrs.evolve(
                    template, metadata=attrs.evolve(template.metadata, labels=labels)
                ),
            )
        )

    def _pods_of(self, kind: str, key: str) -> list[Pod]:
        pods = (self.cluster.get_pod(k) for k in self._owned.get((kind, key), {}))
        return [p for p in pods if p is not None]

    def _new_pod(
        self,
        kind: str,
        owner: ObjectMeta,
        template: PodTemplate,
        name: str,
        labels: dict[str, str] | None = None,
    ) -> Pod:
        meta = ObjectMeta(
            name=name,
            namespace=owner.namespace,
            labels={**template.metadata.labels, **(labels or {})},
            annotations=template.metadata.annotations,
            owner_references=(_owner_ref(kind, owner),),
        )
        return Pod(metadata=meta, spec=template.spec)

    def _generated_names(self, owner: ObjectMeta, count: int) -> list[str]:
        """``NAME-xxxxx`` as generateName makes them; seeded by the owner, so runs repeat."""
        rng = random.Random(f"{owner.namespace}/{owner.name}/{len(self.cluster.pods())}")
        names: list[str] = []
        while len(names) < count:
            name = f"{owner.name}-" + "".join(rng.choice(_NAME_CHARS) for _ in range(5))
            if name not in names and self.cluster.get_pod(f"{owner.namespace}/{name}") is None:
                names.append(name)
        return names

    def _replicas(
        self,
        owner: ReplicaSet | ReplicationController | Job,
        template: PodTemplate,
        desired: int,
        kind: str,
    ) -> None:
        meta = owner.metadata
        pods = self._pods_of(kind, meta.key)
        if len(pods) < desired:
            extra: dict[str, str] = {}
            if kind == "Job":
                uid = _uid("Job", meta)
                extra = {
                    "batch.kubernetes.io/controller-uid": uid,
                    "batch.kubernetes.io/job-name": meta.name,
                    "controller-uid": uid,
                    "job-name": meta.name,
                }
            names = self._generated_names(meta, desired - len(pods))
            self.create_pods([self._new_pod(kind, meta, template, n, extra) for n in names])
        elif len(pods) > desired:
            # getPodsToDelete: unscheduled pods first, then the newest.
            order = {p.key: i for i, p in enumerate(pods)}
            pods.sort(key=lambda p: (bool(p.spec.node_name), -order[p.key]))
            for pod in pods[: len(pods) - desired]:
                self.delete_pod(pod.key)

    def _stateful_set(self, sts: StatefulSet, template: PodTemplate) -> None:
        meta = sts.metadata
        by_ordinal: dict[int, Pod] = {}
        for pod in self._pods_of("StatefulSet", meta.key):
            suffix = pod.name.rsplit("-", 1)[-1]
            if suffix.isdigit():
                by_ordinal[int(suffix)] = pod
        for ordinal in sorted(by_ordinal, reverse=True):
            if ordinal >= sts.replicas:  # scale down: highest ordinal first
                self.delete_pod(by_ordinal.pop(ordinal).key)
        ordered = sts.pod_management_policy == "OrderedReady"
        for ordinal in range(sts.replicas):
            if ordinal in by_ordinal:
                if ordered and not by_ordinal[ordinal].spec.node_name:
                    return  # wait until it runs (is bound) before the next one
                continue
            name = f"{meta.name}-{ordinal}"
            pod = self._new_pod("StatefulSet", meta, template, name, labels=None)
            if self.volume_claims is not None:
                for claim in self.volume_claims(sts, ordinal):
                    if self.cluster.get("PersistentVolumeClaim", claim.key) is None:
                        self.cluster.apply(claim)  # an existing claim is kept as it is
                pod = with_claim_volumes(pod, sts, ordinal)
            labels = {
                **pod.labels,
                "statefulset.kubernetes.io/pod-name": name,
                "apps.kubernetes.io/pod-index": str(ordinal),
            }
            pod = attrs.evolve(pod, metadata=attrs.evolve(pod.metadata, labels=labels))
            self.create_pods([pod])
            if ordered:
                return

    def _daemon_set(self, ds: DaemonSet) -> None:
        meta = ds.metadata
        template = ds.template
        tolerations = (*template.spec.tolerations, *DAEMON_POD_TOLERATIONS)
        required = (
            template.spec.affinity.node_affinity.required
            if template.spec.affinity and template.spec.affinity.node_affinity
            else None
        )
        on_node: dict[str, Pod] = {}
        for pod in self._pods_of("DaemonSet", meta.key):
            target = _daemon_target(pod)
            if target is not None:
                on_node[target] = pod
        wanted: list[Node] = []
        for node in self.cluster.nodes():
            eligible = (
                all(node.labels.get(k) == v for k, v in template.spec.node_selector.items())
                and (required is None or required.matches(node.name, node.labels))
                and _tolerated(node, tolerations)
            )
            if eligible and node.name not in on_node:
                wanted.append(node)
            elif not eligible and node.name in on_node:
                self.delete_pod(on_node.pop(node.name).key)
        names = {n.name for n in self.cluster.nodes()}
        for node_name, pod in on_node.items():
            if node_name not in names:
                self.delete_pod(pod.key)  # the node was deleted
        if not wanted:
            return
        pods = []
        for node, name in zip(wanted, self._generated_names(meta, len(wanted)), strict=True):
            pod = self._new_pod("DaemonSet", meta, template, name)
            spec = attrs.evolve(
                pod.spec,
                affinity=_pin_to_node(template.spec.affinity, node.name),
                tolerations=_merge_tolerations(template.spec.tolerations),
            )
            pods.append(attrs.evolve(pod, spec=spec))
        self.create_pods(pods)


def _pin_to_node(affinity: Affinity | None, node_name: str) -> Affinity:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: one required term, matchFields on the name."""
    term = NodeSelectorTerm(
        match_fields=(
            NodeSelectorRequirement(key="metadata.name", operator="In", values=(node_name,)),
        )
    )
    required = NodeSelector(terms=(term,))
    if affinity is None:
        return Affinity(node_affinity=NodeAffinity(required=required))
    node = affinity.node_affinity or NodeAffinity()
    return attrs.evolve(affinity, node_affinity=attrs.evolve(node, required=required))


def _merge_tolerations(own: Sequence[Toleration]) -> tuple[Toleration, ...]:
    """AddOrUpdateTolerationInPodSpec for each default: an equal one is not added twice."""
    out = list(own)
    for default in DAEMON_POD_TOLERATIONS:
        if not any(
            (t.key, t.operator, t.effect) == (default.key, default.operator, default.effect)
            for t in out
        ):
            out.append(default)
    return tuple(out)
