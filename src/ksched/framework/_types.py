"""NodeInfo, PodInfo and the resource arithmetic the cache and plugins share.

# staging/src/k8s.io/kube-scheduler/framework + pkg/scheduler/framework/types.go:
# NodeInfo, PodInfo, AffinityTerm, Resource, HostPortInfo, ImageStateSummary
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs

from ..api import LabelSelector, Node, Pod, PodAffinityTerm, pod_requests
from ._spec_memo import SpecMemo

__all__ = [
    "AffinityTerm",
    "HostPortInfo",
    "ImageStateSummary",
    "NodeInfo",
    "PodInfo",
    "Resource",
    "WeightedAffinityTerm",
]

CPU, MEMORY, EPHEMERAL_STORAGE, PODS = "cpu", "memory", "ephemeral-storage", "pods"


@attrs.define(eq=False, slots=True)
class Resource:
    """Amounts of the resources the scheduler tracks (cpu in millicores)."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pod_number: int = 0
    scalar: dict[str, int] = attrs.field(factory=dict)

    @classmethod
    def from_list(cls, resources: Mapping[str, int]) -> Resource:
        r = cls()
        r.add(resources)
        return r

    def add(self, resources: Mapping[str, int], sign: int = 1) -> None:
        for name, amount in resources.items():
            if name == CPU:
                self.milli_cpu += sign * amount
            elif name == MEMORY:
                self.memory += sign * amount
            elif name == EPHEMERAL_STORAGE:
                self.ephemeral_storage += sign * amount
            elif name == PODS:
                self.allowed_pod_number += sign * amount
            else:
                self.scalar[name] = self.scalar.get(name, 0) + sign * amount

    def get(self, name: str) -> int:
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        if name == PODS:
            return self.allowed_pod_number
        return self.scalar.get(name, 0)

    def clone(self) -> Resource:
        return Resource(
            self.milli_cpu,
            self.memory,
            self.ephemeral_storage,
            self.allowed_pod_number,
            dict(self.scalar),
        )


@attrs.define(eq=False, slots=True)
class AffinityTerm:
    """A pod (anti-)affinity term with its namespaces resolved against its owner."""

    namespaces: frozenset[str]
    selector: LabelSelector | None
    topology_key: str
    namespace_selector: LabelSelector | None

    @classmethod
    def of(cls, owner: Pod, term: PodAffinityTerm) -> AffinityTerm:
        if not term.namespaces and term.namespace_selector is None:
            namespaces = frozenset((owner.namespace,))
        else:
            namespaces = frozenset(term.namespaces)
        return cls(namespaces, term.label_selector, term.topology_key, term.namespace_selector)

    def matches(self, pod: Pod, namespace_labels: Mapping[str, str] | None) -> bool:
        """Whether ``pod`` is selected (namespace by list or selector, then labels)."""
        if pod.namespace in self.namespaces or (
            self.namespace_selector is not None
            and self.namespace_selector.matches(namespace_labels or {})
        ):
            return self.selector is not None and self.selector.matches(pod.labels)
        return False


@attrs.define(eq=False, slots=True)
class WeightedAffinityTerm:
    term: AffinityTerm
    weight: int


