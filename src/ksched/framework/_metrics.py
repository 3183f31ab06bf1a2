"""What the engine records into: the metrics protocol the framework and the scheduler use.

# pkg/scheduler/metrics/metrics.go (the recorder is passed in, never a module registry)
``ksched.observability.SchedulerMetrics`` implements it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

__all__ = ["MetricsRecorder"]


class MetricsRecorder(Protocol):
    """What the engine records into (``ksched.observability.SchedulerMetrics``)."""

    def watch(self, read_state: Callable[[], Mapping[str, Any]]) -> None:
        """Read the state gauges through ``read_state`` when collected."""

    def attempt(self, result: str, profile: str, seconds: float) -> None:
        """An attempt ended: ``scheduled``, ``unschedulable`` or ``error``."""

    def algorithm(self, seconds: float) -> None:
        """How long finding a node took (schedulePod)."""

    def pod_group_attempt(self, result: str, profile: str, seconds: float) -> None:
        """A pod-group cycle ended: ``scheduled``, ``unschedulable``,
        ``waiting_on_preemption`` or ``error``."""

    def pod_group_algorithm(self, seconds: float) -> None:
        """How long placing a pod group's members took."""

    def scheduled(self, attempts: int, since_first_queued: float) -> None:
        """A pod was bound after ``attempts`` attempts."""

    def extension_point(self, point: str, status: str, profile: str, seconds: float) -> None:
        """All of a profile's plugins at one extension point ran."""

    def incoming(self, queue: str, event: str) -> None:
        """A pod entered a sub-queue because of an event."""

    def preemption(self, victims: int) -> None:
        """A preemption attempt, with the victims it chose (0: none)."""

    def permit_wait(self, result: str, seconds: float) -> None:
        """A pod's wait at Permit ended."""

    def sample_plugin_metrics(self) -> bool:
        """Whether the attempt starting now times each plugin call."""

    def plugin_execution(self, plugin: str, point: str, status: str, seconds: float) -> None:
        """One plugin call (or one batch call over all nodes) in a sampled attempt."""

    def plugin_evaluations(
        self, point: str, profile: str, plugins: tuple[str, ...], count: int
    ) -> None:
        """Each of ``plugins`` was evaluated ``count`` times at ``point``."""

    def extender_request(self, extender: str, verb: str, result: str, seconds: float) -> None:
        """A call to an extender ended: ``success``, ``error`` or ``timeout``."""
