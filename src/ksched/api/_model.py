"""The Kubernetes objects the scheduler reads, as frozen attrs classes.

Field names follow the Kubernetes API in snake_case. Quantities are already parsed:
``cpu`` in millicores, every other resource in whole units (bytes for memory).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from ._selectors import LabelSelector, NodeSelector, NodeSelectorTerm
from ._volume import Volume

__all__ = [
    "Affinity",
    "Container",
    "ContainerImage",
    "ContainerPort",
    "Namespace",
    "Node",
    "NodeAffinity",
    "NodeSpec",
    "NodeStatus",
    "ObjectMeta",
    "OwnerReference",
    "Pod",
    "PodAffinity",
    "PodAffinityTerm",
    "PodAntiAffinity",
    "PodDisruptionBudget",
    "PodGroup",
    "PodResourceClaim",
    "PodResourceClaimStatus",
    "PodSpec",
    "PodStatus",
    "PodTemplate",
    "PreferredSchedulingTerm",
    "PriorityClass",
    "ReplicaSet",
    "ReplicationController",
    "ResourceList",
    "Service",
    "StatefulSet",
    "Taint",
    "Toleration",
    "TopologySpreadConstraint",
    "WeightedPodAffinityTerm",
]

ResourceList = Mapping[str, int]
"""Resource name -> amount (cpu in millicores, others in units)."""

DEFAULT_NAMESPACE = "default"
DEFAULT_SCHEDULER_NAME = "default-scheduler"


def _empty_map() -> dict[str, str]:
    return {}


def _empty_resources() -> dict[str, int]:
    return {}


@attrs.frozen(kw_only=True)
class OwnerReference:
    kind: str
    name: str
    uid: str = ""
    controller: bool = False


@attrs.frozen(kw_only=True)
class ObjectMeta:
    """Name, namespace, labels and the timestamps the scheduler reads.

    Timestamps are simulated-clock seconds (``None``: not set).
    """

    name: str
    namespace: str = DEFAULT_NAMESPACE
    uid: str = ""
    labels: Mapping[str, str] = attrs.field(factory=_empty_map, hash=False)
    annotations: Mapping[str, str] = attrs.field(factory=_empty_map, hash=False)
    creation_timestamp: float | None = None
    deletion_timestamp: float | None = None
    owner_references: tuple[OwnerReference, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


# ---- nodes -------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Taint:
    key: str
    value: str = ""
    effect: str = "NoSchedule"

    def __str__(self) -> str:
        return f"{{{self.key}: {self.value}}}"


@attrs.frozen(kw_only=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    def tolerates(self, taint: Taint) -> bool:
        """upstream v1 helper ToleratesTaint."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("Equal", ""):
            return self.value == taint.value
        return False


@attrs.frozen(kw_only=True)
class ContainerImage:
    names: tuple[str, ...]
    size_bytes: int = 0


@attrs.frozen(kw_only=True)
class NodeSpec:
    unschedulable: bool = False
    taints: tuple[Taint, ...] = ()


@attrs.frozen(kw_only=True)
class NodeStatus:
    allocatable: ResourceList = attrs.field(factory=_empty_resources, hash=False)
    capacity: ResourceList = attrs.field(factory=_empty_resources, hash=False)
    images: tuple[ContainerImage, ...] = ()


@attrs.frozen(kw_only=True)
class Node:
    metadata: ObjectMeta
    spec: NodeSpec = NodeSpec()
    status: NodeStatus = NodeStatus()

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def labels(self) -> Mapping[str, str]:
        return self.metadata.labels


# ---- pods --------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class ContainerPort:
    container_port: int
    host_port: int = 0
    host_ip: str = ""
    protocol: str = "TCP"


@attrs.frozen(kw_only=True)
class Container:
    name: str
    image: str = ""
    requests: ResourceList = attrs.field(factory=_empty_resources, hash=False)
    limits: ResourceList = attrs.field(factory=_empty_resources, hash=False)
    ports: tuple[ContainerPort, ...] = ()
    restart_policy: str | None = None
    """``"Always"`` on an init container makes it a restartable sidecar."""
    claims: tuple[str, ...] = ()
    """``resources.claims``: names of the pod's ``resourceClaims`` this container uses."""


@attrs.frozen(kw_only=True)
class PreferredSchedulingTerm:
    weight: int
    preference: NodeSelectorTerm


@attrs.frozen(kw_only=True)
class NodeAffinity:
    required: NodeSelector | None = None
    preferred: tuple[PreferredSchedulingTerm, ...] = ()


@attrs.frozen(kw_only=True)
class PodAffinityTerm:
    topology_key: str
    label_selector: LabelSelector | None = None
    namespaces: tuple[str, ...] = ()
    namespace_selector: LabelSelector | None = None
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class WeightedPodAffinityTerm:
    weight: int
    term: PodAffinityTerm


@attrs.frozen(kw_only=True)
class PodAffinity:
    required: tuple[PodAffinityTerm, ...] = ()
    preferred: tuple[WeightedPodAffinityTerm, ...] = ()


@attrs.frozen(kw_only=True)
class PodAntiAffinity:
    required: tuple[PodAffinityTerm, ...] = ()
    preferred: tuple[WeightedPodAffinityTerm, ...] = ()


@attrs.frozen(kw_only=True)
class Affinity:
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAntiAffinity | None = None


@attrs.frozen(kw_only=True)
class TopologySpreadConstraint:
    max_skew: int
    topology_key: str
    when_unsatisfiable: str = "DoNotSchedule"
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class PodResourceClaim:
    """``spec.resourceClaims[]``: a ResourceClaim by name, or one made from a template."""

    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


