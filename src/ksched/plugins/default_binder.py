"""DefaultBinder: bind the pod through the cluster store.

# pkg/scheduler/framework/plugins/defaultbinder/default_binder.go
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..api import Pod
from ..cluster import InMemoryCluster
from ..framework import CycleState, Handle, Status

__all__ = ["DefaultBinder"]


class DefaultBinder:
    name = "DefaultBinder"

    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> DefaultBinder | _InMemoryBinder:
        """On the in-memory store (its own ``bind``, not a subclass's), a binder whose
        ``bind`` is a plain ``def``: the binding cycle then never waits."""
        cluster = handle.cluster
        if isinstance(cluster, InMemoryCluster) and type(cluster).bind is InMemoryCluster.bind:
            return _InMemoryBinder(cluster)
        return cls(handle)

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        await self._handle.cluster.bind(pod, node_name)
        return None


class _InMemoryBinder:
    """DefaultBinder on an InMemoryCluster."""

    name = "DefaultBinder"

    def __init__(self, cluster: InMemoryCluster) -> None:
        self._cluster = cluster

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self._cluster.bind_now(pod, node_name)
        return None
