"""The unschedulable pool, indexed by the plugins that turned each pod away.

# pkg/scheduler/backend/queue/scheduling_queue.go (unschedulablePods,
# movePodsToActiveOrBackoffQueue, isPodWorthRequeuing): an event can move a pool pod only
# through a plugin that rejected it and registered for the event (EnqueueExtensions); a
# gated pod only through its gating plugin's events (QueuedPodInfo.GatingPluginEvents).
So an event needs to look only at the pods in the buckets of the plugins registered for
it, never at the whole pool: 10 000 gated pods cost a bind nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence

from ..api import Pod
from ..framework import ClusterEvent, ClusterEventWithHint
from ._entry import QueuedPod
from ._hints import is_wildcard, matches

__all__ = ["UnschedulablePool"]

_Key = tuple[str, str]
"""(scheduler name, plugin name): registrations are per profile."""


class UnschedulablePool:
    """The pool's pods by uid, in the order they first entered it, plus an index from
    (profile, plugin) to the pods that plugin rejected (gated pods: their gating plugin
    only). Pods no plugin rejected (errors, flushed) are candidates for every event.

    Every placement goes through ``put`` and every removal through ``pop``: the index is
    rebuilt from the entry's fields at ``put``.
    """

    def __init__(
        self, registrations: Callable[[Pod], Mapping[str, Sequence[ClusterEventWithHint]]]
    ) -> None:
        self._registrations = registrations
        self._entries: dict[str, QueuedPod] = {}
        self._order: dict[str, int] = {}
        self._keys: dict[str, tuple[tuple[_Key, ...], bool]] = {}
        self._buckets: dict[_Key, dict[str, QueuedPod]] = {}
        self._unindexed: dict[str, QueuedPod] = {}
        self._gated = 0
        self._counter = 0
        self._relevant: dict[tuple[_Key, ClusterEvent], bool] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, uid: object) -> bool:
        return uid in self._entries

    def get(self, uid: str) -> QueuedPod | None:
        return self._entries.get(uid)

    def values(self) -> list[QueuedPod]:
        """A snapshot of the pool's pods, in pool order."""
        return list(self._entries.values())

    def __iter__(self) -> Iterator[QueuedPod]:
        return iter(self._entries.values())

    @property
    def gated(self) -> int:
        """How many pods in the pool are gated."""
        return self._gated

    def put(self, uid: str, entry: QueuedPod) -> None:
        """Hold ``entry`` (again); a pod already held keeps its place in pool order."""
        if uid in self._entries:
            self._unindex(uid)
        else:
            self._counter += 1
            self._order[uid] = self._counter
        self._entries[uid] = entry
        profile = entry.pod.spec.scheduler_name
        if entry.gated:
            self._gated += 1
            keys: tuple[_Key, ...] = ((profile, entry.gating_plugin),)
        else:
            rejectors = entry.unschedulable_plugins | entry.pending_plugins
            keys = tuple((profile, plugin) for plugin in rejectors)
        self._keys[uid] = (keys, entry.gated)
        if not keys:
            self._unindexed[uid] = entry
        for key in keys:
            self._buckets.setdefault(key, {})[uid] = entry

    def pop(self, uid: str) -> QueuedPod | None:
        """Remove and return the pod, or None when the pool does not hold it."""
        entry = self._entries.pop(uid, None)
        if entry is None:
            return None
        self._unindex(uid)
        del self._order[uid]
        return entry

    def _unindex(self, uid: str) -> None:
        # By the keys recorded at ``put``: the entry's fields may have changed since.
        keys, gated = self._keys.pop(uid)
        self._gated -= gated
        for key in keys:
            bucket = self._buckets[key]
            del bucket[uid]
            if not bucket:
                del self._buckets[key]
        if not keys:
            del self._unindexed[uid]

    def _is_relevant(self, key: _Key, bucket: dict[str, QueuedPod], event: ClusterEvent) -> bool:
        found = self._relevant.get((key, event))
        if found is None:
            some = next(iter(bucket.values()))
            registrations = self._registrations(some.pod).get(key[1], ())
            found = any(matches(r.event, event) for r in registrations)
            self._relevant[(key, event)] = found
        return found

    def candidates(self, event: ClusterEvent) -> list[QueuedPod]:
        """The pods ``event`` may move, in pool order: all of them for a wildcard event;
        otherwise those rejected (or gated) by a plugin registered for it, and those no
        plugin rejected."""
        if is_wildcard(event):
            return list(self._entries.values())
        found: dict[str, QueuedPod] = dict(self._unindexed)
        for key, bucket in self._buckets.items():
            if self._is_relevant(key, bucket, event):
                found.update(bucket)
        # Buckets merge out of order, and a pod put again keeps its place: sort back.
        order = self._order
        return sorted(found.values(), key=lambda entry: order[entry.pod.uid])
