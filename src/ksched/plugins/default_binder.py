"""DefaultBinder: bind the pod through the cluster store.

# pkg/scheduler/framework/plugins/defaultbinder/default_binder.go
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..api import Pod
from ..framework import CycleState, Handle, Status

__all__ = ["DefaultBinder"]


class DefaultBinder:
    name = "DefaultBinder"

    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> DefaultBinder:
        return cls(handle)

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        await self._handle.cluster.bind(pod, node_name)
        return None
