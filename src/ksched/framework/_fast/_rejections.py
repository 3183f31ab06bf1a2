"""The statuses of the nodes a batch Filter pass rejected, in the compact form NodeToStatus
keeps: positions, one index per position, and a few distinct Status objects.

# pkg/scheduler/framework/runtime/framework.go RunFilterPlugins (the first rejecting
# plugin of the chain gives a node's status)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...api import Pod
from .._calls import PluginCall, fault_status
from .._cycle_state import CycleState
from .._metrics import MetricsRecorder
from .._plugin_metrics import FILTER, call_timed
from .._protocols import Plugin
from .._status import Code, Status
from .._table import BoolArray, IntArray, NodeTable

__all__ = ["batch_rejections", "index_in", "listed", "merge_found"]


def batch_rejections(
    plugins: dict[str, Plugin],
    state: CycleState,
    pod: Pod,
    table: NodeTable,
    order: IntArray,
    rejected: IntArray,
    masks: Sequence[tuple[PluginCall, BoolArray]],
) -> tuple[IntArray, IntArray, list[Status]]:
    """Statuses of the ``rejected`` positions when every active Filter has a batch form:
    each node's first rejecting plugin (in chain order) says why. Returns the positions in
    ascending order, per position the index of its status, and the distinct statuses
    (each used by some position; equal verdicts share one object)."""
    positions_of: list[IntArray] = []
    which_of: list[IntArray] = []
    distinct: list[Status] = []
    rows = order[rejected]
    undecided = np.ones(len(rows), dtype=np.bool_)
    recorder = state.metrics if state.record_plugin_metrics else None
    for call, mask in masks:
        mine = undecided & ~mask[rows]
        if not mine.any():
            continue
        undecided &= ~mine
        positions, plugin_rows = rejected[mine], rows[mine]
        try:
            made, index = _plugin_statuses(
                plugins[call.plugin], call, state, pod, table, plugin_rows, recorder
            )
        except Exception as exc:
            fault = fault_status(call.plugin, "Filter", exc)
            return positions, np.zeros(len(positions), dtype=np.int64), [fault]
        # One tagged copy per distinct status object.
        tagged = [
            s.with_plugin(call.plugin)
            if s is not None and not s.is_success and s.code is not Code.SKIP
            else None
            for s in made
        ]
        used = np.fromiter((t is not None for t in tagged), np.bool_, len(tagged))
        renumber = np.cumsum(used, dtype=np.int64) - 1 + len(distinct)
        distinct.extend(t for t in tagged if t is not None)
        if not used.all():  # a success or skip: not a faithful batch form
            keep = used[index]
            positions, index = positions[keep], index[keep]
        positions_of.append(positions)
        which_of.append(renumber[index])
    if not positions_of:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, []
    if len(positions_of) == 1:  # already ascending: rejected is sorted
        return positions_of[0], which_of[0], distinct
    all_positions = np.concatenate(positions_of)
    by_position = np.argsort(all_positions, kind="stable")
    return all_positions[by_position], np.concatenate(which_of)[by_position], distinct


def _plugin_statuses(
    plugin: Plugin,
    call: PluginCall,
    state: CycleState,
    pod: Pod,
    table: NodeTable,
    rows: IntArray,
    recorder: MetricsRecorder | None,
) -> tuple[Sequence[Status | None], IntArray]:
    """One plugin's statuses of ``rows``, grouped: from its status-groups form, its
    statuses form, or its per-node Filter (timed in sampled attempts)."""
    groups_fn = getattr(plugin, "filter_batch_status_groups", None)
    if groups_fn is not None:
        if recorder is None:
            made, index = groups_fn(state, pod, table, rows)
        else:
            made, index = call_timed(
                recorder, call.plugin, FILTER, groups_fn, state, pod, table, rows
            )
        return made, index
    statuses_fn = getattr(plugin, "filter_batch_statuses", None)
    results: Sequence[Status | None]
    if statuses_fn is None:
        infos = table.infos
        results = [call.fn(state, pod, infos[r]) for r in rows.tolist()]
    elif recorder is None:
        results = statuses_fn(state, pod, table, rows)
    else:
        results = call_timed(recorder, call.plugin, FILTER, statuses_fn, state, pod, table, rows)
    return _group_by_identity(results)


def _group_by_identity(
    results: Sequence[Status | None],
) -> tuple[list[Status | None], IntArray]:
    """``results`` as (distinct objects in first-seen order, index per result)."""
    first: dict[int, int] = {}
    made: list[Status | None] = []
    index = np.empty(len(results), dtype=np.int64)
    for i, s in enumerate(results):
        k = first.get(id(s))
        if k is None:
            k = first[id(s)] = len(made)
            made.append(s)
        index[i] = k
    return made, index


def merge_found(
    positions: IntArray, which: IntArray, distinct: list[Status], found: dict[int, Status]
) -> tuple[IntArray, IntArray]:
    """Add the statuses ``found`` node by node (positions disjoint from ``positions``),
    keeping position order; their distinct objects join ``distinct``."""
    known = {id(s): k for k, s in enumerate(distinct)}

    def index_of(status: Status) -> int:
        k = known.get(id(status))
        if k is None:
            k = known[id(status)] = len(distinct)
            distinct.append(status)
        return k

    extra = np.fromiter(found, np.int64, len(found))
    extra_which = np.fromiter(map(index_of, found.values()), np.int64, len(found))
    all_positions = np.concatenate((positions, extra))
    by_position = np.argsort(all_positions, kind="stable")
    return all_positions[by_position], np.concatenate((which, extra_which))[by_position]


def index_in(distinct: list[Status], status: Status) -> int:
    """The index of the ``status`` object in ``distinct``, appended when absent."""
    for k, s in enumerate(distinct):
        if s is status:
            return k
    distinct.append(status)
    return len(distinct) - 1


def listed(at: IntArray, distinct: list[Status]) -> tuple[IntArray, IntArray, list[Status]]:
    """Per-position status indexes (-1: none) as a batch pass's rejections: the positions
    with a status, ascending, the index of each, and the distinct statuses used."""
    positions = (at >= 0).nonzero()[0]
    which = at[positions]
    used = np.bincount(which, minlength=len(distinct)).nonzero()[0]
    if len(used) == len(distinct):
        return positions, which, distinct
    renumber = np.zeros(len(distinct), dtype=np.int64)
    renumber[used] = np.arange(len(used), dtype=np.int64)
    return positions, renumber[which], [distinct[k] for k in used.tolist()]
