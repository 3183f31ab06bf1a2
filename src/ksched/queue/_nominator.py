"""Pods nominated to nodes by preemption, waiting for their victims to leave.

# pkg/scheduler/backend/queue/nominator.go: addNominatedPodUnlocked, UpdateNominatedPod,
# deleteUnlocked, nominatedPodsForNode
"""

from __future__ import annotations

import functools
from collections.abc import KeysView

import attrs

from ..api import ObjectMeta, Pod
from ..framework import PodInfo

__all__ = ["Nominator", "PodRef", "bare_pod_info"]


@attrs.frozen(slots=True)
class PodRef:
    """Which pod is nominated; its PodInfo is looked up in the queue when asked for."""

    uid: str
    name: str
    namespace: str


class Nominator:
    """node name -> nominated pods (in nomination order), and pod uid -> node name."""

    __slots__ = ("_by_node", "_node_of")

    def __init__(self) -> None:
        self._by_node: dict[str, list[PodRef]] = {}
        self._node_of: dict[str, str] = {}

    def add(self, pod: Pod, node_name: str | None) -> None:
        """Nominate ``pod`` to ``node_name``; None takes ``status.nominatedNodeName``
        (upstream ModeNoop). An empty name only clears the pod's nomination."""
        self.delete(pod)
        if node_name is None:
            node_name = pod.status.nominated_node_name or ""
        if not node_name:
            return
        self._node_of[pod.uid] = node_name
        refs = self._by_node.setdefault(node_name, [])
        if all(ref.uid != pod.uid for ref in refs):
            refs.append(PodRef(pod.uid, pod.name, pod.namespace))

    def update(self, old: Pod, new: Pod) -> None:
        """Follow a pod update; an update that names no node on either side keeps the
        nomination the scheduler made in memory."""
        keep: str | None = None
        if not old.status.nominated_node_name and not new.status.nominated_node_name:
            keep = self._node_of.get(old.uid)
        self.delete(old)
        self.add(new, keep)

    def delete(self, pod: Pod) -> None:
        node_name = self._node_of.pop(pod.uid, None)
        if node_name is None:
            return
        refs = self._by_node.get(node_name, [])
        for i, ref in enumerate(refs):
            if ref.uid == pod.uid:
                del refs[i]
                break
        if not refs:
            self._by_node.pop(node_name, None)

    def has_any(self) -> bool:
        return bool(self._node_of)

    def nodes(self) -> KeysView[str]:
        """The nodes that have nominated pods."""
        return self._by_node.keys()

    def node_of(self, uid: str) -> str | None:
        return self._node_of.get(uid)

    def for_node(self, node_name: str) -> list[PodRef]:
        return list(self._by_node.get(node_name, ()))


@functools.lru_cache(maxsize=4096)
def bare_pod_info(ref: PodRef) -> PodInfo:
    """What upstream hands out for a nominated pod no longer in the queue: name only
    (one object per pod, so callers may compare them by identity)."""
    return PodInfo.of(Pod(metadata=ObjectMeta(name=ref.name, namespace=ref.namespace, uid=ref.uid)))
