"""Plugin methods resolved once, fault statuses, and what Filter and Score return."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

from ..api import Pod
from ._cycle_state import CycleState
from ._events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from ._interfaces import NodeToStatus
from ._protocols import Plugin, ScoreExtensions
from ._status import SUCCESS, Code, Status
from ._table import BoolArray, IntArray, NodeTable
from ._types import NodeInfo

__all__ = [
    "ANY_EVENT",
    "MAX_PERMIT_TIMEOUT",
    "BatchFilter",
    "BatchNormalize",
    "BatchScore",
    "FilterOutcome",
    "PluginCall",
    "ScoreOutcome",
    "ScorePluginEntry",
    "UniformScore",
    "bind_method",
    "fault_status",
    "int_scores",
    "invoke",
    "is_mask",
    "is_scores",
    "run_filters_sync",
]


ANY_EVENT = ClusterEventWithHint(ClusterEvent(EventResource.WILDCARD, ActionType.ALL))

MAX_PERMIT_TIMEOUT = 15 * 60.0
"""Upstream caps every Permit wait at 15 minutes."""


@attrs.define(eq=False, slots=True)
class PluginCall:
    """A plugin method, resolved and classified once."""

    plugin: str
    fn: Callable[..., Any]
    is_async: bool


def bind_method(plugin: Plugin, method: str) -> PluginCall | None:
    fn = getattr(plugin, method, None)
    if fn is None or not callable(fn):
        return None
    return PluginCall(plugin.name, fn, inspect.iscoroutinefunction(fn))


async def invoke(call: PluginCall, *args: Any) -> Any:
    result = call.fn(*args)
    if call.is_async:
        result = await result
    return result


def run_filters_sync(
    calls: Sequence[PluginCall], state: CycleState, pod: Pod, node_info: NodeInfo
) -> Status:
    """Plain Filter methods on one node, in order; the first failure decides."""
    skip = state.skip_filter_plugins
    for call in calls:
        if call.plugin in skip:
            continue
        try:
            status: Status | None = call.fn(state, pod, node_info)
        except Exception as exc:
            return fault_status(call.plugin, "Filter", exc)
        if status is not None and status.code is not Code.SUCCESS:
            if status.code is Code.SKIP:
                continue
            return status.with_plugin(call.plugin)
    return SUCCESS


def fault_status(plugin: str, point: str, exc: BaseException) -> Status:
    message = f'running "{plugin}" {point} plugin: {type(exc).__name__}: {exc}'
    return Status(Code.ERROR, (message,), plugin=plugin)


BatchFilter = Callable[[CycleState, Pod, NodeTable], BoolArray | None]
BatchScore = Callable[[CycleState, Pod, NodeTable, IntArray], IntArray | None]
BatchNormalize = Callable[[CycleState, Pod, IntArray], None]
UniformScore = Callable[[CycleState, Pod, NodeTable], int | None]


@attrs.define(eq=False, slots=True)
class ScorePluginEntry:
    name: str
    call: PluginCall
    weight: int
    normalize: ScoreExtensions | None
    batch: BatchScore | None = None
    normalize_batch: BatchNormalize | None = None
    uniform: UniformScore | None = None


@attrs.define(eq=False, slots=True)
class FilterOutcome:
    """What Filter found: feasible nodes (in evaluation order) and the others' statuses.

    ``processed`` counts the nodes examined. ``rows`` are the feasible nodes' NodeTable
    rows when the batch path ran. Without ``need_statuses`` the statuses of rejected
    nodes are filled in only when no node is feasible.
    """

    feasible: Sequence[NodeInfo]
    statuses: NodeToStatus
    processed: int
    unschedulable_plugins: set[str]
    error: Status | None = None
    rows: IntArray | None = None


@attrs.define(eq=False, slots=True)
class ScoreOutcome:
    """Per node: each plugin's normalized score (before weight), and the weighted total.

    Scores are arrays in ``nodes`` order; the dict views are built when asked for.
    """

    nodes: Sequence[NodeInfo]
    scores: dict[str, IntArray]
    total: IntArray
    error: Status | None = None

    @classmethod
    def failed(cls, status: Status) -> ScoreOutcome:
        return cls((), {}, np.zeros(0, dtype=np.int64), status)

    @property
    def plugin_scores(self) -> dict[str, dict[str, int]]:
        names = [info.name for info in self.nodes]
        return {
            plugin: dict(zip(names, values.tolist(), strict=True))
            for plugin, values in self.scores.items()
        }

    @property
    def totals(self) -> dict[str, int]:
        return dict(zip((info.name for info in self.nodes), self.total.tolist(), strict=True))


def is_mask(value: object, size: int) -> bool:
    return isinstance(value, np.ndarray) and value.dtype == np.bool_ and value.shape == (size,)


def is_scores(value: object, size: int) -> bool:
    return isinstance(value, np.ndarray) and value.dtype == np.int64 and value.shape == (size,)


def int_scores(values: Sequence[int]) -> IntArray:
    """Plugin scores as int64; OverflowError for a value int64 cannot hold."""
    return np.array(values, dtype=np.int64) if values else np.zeros(0, dtype=np.int64)
