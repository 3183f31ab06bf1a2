"""Pods nominated to nodes by preemption, waiting for their victims to leave.

# pkg/scheduler/backend/queue/nominator.go: addNominatedPodUnlocked, UpdateNominatedPod,
# deleteUnlocked, nominatedPodsForNode
Besides upstream's two maps, the nominator logs the nodes whose nominated pods changed
(a nomination added or removed, or a nominated pod that the queue hands out differently
now: popped into flight or back), so that verdicts kept per nominated node are checked
again only where something changed.
"""

from __future__ import annotations

import functools

import attrs

from ..api import ObjectMeta, Pod
from ..framework import PodInfo

__all__ = ["NominatedNodes", "Nominator", "PodRef", "bare_pod_info"]

_LOG_LIMIT = 4096
"""Changes logged before the oldest half is dropped (a reader that far behind starts over)."""


@attrs.frozen(slots=True)
class PodRef:
    """Which pod is nominated; its PodInfo is looked up in the queue when asked for."""

    uid: str
    name: str
    namespace: str


class NominatedNodes(dict[str, list[PodRef]]):
    """The nodes that have nominated pods, for callers a live read-only collection of
    names (membership and iteration at dict speed), with the log of changed nodes.

    The nominator owns it and alone mutates it.
    """

    __slots__ = ("_base", "_log", "_node_of")

    def __init__(self, node_of: dict[str, str]) -> None:
        super().__init__()
        self._node_of = node_of
        self._log: list[str] = []
        self._base = 0

    @property
    def cursor(self) -> int:
        """The position after the last logged change."""
        return self._base + len(self._log)

    def changed_since(self, cursor: int) -> list[str] | None:
        """The nodes (repeats kept) whose nominated pods changed after ``cursor``; None
        when the log no longer reaches back that far."""
        at = cursor - self._base
        if at < 0 or at > len(self._log):
            return None
        return self._log[at:]

    def node_of(self, uid: str) -> str | None:
        """The node the pod is nominated to, if any."""
        return self._node_of.get(uid)

    def _changed(self, node_name: str) -> None:
        log = self._log
        if len(log) >= _LOG_LIMIT:
            drop = len(log) // 2
            del log[:drop]
            self._base += drop
        log.append(node_name)


class Nominator:
    """node name -> nominated pods (in nomination order), and pod uid -> node name."""

    __slots__ = ("_by_node", "_node_of")

    def __init__(self) -> None:
        self._node_of: dict[str, str] = {}
        self._by_node = NominatedNodes(self._node_of)

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
        self._by_node._changed(node_name)

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
        self._by_node._changed(node_name)

    def touch(self, uid: str) -> None:
        """The queue hands the pod out differently now (it went into flight or came back,
        its PodInfo replaced): log its node when it is nominated."""
        node_name = self._node_of.get(uid)
        if node_name is not None:
            self._by_node._changed(node_name)

    def has_any(self) -> bool:
        return bool(self._node_of)

    def nodes(self) -> NominatedNodes:
        """The nodes that have nominated pods (a live view)."""
        return self._by_node

    def node_of(self, uid: str) -> str | None:
        return self._node_of.get(uid)

    def for_node(self, node_name: str) -> list[PodRef]:
        return list(self._by_node.get(node_name, ()))


@functools.lru_cache(maxsize=4096)
def bare_pod_info(ref: PodRef) -> PodInfo:
    """What upstream hands out for a nominated pod no longer in the queue: name only
    (one object per pod, so callers may compare them by identity)."""
    return PodInfo.of(Pod(metadata=ObjectMeta(name=ref.name, namespace=ref.namespace, uid=ref.uid)))