@attrs.frozen(kw_only=True)
class PodResourceClaimStatus:
    """``status.resourceClaimStatuses[]``: the claim generated for a template entry."""

    name: str
    resource_claim_name: str | None = None


@attrs.frozen(kw_only=True)
class SchedulingGroupRef:
    """A pod's reference to its pod group, in either upstream shape.

    Newest: ``spec.schedulingGroup.podGroupName`` names a PodGroup object. First alpha:
    ``spec.workloadRef`` names a Workload, one of its ``podGroups`` and an optional
    replica key (each replica key is a separate group of the same policy).
    """

    pod_group_name: str = ""
    workload: str = ""
    pod_group: str = ""
    replica_key: str = ""

    def group_key(self, namespace: str) -> str:
        """The group's identity: ``ns/podGroupName``, or ``ns/workload/podGroup[/replica]``."""
        if self.pod_group_name:
            return f"{namespace}/{self.pod_group_name}"
        key = f"{namespace}/{self.workload}/{self.pod_group}"
        return f"{key}/{self.replica_key}" if self.replica_key else key


@attrs.frozen(kw_only=True)
class PodSpec:
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    node_name: str | None = None
    node_selector: Mapping[str, str] = attrs.field(factory=_empty_map, hash=False)
    affinity: Affinity | None = None
    tolerations: tuple[Toleration, ...] = ()
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    priority: int | None = None
    priority_class_name: str = ""
    preemption_policy: str | None = None
    scheduling_gates: tuple[str, ...] = ()
    overhead: ResourceList = attrs.field(factory=_empty_resources, hash=False)
    scheduling_group: SchedulingGroupRef | None = None
    """The pod's scheduling.k8s.io pod group (``spec.schedulingGroup`` or, in the first
    alpha, ``spec.workloadRef``)."""
    volumes: tuple[Volume, ...] = ()
    resource_claims: tuple[PodResourceClaim, ...] = ()


@attrs.frozen(kw_only=True)
class PodStatus:
    nominated_node_name: str | None = None
    start_time: float | None = None
    resource_claim_statuses: tuple[PodResourceClaimStatus, ...] = ()


@attrs.frozen(kw_only=True)
class Pod:
    """A pod as the scheduler sees it.

    ``spec.priority`` is the resolved priority (see ``PriorityClass``); ``None`` reads as 0.
    """

    metadata: ObjectMeta
    spec: PodSpec = PodSpec()
    status: PodStatus = PodStatus()

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        return self.metadata.namespace

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.metadata.namespace}/{self.metadata.name}"

    @property
    def uid(self) -> str:
        return self.metadata.uid or self.key

    @property
    def labels(self) -> Mapping[str, str]:
        return self.metadata.labels

    @property
    def priority(self) -> int:
        return self.spec.priority or 0

    @property
    def is_terminating(self) -> bool:
        return self.metadata.deletion_timestamp is not None


# ---- cluster-level objects ---------------------------------------------------------


@attrs.frozen(kw_only=True)
class PriorityClass:
    name: str
    value: int
    global_default: bool = False
    preemption_policy: str | None = None


@attrs.frozen(kw_only=True)
class Namespace:
    name: str
    labels: Mapping[str, str] = attrs.field(factory=_empty_map, hash=False)


@attrs.frozen(kw_only=True)
class PodDisruptionBudget:
    """policy/v1 PodDisruptionBudget. ``disruptions_allowed`` None: computed from pods."""

    metadata: ObjectMeta
    selector: LabelSelector | None = None
    min_available: int | str | None = None
    max_unavailable: int | str | None = None
    disruptions_allowed: int | None = None


@attrs.frozen(kw_only=True)
class PodGroup:
    """scheduling.x-k8s.io/v1alpha1 PodGroup: the unit of gang scheduling."""

    metadata: ObjectMeta
    min_member: int = 1
    min_resources: ResourceList = attrs.field(factory=_empty_resources, hash=False)
    schedule_timeout_seconds: int | None = None


@attrs.frozen(kw_only=True)
class Service:
    metadata: ObjectMeta
    selector: Mapping[str, str] = attrs.field(factory=_empty_map, hash=False)


@attrs.frozen(kw_only=True)
class ReplicationController:
    """v1 ReplicationController. Without ``template`` it only lends its selector to spreading."""

    metadata: ObjectMeta
    selector: Mapping[str, str] = attrs.field(factory=_empty_map, hash=False)
    replicas: int = 1
    template: PodTemplate | None = None


@attrs.frozen(kw_only=True)
class PodTemplate:
    """A workload's ``spec.template``: the labels, annotations and spec of its pods."""

    metadata: ObjectMeta
    spec: PodSpec = PodSpec()
    hash: str = ""
    """The ``pod-template-hash`` of the template (see ``compute_hash``)."""


@attrs.frozen(kw_only=True)
class ReplicaSet:
    """apps/v1 ReplicaSet. Without ``template`` it only lends its selector to spreading."""

    metadata: ObjectMeta
    selector: LabelSelector | None = None
    replicas: int = 1
    template: PodTemplate | None = None


@attrs.frozen(kw_only=True)
class StatefulSet:
    """apps/v1 StatefulSet. Without ``template`` it only lends its selector to spreading.

    ``volume_claim_templates`` are kept as written (dicts) for the storage model.
    """

    metadata: ObjectMeta
    selector: LabelSelector | None = None
    replicas: int = 1
    template: PodTemplate | None = None
    pod_management_policy: str = "OrderedReady"
    service_name: str = ""
    volume_claim_templates: tuple[Mapping[str, object], ...] = attrs.field(default=(), hash=False)
