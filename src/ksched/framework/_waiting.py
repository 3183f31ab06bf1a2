"""Pods held at Permit.

# pkg/scheduler/framework/runtime/waiting_pods_map.go
A WaitingPod is released when every plugin that asked it to wait has allowed it; a
rejection from anyone ends the wait at once. The binding task waits on it inside a cancel
scope with the earliest plugin timeout.
"""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import attrs

from ..api import Pod
from ._status import Code, Status

__all__ = ["WaitingPod", "WaitingPods"]


@attrs.define(eq=False)
class WaitingPod:
    """A pod waiting at Permit for the plugins in ``pending``."""

    pod: Pod
    node_name: str
    pending: dict[str, float]
    """plugin name -> deadline (event-loop time)."""
    _timeouts: dict[str, float] = attrs.field(factory=dict)
    """plugin name -> the wait it asked for (seconds), for the timeout message."""
    _done: anyio.Event = attrs.field(factory=anyio.Event)
    _verdict: Status | None = None

    def allow(self, plugin: str) -> None:
        """``plugin`` approves; the pod goes on once no plugin is pending."""
        self.pending.pop(plugin, None)
        if not self.pending and self._verdict is None:
            self._verdict = Status(Code.SUCCESS, plugin=plugin)
            self._done.set()

    def reject(self, plugin: str, message: str) -> None:
        """End the wait: the pod is unreserved and requeued.

        A wait whose deadline has already passed ends as a timeout, whoever rejects it.
        """
        if self._verdict is None and self.pending and _now() >= self.deadline:
            self._time_out()
            return
        if self._verdict is None:
            self._verdict = Status(Code.UNSCHEDULABLE, (message,), plugin=plugin)
            self._done.set()

    @property
    def deadline(self) -> float:
        return min(self.pending.values(), default=0.0)

    @property
    def pending_plugins(self) -> list[str]:
        return list(self.pending)

    @property
    def verdict(self) -> Status | None:
        return self._verdict

    async def wait(self) -> Status:
        """Wait for the verdict, or time out at the earliest plugin deadline."""
        with anyio.move_on_after(max(0.0, self.deadline - anyio.current_time())):
            await self._done.wait()
        if self._verdict is None:
            self._time_out()
        assert self._verdict is not None
        return self._verdict

    def _time_out(self) -> None:
        if self._verdict is None:
            plugin = min(self.pending, key=self.pending.__getitem__, default="")
            self._verdict = Status(
                Code.UNSCHEDULABLE,
                (
                    f"rejected due to timeout after waiting {self._timeout_of(plugin)} "
                    f"at plugin {plugin}",
                ),
                plugin=plugin,
            )
            self._done.set()

    def _timeout_of(self, plugin: str) -> str:
        return _format_duration(self._timeouts.get(plugin, 0.0))


def _now() -> float:
    """The event loop's time; outside a running loop nothing has timed out yet."""
    try:
        return anyio.current_time()
    except RuntimeError:
        return float("-inf")


def _format_duration(seconds: float) -> str:
    """Go's time.Duration String() for whole and fractional seconds (``1m0s``, ``10s``)."""
    if seconds <= 0:
        return "0s"
    minutes, secs = divmod(seconds, 60.0)
    hours, minutes = divmod(int(minutes), 60)
    secs_text = f"{secs:g}s"
    if hours:
        return f"{hours}h{minutes}m{secs_text}"
    if minutes:
        return f"{minutes}m{secs_text}"
    return secs_text


class WaitingPods:
    """The pods currently waiting at Permit, by uid."""

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}

    def add(self, waiting: WaitingPod) -> None:
        self._pods[waiting.pod.uid] = waiting

    def remove(self, uid: str) -> None:
        self._pods.pop(uid, None)

    def get(self, uid: str) -> WaitingPod | None:
        return self._pods.get(uid)

    def __iter__(self) -> Iterator[WaitingPod]:
        return iter(list(self._pods.values()))

    def __len__(self) -> int:
        return len(self._pods)