@attrs.define(eq=False, slots=True)
class PodInfo:
    """A pod with what the scheduler derives from it once: requests and affinity terms."""

    pod: Pod
    requests: Mapping[str, int]
    non_zero_cpu: int
    non_zero_memory: int
    required_affinity_terms: list[AffinityTerm]
    required_anti_affinity_terms: list[AffinityTerm]
    preferred_affinity_terms: list[WeightedAffinityTerm]
    preferred_anti_affinity_terms: list[WeightedAffinityTerm]
    host_ports: list[tuple[str, str, int]]

    @classmethod
    def of(cls, pod: Pod) -> PodInfo:
        # Requests and host ports read the spec alone: kept for the pods sharing it. The
        # (anti-)affinity terms also read the pod's namespace, so they are made per pod.
        requests, non_zero_cpu, non_zero_memory, ports = _spec_values(pod)
        affinity = pod.spec.affinity
        if affinity is None or (
            affinity.pod_affinity is None and affinity.pod_anti_affinity is None
        ):
            return cls(pod, requests, non_zero_cpu, non_zero_memory, [], [], [], [], ports)
        req_aff: list[AffinityTerm] = []
        req_anti: list[AffinityTerm] = []
        pref_aff: list[WeightedAffinityTerm] = []
        pref_anti: list[WeightedAffinityTerm] = []
        if affinity.pod_affinity is not None:
            req_aff = [AffinityTerm.of(pod, t) for t in affinity.pod_affinity.required]
            pref_aff = [
                WeightedAffinityTerm(AffinityTerm.of(pod, w.term), w.weight)
                for w in affinity.pod_affinity.preferred
            ]
        if affinity.pod_anti_affinity is not None:
            req_anti = [AffinityTerm.of(pod, t) for t in affinity.pod_anti_affinity.required]
            pref_anti = [
                WeightedAffinityTerm(AffinityTerm.of(pod, w.term), w.weight)
                for w in affinity.pod_anti_affinity.preferred
            ]
        return cls(
            pod=pod,
            requests=requests,
            non_zero_cpu=non_zero_cpu,
            non_zero_memory=non_zero_memory,
            required_affinity_terms=req_aff,
            required_anti_affinity_terms=req_anti,
            preferred_affinity_terms=pref_aff,
            preferred_anti_affinity_terms=pref_anti,
            host_ports=ports,
        )

    def for_copy(self, pod: Pod) -> PodInfo:
        """This PodInfo for ``pod``, a copy of its pod that differs only in
        ``spec.nodeName`` (the assumed pod): nothing derived here reads the node name,
        so the values are shared rather than worked out again."""
        return PodInfo(
            pod,
            self.requests,
            self.non_zero_cpu,
            self.non_zero_memory,
            self.required_affinity_terms,
            self.required_anti_affinity_terms,
            self.preferred_affinity_terms,
            self.preferred_anti_affinity_terms,
            self.host_ports,
        )

    @property
    def has_affinity(self) -> bool:
        """Has any (anti-)affinity term: goes in ``NodeInfo.pods_with_affinity``."""
        return bool(
            self.required_affinity_terms
            or self.required_anti_affinity_terms
            or self.preferred_affinity_terms
            or self.preferred_anti_affinity_terms
        )


def _derive_from_spec(pod: Pod) -> tuple[Mapping[str, int], int, int, list[tuple[str, str, int]]]:
    """(requests, non-zero cpu, non-zero memory, host ports): what ``PodInfo.of`` reads
    of the spec alone (shared, never changed, by the PodInfos of pods with this spec)."""
    non_zero = pod_requests(pod, non_zero=True)
    sidecars = [c for c in pod.spec.init_containers if c.restart_policy == "Always"]
    ports = [
        (p.host_ip, p.protocol, p.host_port)
        for c in (*sidecars, *pod.spec.containers)
        for p in c.ports
        if p.host_port > 0
    ]
    return pod_requests(pod), non_zero.get(CPU, 0), non_zero.get(MEMORY, 0), ports


_spec_values = SpecMemo(_derive_from_spec)

_ALL_IPS = "0.0.0.0"


def _sanitize(ip: str, protocol: str) -> tuple[str, str]:
    return ip or _ALL_IPS, protocol or "TCP"


