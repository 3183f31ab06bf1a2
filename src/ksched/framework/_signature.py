"""Pod signatures: what a plugin's Filter and Score read of a pod, as a comparable value.

# pkg/scheduler/framework/runtime/signature.go
# staging/src/k8s.io/kube-scheduler/framework/signers.go
Two pods with equal signatures get the same feasibility and the same scores on the same
nodes in the same state. A plugin signs a pod with ``sign_pod(pod)``: a sequence of
``(key, value)`` fragments (values compared with ``==``), or a non-success Status when it
cannot sign this pod. Plugins reading the same part of a pod use the same key.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Protocol, runtime_checkable

import attrs

from ..api import Pod, pod_requests
from ._status import Status

__all__ = [
    "HOST_PORTS",
    "IMAGE_NAMES",
    "LABELS",
    "NODE_AFFINITY",
    "NODE_NAME",
    "NODE_SELECTOR",
    "RESOURCES",
    "SCHEDULER_NAME",
    "TOLERATIONS",
    "VOLUMES",
    "PodSignature",
    "SignFragment",
    "SignPlugin",
    "host_ports_signer",
    "node_selector_signer",
    "resources_signer",
    "tolerations_signer",
    "volumes_signer",
]

SignFragment = tuple[str, object]
PodSignature = tuple[SignFragment, ...]
"""A signature: fragments sorted by key. Compare two with ``==``."""

SCHEDULER_NAME = "v1.Pod.Spec.SchedulerName"
RESOURCES = "v1.Pod.Spec.ContainerRequestsAndOverheads()"
HOST_PORTS = "v1.Pod.Spec.HostPorts()"
TOLERATIONS = "v1.Pod.Spec.Tolerations"
NODE_AFFINITY = "v1.Pod.Spec.Affinity.NodeAffinity"
NODE_SELECTOR = "v1.Pod.Spec.Affinity.NodeSelector"
NODE_NAME = "v1.Pod.Spec.NodeName"
IMAGE_NAMES = "v1.Pod.Spec.CanonicalImageNames()"
LABELS = "v1.Pod.Labels"
VOLUMES = "v1.Pod.Spec.Volumes"


@runtime_checkable
class SignPlugin(Protocol):
    """A Filter/Score-side plugin that can say which parts of a pod its verdicts read.

    Opportunistic batching is on for a profile only when every PreFilter, Filter,
    PreScore and Score plugin in it implements ``sign_pod``.
    """

    @property
    def name(self) -> str: ...

    def sign_pod(self, pod: Pod) -> Sequence[SignFragment] | Status: ...


def resources_signer(pod: Pod) -> Hashable:
    """Requests with overhead, as Fit counts them and as the scorers count them."""
    return (
        tuple(sorted(pod_requests(pod).items())),
        tuple(sorted(pod_requests(pod, non_zero=True).items())),
    )


def host_ports_signer(pod: Pod) -> Hashable:
    """The host ports the pod asks for, as (ip, protocol, port), sorted."""
    ports = {
        (p.host_ip, p.protocol, p.host_port)
        for c in (*pod.spec.containers, *pod.spec.init_containers)
        for p in c.ports
        if p.host_port
    }
    return tuple(sorted(ports))


def tolerations_signer(pod: Pod) -> Hashable:
    return pod.spec.tolerations


def node_selector_signer(pod: Pod) -> Hashable:
    return tuple(sorted(pod.spec.node_selector.items()))


_UNSIGNED_VOLUMES = frozenset({"configMap", "secret"})


def volumes_signer(pod: Pod) -> Hashable:
    """The pod's volume sources but configMap and secret ones (specific to each pod, and
    of no matter to scheduling), sorted."""
    if not pod.spec.volumes:
        return ()
    return tuple(
        sorted(
            repr(attrs.astuple(v, recurse=False)[1:])
            for v in pod.spec.volumes
            if v.kind not in _UNSIGNED_VOLUMES
        )
    )
