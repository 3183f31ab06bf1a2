"""What a plugin's tests need, without a scheduler (and for tests with one).

# pkg/scheduler/testing (st.MakePod, st.MakeNode) and pkg/scheduler/testing/framework
Builders shaped like upstream's ``st.MakePod()``::

    make_pod("p").req(cpu="500m").priority(10).obj()
    make_node("n1").capacity(cpu="4", memory="8Gi").label("zone", "a").obj()

:class:`FakeHandle` is the engine as a plugin sees it (``ksched.framework.Handle``), set
up from plain data; :class:`FakeSnapshot` the cycle's nodes. A fake plugin per extension
point (``FakeFilter``, ``FakeScore``, ``FakePermit``...) answers as told and records its
:class:`Call` s. This module imports neither pytest nor any other test runner.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from ._testing._handle import FakeHandle as FakeHandle
from ._testing._handle import FakeSnapshot as FakeSnapshot
from ._testing._plugins import ERR_REASON_FAKE as ERR_REASON_FAKE
from ._testing._plugins import Call as Call
from ._testing._plugins import FakeAsyncBind as FakeAsyncBind
from ._testing._plugins import FakeAsyncFilter as FakeAsyncFilter
from ._testing._plugins import FakeAsyncPermit as FakeAsyncPermit
from ._testing._plugins import FakeAsyncPreBind as FakeAsyncPreBind
from ._testing._plugins import FakeAsyncScore as FakeAsyncScore
from ._testing._plugins import FakeBind as FakeBind
from ._testing._plugins import FakeFilter as FakeFilter
from ._testing._plugins import FakePermit as FakePermit
from ._testing._plugins import FakePostBind as FakePostBind
from ._testing._plugins import FakePostFilter as FakePostFilter
from ._testing._plugins import FakePreBind as FakePreBind
from ._testing._plugins import FakePreEnqueue as FakePreEnqueue
from ._testing._plugins import FakePreFilter as FakePreFilter
from ._testing._plugins import FakePreScore as FakePreScore
from ._testing._plugins import FakeQueueSort as FakeQueueSort
from ._testing._plugins import FakeReserve as FakeReserve
from ._testing._plugins import FakeScore as FakeScore
from .api import (
    Affinity,
    Container,
    ContainerImage,
    ContainerPort,
    LabelSelector,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    NodeSpec,
    NodeStatus,
    ObjectMeta,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodAntiAffinity,
    PodSpec,
    PodStatus,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    Volume,
    quantity_value,
)
from .api import PersistentVolumeClaimVolumeSource as _ClaimSource

__all__ = [
    "ERR_REASON_FAKE",
    "Call",
    "FakeAsyncBind",
    "FakeAsyncFilter",
    "FakeAsyncPermit",
    "FakeAsyncPreBind",
    "FakeAsyncScore",
    "FakeBind",
    "FakeFilter",
    "FakeHandle",
    "FakePermit",
    "FakePostBind",
    "FakePostFilter",
    "FakePreBind",
    "FakePreEnqueue",
    "FakePreFilter",
    "FakePreScore",
    "FakeQueueSort",
    "FakeReserve",
    "FakeScore",
    "FakeSnapshot",
    "NodeBuilder",
    "PodBuilder",
    "make_node",
    "make_pod",
]


def _resources(values: Mapping[str, str | int]) -> dict[str, int]:
    return {name: quantity_value(name, str(v)) for name, v in values.items()}


class PodBuilder:
    """A mutable builder of a frozen Pod."""

    def __init__(self, name: str, namespace: str = "default") -> None:
        self._meta = ObjectMeta(name=name, namespace=namespace, uid=f"{namespace}/{name}")
        self._spec = PodSpec()
        self._status = PodStatus()

    def namespace(self, namespace: str) -> PodBuilder:
        self._meta = attrs.evolve(
            self._meta, namespace=namespace, uid=f"{namespace}/{self._meta.name}"
        )
        return self

    def uid(self, uid: str) -> PodBuilder:
        self._meta = attrs.evolve(self._meta, uid=uid)
        return self

    def label(self, key: str, value: str) -> PodBuilder:
        self._meta = attrs.evolve(self._meta, labels={**self._meta.labels, key: value})
        return self

    def labels(self, labels: Mapping[str, str]) -> PodBuilder:
        self._meta = attrs.evolve(self._meta, labels={**self._meta.labels, **labels})
        return self

    def created(self, t: float) -> PodBuilder:
        self._meta = attrs.evolve(self._meta, creation_timestamp=t)
        return self

    def terminating(self, t: float = 0.0) -> PodBuilder:
        self._meta = attrs.evolve(self._meta, deletion_timestamp=t)
        return self

    def req(self, **requests: str | int) -> PodBuilder:
        """Add a container with these requests (``ephemeral_storage`` -> ``ephemeral-storage``)."""
        reqs = {k.replace("_", "-"): v for k, v in requests.items()}
        return self.container(requests=reqs)

    def container(
        self,
        requests: Mapping[str, str | int] | None = None,
        *,
        image: str = "",
        ports: tuple[ContainerPort, ...] = (),
        name: str | None = None,
    ) -> PodBuilder:
        c = Container(
            name=name or f"c{len(self._spec.containers)}",
            image=image,
            requests=_resources(requests or {}),
            ports=ports,
        )
        self._spec = attrs.evolve(self._spec, containers=(*self._spec.containers, c))
        return self

    def init_req(self, sidecar: bool = False, **requests: str | int) -> PodBuilder:
        reqs = {k.replace("_", "-"): v for k, v in requests.items()}
        c = Container(
            name=f"init{len(self._spec.init_containers)}",
            requests=_resources(reqs),
            restart_policy="Always" if sidecar else None,
        )
        self._spec = attrs.evolve(self._spec, init_containers=(*self._spec.init_containers, c))
        return self

    def host_port(self, port: int, protocol: str = "TCP", host_ip: str = "") -> PodBuilder:
        p = ContainerPort(container_port=port, host_port=port, protocol=protocol, host_ip=host_ip)
        return self.container(ports=(p,))

    def overhead(self, **resources: str | int) -> PodBuilder:
        self._spec = attrs.evolve(self._spec, overhead=_resources(resources))
        return self

    def node(self, node_name: str) -> PodBuilder:
        self._spec = attrs.evolve(self._spec, node_name=node_name)
        return self

    def priority(self, value: int) -> PodBuilder:
        self._spec = attrs.evolve(self._spec, priority=value)
        return self

    def preemption_policy(self, policy: str) -> PodBuilder:
        self._spec = attrs.evolve(self._spec, preemption_policy=policy)
        return self

    def scheduler_name(self, name: str) -> PodBuilder:
        self._spec = attrs.evolve(self._spec, scheduler_name=name)
        return self

    def scheduling_gates(self, *gates: str) -> PodBuilder:
        self._spec = attrs.evolve(self._spec, scheduling_gates=gates)
        return self

    def node_selector(self, selector: Mapping[str, str]) -> PodBuilder:
        self._spec = attrs.evolve(self._spec, node_selector=dict(selector))
        return self

    def toleration(
        self, key: str = "", value: str = "", effect: str = "", operator: str = "Equal"
    ) -> PodBuilder:
        t = Toleration(key=key, value=value, effect=effect, operator=operator)
        self._spec = attrs.evolve(self._spec, tolerations=(*self._spec.tolerations, t))
        return self

    def node_affinity_in(self, key: str, *values: str) -> PodBuilder:
        term = NodeSelectorTerm(
            match_expressions=(NodeSelectorRequirement(key=key, operator="In", values=values),)
        )
        return self.affinity(
            Affinity(node_affinity=NodeAffinity(required=NodeSelector(terms=(term,))))
        )

    def affinity(self, affinity: Affinity) -> PodBuilder:
        self._spec = attrs.evolve(self._spec, affinity=affinity)
        return self

    def pod_affinity(
        self, topology_key: str, match_labels: Mapping[str, str], *, anti: bool = False
    ) -> PodBuilder:
        term = PodAffinityTerm(
            topology_key=topology_key, label_selector=LabelSelector(match_labels=dict(match_labels))
        )
        current = self._spec.affinity or Affinity()
        if anti:
            prev = current.pod_anti_affinity or PodAntiAffinity()
            current = attrs.evolve(
                current, pod_anti_affinity=attrs.evolve(prev, required=(*prev.required, term))
            )
        else:
            prev_a = current.pod_affinity or PodAffinity()
            current = attrs.evolve(
                current, pod_affinity=attrs.evolve(prev_a, required=(*prev_a.required, term))
            )
        return self.affinity(current)

    def spread(
        self,
        max_skew: int,
        topology_key: str,
        match_labels: Mapping[str, str],
        when_unsatisfiable: str = "DoNotSchedule",
    ) -> PodBuilder:
        c = TopologySpreadConstraint(
            max_skew=max_skew,
            topology_key=topology_key,
            when_unsatisfiable=when_unsatisfiable,
            label_selector=LabelSelector(match_labels=dict(match_labels)),
        )
        self._spec = attrs.evolve(
            self._spec, topology_spread_constraints=(*self._spec.topology_spread_constraints, c)
        )
        return self

    def nominated(self, node_name: str) -> PodBuilder:
        self._status = attrs.evolve(self._status, nominated_node_name=node_name)
        return self

    def start_time(self, t: float) -> PodBuilder:
        self._status = attrs.evolve(self._status, start_time=t)
        return self

    def volume(self, volume: Volume) -> PodBuilder:
        self._spec = attrs.evolve(self._spec, volumes=(*self._spec.volumes, volume))
        return self

    def pvc(self, claim_name: str) -> PodBuilder:
        """A volume named as the claim, using it (upstream ``st.MakePod().PVC()``)."""
        source = _ClaimSource(claim_name=claim_name)
        return self.volume(
            Volume(name=claim_name, kind="persistentVolumeClaim", persistent_volume_claim=source)
        )

    def obj(self) -> Pod:
        return Pod(metadata=self._meta, spec=self._spec, status=self._status)


class NodeBuilder:
    def __init__(self, name: str) -> None:
        self._meta = ObjectMeta(name=name, namespace="", uid=name)
        self._spec = NodeSpec()
        self._status = NodeStatus()

    def label(self, key: str, value: str) -> NodeBuilder:
        self._meta = attrs.evolve(self._meta, labels={**self._meta.labels, key: value})
        return self

    def labels(self, labels: Mapping[str, str]) -> NodeBuilder:
        self._meta = attrs.evolve(self._meta, labels={**self._meta.labels, **labels})
        return self

    def capacity(self, **resources: str | int) -> NodeBuilder:
        """Capacity and allocatable (``ephemeral_storage`` -> ``ephemeral-storage``)."""
        res = _resources({k.replace("_", "-"): v for k, v in resources.items()})
        self._status = attrs.evolve(self._status, capacity=res, allocatable=res)
        return self

    def resources(self, resources: Mapping[str, str | int]) -> NodeBuilder:
        res = _resources(resources)
        self._status = attrs.evolve(self._status, capacity=res, allocatable=res)
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> NodeBuilder:
        t = Taint(key=key, value=value, effect=effect)
        self._spec = attrs.evolve(self._spec, taints=(*self._spec.taints, t))
        return self

    def unschedulable(self, value: bool = True) -> NodeBuilder:
        self._spec = attrs.evolve(self._spec, unschedulable=value)
        return self

    def image(self, name: str, size_bytes: int) -> NodeBuilder:
        img = ContainerImage(names=(name,), size_bytes=size_bytes)
        self._status = attrs.evolve(self._status, images=(*self._status.images, img))
        return self

    def obj(self) -> Node:
        return Node(metadata=self._meta, spec=self._spec, status=self._status)


def make_pod(name: str, namespace: str = "default") -> PodBuilder:
    return PodBuilder(name, namespace)


def make_node(name: str) -> NodeBuilder:
    return NodeBuilder(name)
