"""CycleState: per-attempt data that plugins share with themselves and each other."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ._metrics import MetricsRecorder

__all__ = ["POD_GROUP_CYCLE", "CycleState", "StateData"]

POD_GROUP_CYCLE = "PodGroupCycle"
"""CycleState key set (True) for an attempt that is part of a pod-group cycle (upstream
``CycleState.SetPodGroupCycleState``): plugins then leave activating siblings to the
cycle, which tries every pending member itself."""


@runtime_checkable
class StateData(Protocol):
    """Data kept in a CycleState. ``clone`` is used by preemption's dry runs."""

    def clone(self) -> StateData: ...


class CycleState:
    """A key/value store that lives for one scheduling attempt of one pod.

    Values that implement ``clone()`` are copied by :meth:`clone`; others are shared
    (treat them as immutable).
    """

    __slots__ = (
        "_data",
        "metrics",
        "record_plugin_metrics",
        "skip_filter_plugins",
        "skip_pre_bind_plugins",
        "skip_score_plugins",
    )

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter_plugins: frozenset[str] = frozenset()
        self.skip_score_plugins: frozenset[str] = frozenset()
        self.skip_pre_bind_plugins: frozenset[str] = frozenset()
        self.metrics: MetricsRecorder | None = None
        """Where the framework counts this attempt's plugin evaluations (None: no metrics)."""
        self.record_plugin_metrics = False
        """Whether this attempt times each plugin call (upstream samples 10 % of attempts)."""

    @classmethod
    def for_attempt(cls, metrics: MetricsRecorder | None) -> CycleState:
        """A new state for one scheduling attempt, recording into ``metrics`` (when kept)
        and timing plugin calls when the recorder samples this attempt.

        # schedule_one.go ScheduleOne: state.SetRecordPluginMetrics(rand.Intn(100) < 10)
        """
        state = cls()
        if metrics is not None:
            state.metrics = metrics
            state.record_plugin_metrics = metrics.sample_plugin_metrics()
        return state

    def read(self, key: str) -> Any:
        """The value under ``key``. Raises KeyError when absent."""
        return self._data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        copy = CycleState()
        # A duck-typed look-up: isinstance against the runtime-checkable Protocol is slow.
        copy._data = {
            k: (clone() if (clone := getattr(v, "clone", None)) is not None else v)
            for k, v in self._data.items()
        }
        copy.skip_filter_plugins = self.skip_filter_plugins
        copy.skip_score_plugins = self.skip_score_plugins
        copy.skip_pre_bind_plugins = self.skip_pre_bind_plugins
        copy.metrics = self.metrics
        copy.record_plugin_metrics = self.record_plugin_metrics
        return copy
