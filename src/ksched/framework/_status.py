"""Status: what an extension point says about a pod.

# staging/src/k8s.io/kube-scheduler/framework/interface.go: Code, Status
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

import attrs

__all__ = ["Code", "Status", "as_status"]


class Code(enum.IntEnum):
    """The outcome of a plugin call."""

    SUCCESS = 0
    """The plugin ran and found nothing against the pod."""
    ERROR = 1
    """An internal fault: the attempt fails and the pod is retried with backoff."""
    UNSCHEDULABLE = 2
    """The pod does not fit now; preemption or a cluster change may help."""
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    """The pod does not fit and preemption on this node would not help."""
    WAIT = 4
    """Permit only: hold the pod until allowed, rejected or timed out."""
    SKIP = 5
    """PreFilter/PreScore: nothing to do for this pod (the plugin's later points are
    skipped). Bind: leave the pod to the next Bind plugin."""
    PENDING = 6
    """The pod waits for something outside the scheduler (e.g. PreBind)."""

    @property
    def label(self) -> str:
        """The upstream spelling: ``Success``, ``UnschedulableAndUnresolvable``..."""
        return _LABELS[self]


_LABELS = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}


def _as_reasons(value: str | Iterable[str]) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)


@attrs.frozen
class Status:
    """A code, the reasons behind it, and the plugin that said it.

    Plugins return ``None`` for success; a ``Status`` only when they have something to say.
    ``timeout`` is the wait of a Permit ``WAIT`` (seconds).
    """

    code: Code
    reasons: tuple[str, ...] = attrs.field(default=(), converter=_as_reasons)
    plugin: str = ""
    timeout: float = 0.0

    @classmethod
    def wait(cls, timeout: float, reason: str = "") -> Status:
        """A Permit verdict: hold the pod for up to ``timeout`` seconds."""
        return cls(Code.WAIT, (reason,) if reason else (), timeout=timeout)

    @classmethod
    def error(cls, message: str, plugin: str = "") -> Status:
        return cls(Code.ERROR, (message,), plugin=plugin)

    @property
    def is_success(self) -> bool:
        return self.code is Code.SUCCESS

    @property
    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending."""
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        if self.plugin == plugin:
            return self
        return Status(self.code, self.reasons, plugin, self.timeout)


SUCCESS = Status(Code.SUCCESS)
SKIP = Status(Code.SKIP)
"""A plugin's Skip: a Status is immutable, so one object serves every call."""


def as_status(result: Status | None) -> Status:
    """``None`` read as success."""
    return SUCCESS if result is None else result
