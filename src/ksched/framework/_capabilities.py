"""What a plugin lets the framework's fast paths assume, declared once on the plugin.

The fast paths keep Filter masks, Filter verdicts and raw Score columns between cycles for
pods that read the same; they may do so only for plugins whose answer on a node is a
function of that node and of named parts of the pod. A plugin says so with a class
attribute, read once when its profile is built (never per call)::

    class NodeName:
        name = "NodeName"
        capabilities = Capabilities(node_local_filter=True, pod_fields=(POD_NODE_NAME,))

A plugin without ``capabilities`` promises nothing: the fast paths that need a promise
stay off for the pods it judges, and everything else still runs (the result is the same).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

import attrs

from ..api import Pod
from ._signature import (
    HOST_PORTS,
    NODE_AFFINITY,
    NODE_NAME,
    NODE_SELECTOR,
    RESOURCES,
    TOLERATIONS,
    host_ports_signer,
    node_selector_signer,
    resources_signer,
    tolerations_signer,
)
from ._spec_memo import SpecMemo

__all__ = [
    "POD_HOST_PORTS",
    "POD_NODE_AFFINITY",
    "POD_NODE_NAME",
    "POD_NODE_SELECTOR",
    "POD_RESOURCES",
    "POD_TOLERATIONS",
    "Capabilities",
    "PodField",
    "row_key_function",
]


@attrs.frozen
class PodField:
    """One part of a pod that a verdict reads: its signature key and how to read it.

    ``read(pod)`` must return a hashable value that compares equal for pods the verdict
    treats alike. ``spec_only``: it reads nothing but ``pod.spec`` (then it is worked
    out once per spec object).
    """

    key: str
    read: Callable[[Pod], Hashable]
    spec_only: bool = True


def _node_name(pod: Pod) -> Hashable:
    return pod.spec.node_name


def _node_affinity(pod: Pod) -> Hashable:
    affinity = pod.spec.affinity
    return affinity.node_affinity if affinity is not None else None


POD_RESOURCES = PodField(RESOURCES, resources_signer)
POD_HOST_PORTS = PodField(HOST_PORTS, host_ports_signer)
POD_TOLERATIONS = PodField(TOLERATIONS, tolerations_signer)
POD_NODE_NAME = PodField(NODE_NAME, _node_name)
POD_NODE_SELECTOR = PodField(NODE_SELECTOR, node_selector_signer)
POD_NODE_AFFINITY = PodField(NODE_AFFINITY, _node_affinity)


@attrs.frozen(kw_only=True)
class Capabilities:
    """A plugin's promises to the fast paths.

    Attributes:
        node_local_filter: its Filter verdict on a node reads only that node (its Node
            object and the pods on it) and the pod's ``pod_fields``: never other nodes,
            cluster-wide state, or PreFilter state beyond what those fields determine.
            With a ``filter_batch`` form, its masks and verdicts may be kept for equal pods.
        node_local_score: its raw Score of a node reads only that node and the pod's
            ``pod_fields``. With a ``score_batch`` form, its raw scores may be kept in a
            column for equal pods (NormalizeScore still runs per pod).
        pod_fields: what of the pod those verdicts and scores read.
    """

    node_local_filter: bool = False
    node_local_score: bool = False
    pod_fields: tuple[PodField, ...] = ()


NO_CAPABILITIES = Capabilities()


def capabilities_of(plugin: object) -> Capabilities:
    """The plugin's declared capabilities (none when it declares none or a foreign value)."""
    declared = getattr(plugin, "capabilities", None)
    return declared if isinstance(declared, Capabilities) else NO_CAPABILITIES


def row_key_function(fields: Sequence[PodField]) -> Callable[[Pod], Hashable | None]:
    """A pod's key for the kept rows: the values of ``fields`` (their keys deduplicated,
    in the order given), or None when a value cannot key a dict. Worked out once per pod
    spec when every field reads only the spec."""
    unique: dict[str, PodField] = {}
    for field in fields:
        unique.setdefault(field.key, field)
    readers = tuple(f.read for f in unique.values())

    def row_key(pod: Pod) -> Hashable | None:
        key = tuple(read(pod) for read in readers)
        try:
            hash(key)
        except TypeError:
            return None
        return key

    if all(f.spec_only for f in unique.values()):
        return SpecMemo(row_key)
    return row_key
