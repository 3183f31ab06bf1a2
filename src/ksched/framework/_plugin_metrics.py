"""Per-plugin metrics: sampled call timings and evaluation counts.

# pkg/scheduler/framework/runtime/framework.go (each run*Plugin observes its duration
# only when state.ShouldRecordPluginMetrics()), instrumented_plugins.go
# (plugin_evaluation_total), pkg/scheduler/metrics/metrics.go (extension_point labels)
An attempt that is not sampled runs the plain calls: the only cost is reading
``state.record_plugin_metrics`` once per extension point. A sampled attempt runs the
same calls wrapped to read the loop clock around each one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ._calls import PluginCall
from ._status import Code, Status

if TYPE_CHECKING:
    from ._metrics import MetricsRecorder

__all__ = [
    "BIND",
    "FILTER",
    "PERMIT",
    "POST_BIND",
    "POST_FILTER",
    "PRE_BIND",
    "PRE_BIND_PRE_FLIGHT",
    "PRE_FILTER",
    "PRE_FILTER_EXTENSION_ADD_POD",
    "PRE_FILTER_EXTENSION_REMOVE_POD",
    "PRE_SCORE",
    "RESERVE",
    "SCORE",
    "SCORE_EXTENSION_NORMALIZE",
    "UNRESERVE",
    "TimedCalls",
    "call_timed",
    "status_label",
]

# The extension_point label values (metrics.go).
PRE_FILTER = "PreFilter"
FILTER = "Filter"
PRE_FILTER_EXTENSION_ADD_POD = "PreFilterExtensionAddPod"
PRE_FILTER_EXTENSION_REMOVE_POD = "PreFilterExtensionRemovePod"
POST_FILTER = "PostFilter"
PRE_SCORE = "PreScore"
SCORE = "Score"
SCORE_EXTENSION_NORMALIZE = "ScoreExtensionNormalize"
PRE_BIND_PRE_FLIGHT = "PreBindPreFlight"
PRE_BIND = "PreBind"
BIND = "Bind"
POST_BIND = "PostBind"
RESERVE = "Reserve"
UNRESERVE = "Unreserve"
PERMIT = "Permit"

_BATCH_POINTS = frozenset((FILTER, SCORE))
_SUCCESS = "Success"
_LABELS = {code: code.label for code in Code}
_ERROR = "Error"


def status_label(out: object) -> str:
    """The status label of what a plugin method returned: its Status's code (``Skip``,
    ``Wait``...), PostFilter's ``(result, status)`` pair's status, the first of a batch
    form's rejections, else ``Success`` (None, a PreFilterResult, a score, a mask)."""
    if out is None:
        return _SUCCESS
    if out.__class__ is Status:  # the common case first: no isinstance chain
        return _LABELS[out.code]
    if isinstance(out, Status):
        return out.code.label
    if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], Status):
        return out[1].code.label
    if isinstance(out, list) and out and isinstance(out[0], Status):
        return out[0].code.label
    return _SUCCESS


_clock = time.perf_counter
"""Plugin timings read the process's performance counter, as upstream's time.Since does:
a measurement of the call, not engine time (which comes from the event loop), and a tenth
of the cost of reading the loop's clock."""


def _timed(call: PluginCall, point: str, recorder: MetricsRecorder) -> PluginCall:
    fn, plugin, observe, now = call.fn, call.plugin, recorder.plugin_execution, _clock
    wrapped: Callable[..., Any]
    if call.is_async:

        async def timed_async(*args: Any) -> Any:
            start = now()
            try:
                out = await fn(*args)
            except Exception:
                observe(plugin, point, _ERROR, now() - start)
                raise
            observe(plugin, point, status_label(out), now() - start)
            return out

        wrapped = timed_async
    else:

        def timed_sync(*args: Any) -> Any:
            start = now()
            try:
                out = fn(*args)
            except Exception:
                observe(plugin, point, _ERROR, now() - start)
                raise
            observe(plugin, point, status_label(out), now() - start)
            return out

        wrapped = timed_sync
    return PluginCall(plugin, wrapped, call.is_async)


class TimedCalls:
    """A profile's plugin calls wrapped to time themselves, built once per extension
    point and recorder, for the sampled attempts."""

    def __init__(self) -> None:
        self._recorder: MetricsRecorder | None = None
        self._lists: dict[tuple[str, int], list[PluginCall]] = {}

    def get(
        self, point: str, calls: Sequence[PluginCall], recorder: MetricsRecorder
    ) -> list[PluginCall]:
        """``calls`` (a list the framework keeps) wrapped to record at ``point``."""
        if recorder is not self._recorder:
            self._recorder, self._lists = recorder, {}
        key = (point, id(calls))
        timed = self._lists.get(key)
        if timed is None:
            timed = self._lists[key] = [_timed(call, point, recorder) for call in calls]
        return timed


def call_timed(
    recorder: MetricsRecorder, plugin: str, point: str, fn: Callable[..., Any], *args: Any
) -> Any:
    """``fn(*args)``, recorded as one call of ``plugin`` at ``point`` (batch forms and
    extensions, which are not PluginCalls); an exception is recorded as ``Error``.

    A batch form that returns None declined the pod (its per-node method runs, and is
    timed, instead): that is not recorded.
    """
    now = _clock
    start = now()
    try:
        out = fn(*args)
    except Exception:
        recorder.plugin_execution(plugin, point, _ERROR, now() - start)
        raise
    if out is not None or point not in _BATCH_POINTS:
        recorder.plugin_execution(plugin, point, status_label(out), now() - start)
    return out
