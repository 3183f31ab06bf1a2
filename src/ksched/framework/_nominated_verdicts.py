"""Filter verdicts on nodes that hold nominated pods, kept between scheduling cycles.

# pkg/scheduler/framework/runtime/framework.go (RunFilterPluginsWithNominatedPods)
Every cycle runs the Filter twice on each node holding a nominated pod (with the
higher-or-equal priority nominated pods added, then without). While preemptors queue up,
most of those nodes and their nominations stay as they were from one cycle to the next,
and so do the verdicts: when every Filter that runs for the pod reads only the node
(its Node object and the pods on it) and the pod, the verdict is a function of the
node's info, the nominated pods, and the parts of the pod those Filters read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from ..api import Pod
from ._cycle_state import CycleState
from ._signature import host_ports_signer, node_selector_signer, resources_signer
from ._status import Status
from ._types import NodeInfo, PodInfo

__all__ = ["NominatedVerdicts", "node_local_filter_types"]

_LIMIT = 10_000
_KEYS_LIMIT = 256

_NODE_LOCAL: tuple[type, ...] | None = None


def node_local_filter_types() -> tuple[type, ...]:
    """The built-in Filters whose verdict reads only the node and the pod's own fields
    (never other nodes, never state beyond what the pod alone determines)."""
    global _NODE_LOCAL
    if _NODE_LOCAL is None:
        from ..plugins.node_affinity import NodeAffinity
        from ..plugins.node_name import NodeName
        from ..plugins.node_ports import NodePorts
        from ..plugins.node_resources_fit import NodeResourcesFit
        from ..plugins.node_unschedulable import NodeUnschedulable
        from ..plugins.taint_toleration import TaintToleration

        _NODE_LOCAL = (
            NodeAffinity,
            NodeName,
            NodePorts,
            NodeResourcesFit,
            NodeUnschedulable,
            TaintToleration,
        )
    return _NODE_LOCAL


def node_local_fragments(pod: Pod) -> tuple[Any, ...]:
    """What the node-local Filters (and the row-local Scores) read of the pod: their
    signers' fragments."""
    spec = pod.spec
    affinity = spec.affinity.node_affinity if spec.affinity is not None else None
    return (
        resources_signer(pod),
        host_ports_signer(pod),
        spec.tolerations,
        spec.node_name,
        node_selector_signer(pod),
        affinity,
    )


def _pod_key(pod: Pod, skip: frozenset[str]) -> tuple[Any, ...]:
    """What the node-local Filters read of the pod, with its priority (which nominated
    pods count) and the Filters the cycle skips."""
    return (pod.priority, *node_local_fragments(pod), skip)


@attrs.define(eq=False, slots=True)
class _Verdict:
    node: NodeInfo
    generation: int
    node_object: object
    nominated: tuple[PodInfo, ...]
    uids: frozenset[str]
    own: bool
    pod_key: tuple[Any, ...]
    status: Status


class NominatedVerdicts:
    """Per node, the last two-pass Filter verdict and what it was decided from."""

    __slots__ = ("_eligible", "_entries", "_key", "_keys", "_pod", "_state", "_statuses")

    def __init__(self) -> None:
        self._entries: dict[str, _Verdict] = {}
        self._eligible: dict[frozenset[str], bool] = {}
        self._state: CycleState | None = None
        self._pod: Pod | None = None
        self._key: tuple[Any, ...] | None = None
        self._keys: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self._statuses: dict[Status, Status] = {}
        """Kept verdicts by value: equal verdicts on different nodes are one object, so a
        diagnosis counts its distinct statuses, not its nodes."""

    def key(
        self, state: CycleState, pod: Pod, filters: Sequence[tuple[str, object]]
    ) -> tuple[Any, ...] | None:
        """The pod's key for this cycle, or None when a Filter that runs for it is not
        node-local (see the module docstring) or its calls are timed one by one."""
        if self._state is state and self._pod is pod:
            return self._key
        skip = frozenset(state.skip_filter_plugins)
        eligible = self._eligible.get(skip)
        if eligible is None:
            local = node_local_filter_types()
            eligible = all(type(p) in local for n, p in filters if n not in skip)
            self._eligible[skip] = eligible
        key = None
        if eligible and not state.record_plugin_metrics:
            key = self._intern(_pod_key(pod, skip))
        self._state, self._pod, self._key = state, pod, key
        return key

    def _intern(self, key: tuple[Any, ...]) -> tuple[Any, ...]:
        """The kept key equal to ``key``, so entries match it by identity."""
        try:
            kept = self._keys.get(key)
        except TypeError:  # an unhashable part: compared per node instead
            return key
        if kept is None:
            if len(self._keys) >= _KEYS_LIMIT:
                self._keys.clear()
            self._keys[key] = kept = key
        return kept

    def get(
        self, node: NodeInfo, nominated: Sequence[PodInfo], pod: Pod, key: tuple[Any, ...]
    ) -> Status | None:
        entry = self._entries.get(node.name)
        if (
            entry is None
            or entry.node is not node
            or entry.generation != node.generation
            or entry.node_object is not node.node
            or len(entry.nominated) != len(nominated)
            or not (entry.pod_key is key or entry.pod_key == key)
        ):
            return None
        for kept, current in zip(entry.nominated, nominated, strict=True):
            if kept is not current:
                return None
        # The same nominated pods: whether the pod is one of them, by their kept uids.
        if (pod.uid in entry.uids) != entry.own:
            return None
        return entry.status

    def put(
        self,
        node: NodeInfo,
        nominated: Sequence[PodInfo],
        pod: Pod,
        key: tuple[Any, ...],
        status: Status,
    ) -> None:
        if len(self._entries) >= _LIMIT:
            self._entries.clear()
        if len(self._statuses) >= _KEYS_LIMIT:
            self._statuses.clear()
        status = self._statuses.setdefault(status, status)
        uids = frozenset(p.pod.uid for p in nominated)
        self._entries[node.name] = _Verdict(
            node,
            node.generation,
            node.node,
            tuple(nominated),
            uids,
            pod.uid in uids,
            key,
            status,
        )
