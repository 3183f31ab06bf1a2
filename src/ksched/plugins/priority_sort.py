"""PrioritySort: higher priority first, then earlier queue timestamp.

# pkg/scheduler/framework/plugins/queuesort/priority_sort.go
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..framework import Handle, QueuedPodInfo

__all__ = ["PrioritySort"]


class PrioritySort:
    """The default QueueSort plugin."""

    name = "PrioritySort"

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> PrioritySort:
        return cls()

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        pa, pb = a.pod.priority, b.pod.priority
        return pa > pb or (pa == pb and a.timestamp < b.timestamp)

    def sort_key(self, info: QueuedPodInfo) -> tuple[int, float]:
        """The order of :meth:`less` as a key: higher priority, then earlier timestamp."""
        return (-info.pod.priority, info.timestamp)