class HostPortInfo:
    """Host ports in use on a node: ip -> {(protocol, port)} (upstream HostPortInfo)."""

    __slots__ = ("_by_ip",)

    def __init__(self) -> None:
        self._by_ip: dict[str, set[tuple[str, int]]] = {}

    def add(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        ip, protocol = _sanitize(ip, protocol)
        self._by_ip.setdefault(ip, set()).add((protocol, port))

    def remove(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        ip, protocol = _sanitize(ip, protocol)
        pairs = self._by_ip.get(ip)
        if pairs is not None:
            pairs.discard((protocol, port))
            if not pairs:
                del self._by_ip[ip]

    def pairs(self) -> frozenset[tuple[str, int]]:
        """The (protocol, port) pairs in use, on any ip."""
        return frozenset(pair for pairs in self._by_ip.values() for pair in pairs)

    def conflicts(self, ip: str, protocol: str, port: int) -> bool:
        """0.0.0.0 conflicts with the pair on any ip; another ip with itself and 0.0.0.0."""
        if port <= 0:
            return False
        ip, protocol = _sanitize(ip, protocol)
        pair = (protocol, port)
        if ip == _ALL_IPS:
            return any(pair in pairs for pairs in self._by_ip.values())
        return any(pair in self._by_ip.get(key, ()) for key in (_ALL_IPS, ip))

    def __len__(self) -> int:
        return sum(len(p) for p in self._by_ip.values())

    def __bool__(self) -> bool:
        # An ip's set is dropped when its last pair goes, so any entry means a port in use.
        return bool(self._by_ip)

    def clone(self) -> HostPortInfo:
        copy = HostPortInfo()
        copy._by_ip = {ip: set(pairs) for ip, pairs in self._by_ip.items()}
        return copy


@attrs.frozen(slots=True)
class ImageStateSummary:
    """An image name's state across the cluster: one summary, shared by every node that
    lists the name.

    ``size`` is the size reported by the first node that listed the name, even where
    another node reports a different size; it stays while any node still lists the name.
    """

    size: int
    num_nodes: int
    """How many nodes list the name."""


@attrs.define(eq=False, slots=True)
class NodeInfo:
    """A node and what runs (or is assumed to run) on it, aggregated for the plugins.

    Mutated only by the cache (and by preemption dry runs on their own clones).
    """

    node: Node
    name: str = ""
    pods: list[PodInfo] = attrs.field(factory=list)
    pods_with_affinity: list[PodInfo] = attrs.field(factory=list)
    pods_with_required_anti_affinity: list[PodInfo] = attrs.field(factory=list)
    used_ports: HostPortInfo = attrs.field(factory=HostPortInfo)
    requested: Resource = attrs.field(factory=Resource)
    non_zero_requested: Resource = attrs.field(factory=Resource)
    allocatable: Resource = attrs.field(factory=Resource)
    image_states: dict[str, ImageStateSummary] = attrs.field(factory=dict)
    generation: int = 0

    @classmethod
    def of(cls, node: Node, pods: Iterable[Pod | PodInfo] = ()) -> NodeInfo:
        info = cls(node=node)
        info.set_node(node)
        for pod in pods:
            info.add_pod(pod if isinstance(pod, PodInfo) else PodInfo.of(pod))
        return info

    def set_node(self, node: Node) -> None:
        self.node = node
        self.name = node.metadata.name
        self.allocatable = Resource.from_list(node.status.allocatable)

    def add_pod(self, pod_info: PodInfo) -> None:
        self.pods.append(pod_info)
        if pod_info.has_affinity:
            self.pods_with_affinity.append(pod_info)
        if pod_info.required_anti_affinity_terms:
            self.pods_with_required_anti_affinity.append(pod_info)
        self._account(pod_info, 1)

    def remove_pod(self, pod: Pod) -> bool:
        """Remove the pod with ``pod``'s uid. Returns whether it was there."""
        uid = pod.uid
        for i, info in enumerate(self.pods):
            if info.pod.uid == uid:
                del self.pods[i]
                self.pods_with_affinity = [p for p in self.pods_with_affinity if p.pod.uid != uid]
                self.pods_with_required_anti_affinity = [
                    p for p in self.pods_with_required_anti_affinity if p.pod.uid != uid
                ]
                self._account(info, -1)
                return True
        return False

    def _account(self, info: PodInfo, sign: int) -> None:
        self.requested.add(info.requests, sign)
        self.non_zero_requested.milli_cpu += sign * info.non_zero_cpu
        self.non_zero_requested.memory += sign * info.non_zero_memory
        for ip, protocol, port in info.host_ports:
            if sign > 0:
                self.used_ports.add(ip, protocol, port)
            else:
                self.used_ports.remove(ip, protocol, port)
        self.generation += 1

    def clone(self) -> NodeInfo:
        """A copy whose pod lists and amounts change apart from this one's. ``allocatable``
        is shared: it is only ever replaced (``set_node``), never changed in place."""
        return NodeInfo(
            node=self.node,
            name=self.name,
            pods=list(self.pods),
            pods_with_affinity=list(self.pods_with_affinity),
            pods_with_required_anti_affinity=list(self.pods_with_required_anti_affinity),
            used_ports=self.used_ports.clone(),
            requested=self.requested.clone(),
            non_zero_requested=self.non_zero_requested.clone(),
            allocatable=self.allocatable,
            image_states=self.image_states,
            generation=self.generation,
        )
