"""Score over the NodeTable: batch forms, kept columns, kept sums, uniform scores.

# pkg/scheduler/framework/runtime/framework.go RunScorePlugins
The same totals (and, when asked, the same per-plugin scores) as the reference path
(``Framework.run_score``). Each plugin not skipped is scored by the fastest form that
applies to it:

- uniform (only totals asked, ``uniform_score``): the score every node gets is added to
  the totals without scoring;
- summed (only totals asked, two or more node-local plugins with batch forms and no
  NormalizeScore): their weighted raw scores read together from one column kept for the
  pod's key;
- kept (a node-local plugin with a batch form): its raw scores read from a column kept for
  the pod's key, the rows changed since scored again;
- batch (``score_batch``), else node by node.

NormalizeScore and the range check run as in the reference path (``_score_steps``).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from functools import partial

import numpy as np

from ...api import Pod
from .._calls import ScoreOutcome, ScorePluginEntry, UniformScore, fault_status, is_scores
from .._cycle_state import CycleState
from .._interfaces import MAX_NODE_SCORE, MIN_NODE_SCORE
from .._metrics import MetricsRecorder
from .._plugin_metrics import SCORE, call_timed
from .._score_steps import checked_scores, in_range, normalized
from .._status import Status
from .._table import IntArray, NodeTable
from .._types import NodeInfo
from ._kept import Kept
from ._reference import ReferencePath

__all__ = ["BatchScore"]


def _uniform_score(
    uniform: UniformScore, state: CycleState, pod: Pod, table: NodeTable
) -> int | None:
    """The score every node gets, when the plugin can tell; None also when it fails or
    the score is out of range (scoring node by node then reports it)."""
    try:
        same = uniform(state, pod, table)
        if same is None or not MIN_NODE_SCORE <= same <= MAX_NODE_SCORE:
            return None
        return int(same)
    except Exception:
        return None


class BatchScore:
    """A profile's Score over the NodeTable (see the module docstring)."""

    def __init__(self, fw: ReferencePath, kept: Kept) -> None:
        self.fw = fw
        self.set = fw.set
        self.kept = kept
        self._summed_for: dict[
            frozenset[str], tuple[tuple[ScorePluginEntry, ...], frozenset[str]]
        ] = {}
        """Per set of skipped Score plugins: the node-local ones kept as one column of
        weighted sums."""

    async def score(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        table: NodeTable,
        rows: IntArray,
        row_key: Hashable | None,
        plugin_scores: bool,
    ) -> ScoreOutcome:
        """Score every plugin not skipped; the outcome as the reference path's."""
        skip = state.skip_score_plugins
        recorder = state.metrics if state.record_plugin_metrics else None
        kept_key = (
            (row_key, skip)
            if row_key is not None and recorder is None and self.kept.use_row_cache
            else None
        )
        total: IntArray | None = None
        if kept_key is not None and not plugin_scores:
            summed, summed_names = self._summed_plugins(skip)
            if summed:
                total = self._kept_sums(kept_key, summed, state, pod, table, rows)
                if total is not None:
                    skip = skip | summed_names  # their weighted sums are in the total
        # Only totals asked for: a plugin that gives every node the same score adds it
        # to every total without scoring them.
        uniform_table = table if recorder is None and not plugin_scores else None
        offset = 0
        per_plugin: dict[str, IntArray] = {}
        for sp in self.set.score:
            if sp.name in skip:
                continue
            if uniform_table is not None and sp.uniform is not None:
                same = _uniform_score(sp.uniform, state, pod, uniform_table)
                if same is not None:
                    offset += same * sp.weight
                    continue
            values = await self._plugin_scores(
                sp, state, pod, nodes, table, rows, kept_key, recorder
            )
            if isinstance(values, Status):
                return ScoreOutcome.failed(values)
            weighted = values if sp.weight == 1 else values * sp.weight
            if total is None:
                total = weighted.copy() if weighted is values else weighted
            else:
                total += weighted
            per_plugin[sp.name] = values
        if total is None:
            total = np.full(len(nodes), offset, dtype=np.int64)
        elif offset:
            total += offset  # the total is the framework's own array here, never a kept one
        return ScoreOutcome(nodes, per_plugin, total)

    async def _plugin_scores(
        self,
        sp: ScorePluginEntry,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        table: NodeTable,
        rows: IntArray,
        kept_key: Hashable | None,
        recorder: MetricsRecorder | None,
    ) -> IntArray | Status:
        """One plugin's normalized, range-checked scores of ``nodes``, or the failure."""
        checked = False  # values known to be in range (a kept column, not normalized)
        try:
            values: IntArray | None = None
            if sp.batch is not None:
                if kept_key is not None and sp.name in self.set.node_local_scores:
                    values = self._kept_scores(kept_key, sp, state, pod, table, rows)
                    checked = values is not None and sp.normalize is None
                if values is None:
                    values = self._batch_scores(sp, state, pod, table, rows, recorder)
            if values is not None and not checked and not is_scores(values, len(nodes)):
                raise TypeError(
                    f"score_batch returned {type(values).__name__}, not {len(nodes)} int64 scores"
                )
            if values is None:
                values = await self.fw.score_nodes(sp, state, pod, nodes, recorder)
        except Exception as exc:
            return fault_status(sp.name, "Score", exc)
        done = normalized(sp, state, pod, nodes, values, recorder)
        if isinstance(done, Status) or checked:
            return done
        failed = checked_scores(sp.name, done)
        return failed if failed is not None else done

    @staticmethod
    def _batch_scores(
        sp: ScorePluginEntry,
        state: CycleState,
        pod: Pod,
        table: NodeTable,
        rows: IntArray,
        recorder: MetricsRecorder | None,
    ) -> IntArray | None:
        assert sp.batch is not None
        if recorder is None:
            return sp.batch(state, pod, table, rows)
        result: IntArray | None = call_timed(
            recorder, sp.name, SCORE, sp.batch, state, pod, table, rows
        )
        return result

    def _kept_scores(
        self,
        key: Hashable,
        sp: ScorePluginEntry,
        state: CycleState,
        pod: Pod,
        table: NodeTable,
        rows: IntArray,
    ) -> IntArray | None:
        """Raw scores at ``rows`` from the column kept for equal pods; None when there is
        none (or building it failed: the batch form on ``rows`` then says what happens)."""
        assert sp.batch is not None
        score = sp.call.fn
        infos = table.infos

        def score_row(row: int) -> int:
            return int(score(state, pod, infos[row]))

        try:
            return self.kept.row_cache.scores(
                key, sp.name, table, rows, partial(sp.batch, state, pod, table), score_row
            )
        except Exception:
            return None

    def _summed_plugins(
        self, skip: frozenset[str]
    ) -> tuple[tuple[ScorePluginEntry, ...], frozenset[str]]:
        """The Score plugins (not skipped) whose weighted raw scores can be kept summed in
        one column, and their names: node-local, with a batch form, without
        NormalizeScore; none for fewer than two."""
        found = self._summed_for.get(skip)
        if found is None:
            local = self.set.node_local_scores
            summed = tuple(
                sp
                for sp in self.set.score
                if sp.name not in skip
                and sp.name in local
                and sp.batch is not None
                and sp.normalize is None
            )
            if len(summed) < 2:
                summed = ()
            found = self._summed_for[skip] = (summed, frozenset(sp.name for sp in summed))
        return found

    def _kept_sums(
        self,
        key: Hashable,
        summed: tuple[ScorePluginEntry, ...],
        state: CycleState,
        pod: Pod,
        table: NodeTable,
        rows: IntArray,
    ) -> IntArray | None:
        """The sums of ``summed``'s weighted raw scores at ``rows``, from the column kept
        for equal pods (one read instead of one per plugin); None when there is none or a
        plugin fails or leaves the score range (each plugin then scores on its own and
        reports it)."""
        infos = table.infos

        def score_rows(at: IntArray) -> IntArray | None:
            out: IntArray | None = None
            for sp in summed:
                assert sp.batch is not None
                values = sp.batch(state, pod, table, at)
                if values is None or not is_scores(values, len(at)) or not in_range(values):
                    return None
                weighted = values * sp.weight
                out = weighted if out is None else out + weighted
            return out

        def score_row(row: int) -> int:
            sum_ = 0
            for sp in summed:
                value = int(sp.call.fn(state, pod, infos[row]))
                if not MIN_NODE_SCORE <= value <= MAX_NODE_SCORE:
                    return -1  # out of range: the column is dropped
                sum_ += value * sp.weight
            return sum_

        high = MAX_NODE_SCORE * sum(sp.weight for sp in summed)
        names = tuple(sp.name for sp in summed)
        try:
            return self.kept.row_cache.scores(key, names, table, rows, score_rows, score_row, high)
        except Exception:
            return None
