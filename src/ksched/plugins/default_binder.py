"""DefaultBinder: bind the pod through the cluster store.

# pkg/scheduler/framework/plugins/defaultbinder/default_binder.go
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..api import Pod
from ..cluster import SyncBinder
from ..framework import Code, CycleState, Handle, Status

__all__ = ["DefaultBinder"]


class DefaultBinder:
    name = "DefaultBinder"

    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> DefaultBinder | _SyncBinder:
        """On a cluster that binds at once (``ClusterStore.sync_binder``), a binder whose
        ``bind`` is a plain ``def``: the binding cycle then never waits."""
        binder = handle.cluster.sync_binder
        if binder is not None:
            return _SyncBinder(binder)
        return cls(handle)

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """An API server's refusal (an error with a ``message``, as the kube store's)
        becomes an Error status with the server's own words (upstream's
        ``framework.AsStatus(err)``); other errors raise."""
        try:
            await self._handle.cluster.bind(pod, node_name)
        except Exception as exc:
            message = getattr(exc, "message", None)
            if not isinstance(message, str) or not message:
                raise
            return Status(Code.ERROR, (message,))
        return None


class _SyncBinder:
    """DefaultBinder on a cluster that binds at once."""

    name = "DefaultBinder"

    def __init__(self, binder: SyncBinder) -> None:
        self._binder = binder

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self._binder.bind_now(pod, node_name)
        return None
