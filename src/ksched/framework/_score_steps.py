"""The steps after one Score plugin scored the nodes: NormalizeScore and the range check.

# pkg/scheduler/framework/runtime/framework.go RunScorePlugins
Shared by the reference path and the fast paths, so both say the same of a plugin that
normalizes wrongly or leaves the score range.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..api import Pod
from ._calls import ScorePluginEntry, fault_status, int_scores
from ._cycle_state import CycleState
from ._interfaces import MAX_NODE_SCORE, MIN_NODE_SCORE
from ._metrics import MetricsRecorder
from ._plugin_metrics import SCORE_EXTENSION_NORMALIZE, call_timed
from ._status import Code, Status
from ._table import IntArray
from ._types import NodeInfo

__all__ = ["checked_scores", "in_range", "normalized"]

assert MIN_NODE_SCORE == 0  # _out_of_range reads negative scores as large unsigned ones

_max = np.maximum.reduce
"""``ndarray.max`` without its Python-level wrapper (a few µs per call, twice per pod)."""


def _out_of_range(values: IntArray) -> bool:
    """Whether a score lies outside [MIN_NODE_SCORE, MAX_NODE_SCORE], in one pass: as
    unsigned, a negative int64 is larger than any score."""
    return bool(_max(values.view(np.uint64)) > MAX_NODE_SCORE)


def in_range(values: IntArray) -> bool:
    """Whether every score lies in [MIN_NODE_SCORE, MAX_NODE_SCORE]."""
    return not len(values) or not _out_of_range(values)


def normalized(
    sp: ScorePluginEntry,
    state: CycleState,
    pod: Pod,
    nodes: Sequence[NodeInfo],
    values: IntArray,
    recorder: MetricsRecorder | None,
) -> IntArray | Status:
    """``values`` after the plugin's NormalizeScore (the batch form works in place), or
    the failing Status."""
    if sp.normalize is None:
        return values
    status: Status | None = None
    try:
        if sp.normalize_batch is not None:
            if recorder is None:
                sp.normalize_batch(state, pod, values)
            else:
                point = SCORE_EXTENSION_NORMALIZE
                call_timed(recorder, sp.name, point, sp.normalize_batch, state, pod, values)
        else:
            by_node = dict(zip((i.name for i in nodes), values.tolist(), strict=True))
            fn = sp.normalize.normalize_score
            if recorder is None:
                status = fn(state, pod, by_node)
            else:
                status = call_timed(
                    recorder, sp.name, SCORE_EXTENSION_NORMALIZE, fn, state, pod, by_node
                )
            values = int_scores(list(by_node.values()))
    except Exception as exc:
        return fault_status(sp.name, "NormalizeScore", exc)
    if status is not None and not status.is_success:
        return status.with_plugin(sp.name)
    return values


def checked_scores(plugin: str, values: IntArray) -> Status | None:
    """The error when a normalized score lies outside [MIN_NODE_SCORE, MAX_NODE_SCORE]."""
    if not len(values) or not _out_of_range(values):
        return None
    out_of_range = np.flatnonzero((values > MAX_NODE_SCORE) | (values < MIN_NODE_SCORE))
    value = int(values[out_of_range[0]])
    message = (
        f"plugin {plugin!r} returns an invalid score {value}, it should in the "
        f"range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
    )
    return Status(Code.ERROR, (message,), plugin=plugin)
