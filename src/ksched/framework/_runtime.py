"""The Framework: runs one profile's plugins at each extension point.

# pkg/scheduler/framework/runtime/framework.go
Plugins are classified once, when the profile is built: which extension points each
implements, whether each method is ``async``, and which offer batch forms. A chain of
plain ``def`` Filter plugins runs inline over the nodes; async ones fan out in a task
group. Batch forms (``filter_batch``, ``score_batch``) judge all nodes at once over the
snapshot's NodeTable; the per-node methods stay the definition and give the reasons.
"""

from __future__ import annotations

import contextlib
from collections.abc import Hashable, Sequence
from functools import partial

import anyio
import numpy as np

from ..api import Pod
from ._calls import (
    MAX_PERMIT_TIMEOUT,
    FilterOutcome,
    PluginCall,
    ScoreOutcome,
    ScorePluginEntry,
    UniformScore,
    fault_status,
    int_scores,
    invoke,
    is_scores,
)
from ._cycle_state import CycleState
from ._handle import MetricsRecorder
from ._interfaces import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    NodeToStatus,
    PostFilterResult,
)
from ._parallel import run_chunked
from ._plugin_metrics import (
    BIND,
    PERMIT,
    POST_BIND,
    POST_FILTER,
    PRE_BIND,
    PRE_BIND_PRE_FLIGHT,
    PRE_SCORE,
    RESERVE,
    SCORE,
    SCORE_EXTENSION_NORMALIZE,
    UNRESERVE,
    call_timed,
)
from ._run_filter import FilterRunner
from ._status import SKIP, SUCCESS, Code, Status
from ._table import IntArray, NodeTable
from ._types import NodeInfo
from ._waiting import WaitingPod

__all__ = ["FilterOutcome", "Framework", "ScoreOutcome"]

assert MIN_NODE_SCORE == 0  # _out_of_range reads negative scores as large unsigned ones


def _out_of_range(values: IntArray) -> bool:
    """Whether a score lies outside [MIN_NODE_SCORE, MAX_NODE_SCORE], in one pass: as
    unsigned, a negative int64 is larger than any score."""
    return bool(_max(values.view(np.uint64)) > MAX_NODE_SCORE)


def _in_range(values: IntArray) -> bool:
    return not len(values) or not _out_of_range(values)


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


_max = np.maximum.reduce
"""``ndarray.max`` without its Python-level wrapper (a few µs per call, twice per pod)."""


class Framework(FilterRunner):
    """One profile: its plugins per extension point, in order, with score weights."""

    # ---- PostFilter ---------------------------------------------------------------

    async def run_post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        """PostFilter in order until one succeeds (or errors)."""
        calls = self._calls(state, POST_FILTER, self._post_filter)
        sampled = state.record_plugin_metrics
        # The Filter and AddPod/RemovePod calls a PostFilter makes (preemption's dry runs)
        # are part of its observation, not timed one by one: docs/metrics.md.
        state.record_plugin_metrics = False
        try:
            return await self._run_post_filter(calls, state, pod, statuses)
        finally:
            state.record_plugin_metrics = sampled

    async def _run_post_filter(
        self, calls: list[PluginCall], state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        reasons: list[str] = []
        last: Status | None = None
        for call in calls:
            try:
                outcome = call.fn(state, pod, statuses)
                if call.is_async:
                    outcome = await outcome
                result, status = outcome
            except Exception as exc:
                return None, fault_status(call.plugin, "PostFilter", exc)
            status = SUCCESS if status is None else status.with_plugin(call.plugin)
            if status.is_success:
                return result, status
            if status.code is not Code.UNSCHEDULABLE and status.code is not (
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            ):
                return None, status
            reasons.extend(status.reasons)
            last = status
        code = last.code if last is not None else Code.UNSCHEDULABLE
        return None, Status(code, tuple(reasons), plugin=last.plugin if last else "")

    # ---- PreScore / Score ---------------------------------------------------------

    async def run_pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        evaluated: list[str] = []
        try:
            return await self._run_pre_score(state, pod, nodes, evaluated)
        finally:
            if state.metrics is not None:  # instrumented_plugins.go: all but SKIP count
                state.metrics.plugin_evaluations(
                    PRE_SCORE,
                    self.profile_name,
                    self._names_evaluated(PRE_SCORE, state, evaluated),
                    1,
                )

    async def _run_pre_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], evaluated: list[str]
    ) -> Status:
        skipped: set[str] = set()
        for call in self._calls(state, PRE_SCORE, self._pre_score):
            try:
                result = call.fn(state, pod, nodes)
                if call.is_async:
                    result = await result
                status: Status | None = result
            except Exception as exc:
                evaluated.append(call.plugin)
                return fault_status(call.plugin, "PreScore", exc)
            if status is None:
                evaluated.append(call.plugin)
                continue
            if status.code is Code.SKIP:
                skipped.add(call.plugin)
                continue
            evaluated.append(call.plugin)
            if status.is_success:
                continue
            return status.with_plugin(call.plugin)
        state.skip_score_plugins = frozenset(skipped)
        return SUCCESS

    async def run_score(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        *,
        table: NodeTable | None = None,
        rows: IntArray | None = None,
        row_key: Hashable | None = None,
        plugin_scores: bool = True,
    ) -> ScoreOutcome:
        """Score, NormalizeScore, weight, total (# framework.go RunScorePlugins).

        With ``table`` and the nodes' ``rows`` in it, plugins' batch forms score all
        nodes at once; with the pod's ``row_key`` too, row-local plugins' raw scores
        are read from columns kept for equal pods. Without ``plugin_scores`` only the
        total is asked for: the outcome may then leave out the scores of the row-local
        plugins that need no NormalizeScore, read together as one column of their
        weighted sums, and of the plugins that give every node the same score
        (``uniform_score``), added to the total as they are.
        """
        batch_ok = table is not None and rows is not None and self.batching and table.exact
        total: IntArray | None = None
        per_plugin: dict[str, IntArray] = {}
        skip = state.skip_score_plugins
        if state.metrics is not None and self._score:
            # instrumented_plugins.go: each plugin that is not skipped scores every node.
            names = self._evaluated_names(SCORE, self._score_calls, skip)
            state.metrics.plugin_evaluations(SCORE, self.profile_name, names, len(nodes))
        recorder = state.metrics if state.record_plugin_metrics else None
        kept_key = (
            (row_key, skip)
            if batch_ok and row_key is not None and recorder is None and self.use_row_cache
            else None
        )
        if kept_key is not None and not plugin_scores:
            assert table is not None and rows is not None
            summed, summed_names = self._summed_plugins(skip)
            if summed:
                total = self._kept_sums(kept_key, summed, state, pod, table, rows)
                if total is not None:
                    skip = skip | summed_names  # their weighted sums are in the total
        # Only totals asked for: a plugin that gives every node the same score adds it
        # to every total without scoring them.
        uniform_table = table if batch_ok and recorder is None and not plugin_scores else None
        offset = 0
        for sp in self._score:
            if sp.name in skip:
                continue
            if uniform_table is not None and sp.uniform is not None:
                same = _uniform_score(sp.uniform, state, pod, uniform_table)
                if same is not None:
                    offset += same * sp.weight
                    continue
            checked = False  # values known to be in range (a kept column, not normalized)
            try:
                values: IntArray | None = None
                if batch_ok and sp.batch is not None:
                    assert table is not None and rows is not None
                    if kept_key is not None and sp.name in self._row_local_scores:
                        values = self._kept_scores(kept_key, sp, state, pod, table, rows)
                        checked = values is not None and sp.normalize is None
                    if values is None:
                        if recorder is None:
                            values = sp.batch(state, pod, table, rows)
                        else:
                            values = call_timed(
                                recorder, sp.name, SCORE, sp.batch, state, pod, table, rows
                            )
                if values is not None and not checked and not is_scores(values, len(nodes)):
                    raise TypeError(
                        f"score_batch returned {type(values).__name__}, "
                        f"not {len(nodes)} int64 scores"
                    )
                if values is None:
                    call = sp.call if recorder is None else self._timed_score(sp, recorder)
                    if call.is_async:
                        values = await self._score_async(call, state, pod, nodes)
                    else:
                        fn = call.fn
                        values = int_scores([fn(state, pod, info) for info in nodes])
            except Exception as exc:
                return ScoreOutcome.failed(fault_status(sp.name, "Score", exc))
            if sp.normalize is not None:
                try:
                    if sp.normalize_batch is not None:
                        if recorder is None:
                            sp.normalize_batch(state, pod, values)
                        else:
                            call_timed(
                                recorder,
                                sp.name,
                                SCORE_EXTENSION_NORMALIZE,
                                sp.normalize_batch,
                                state,
                                pod,
                                values,
                            )
                        status = None
                    else:
                        by_node = dict(zip((i.name for i in nodes), values.tolist(), strict=True))
                        if recorder is None:
                            status = sp.normalize.normalize_score(state, pod, by_node)
                        else:
                            status = call_timed(
                                recorder,
                                sp.name,
                                SCORE_EXTENSION_NORMALIZE,
                                sp.normalize.normalize_score,
                                state,
                                pod,
                                by_node,
                            )
                        values = int_scores(list(by_node.values()))
                except Exception as exc:
                    return ScoreOutcome.failed(fault_status(sp.name, "NormalizeScore", exc))
                if status is not None and not status.is_success:
                    return ScoreOutcome.failed(status.with_plugin(sp.name))
            if not checked and len(values) and _out_of_range(values):
                out_of_range = np.flatnonzero((values > MAX_NODE_SCORE) | (values < MIN_NODE_SCORE))
                value = int(values[out_of_range[0]])
                message = (
                    f"plugin {sp.name!r} returns an invalid score {value}, it should in the "
                    f"range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
                )
                return ScoreOutcome.failed(Status(Code.ERROR, (message,), plugin=sp.name))
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
            return self.row_cache.scores(
                key, sp.name, table, rows, partial(sp.batch, state, pod, table), score_row
            )
        except Exception:
            return None

    def _summed_plugins(
        self, skip: frozenset[str]
    ) -> tuple[tuple[ScorePluginEntry, ...], frozenset[str]]:
        """The Score plugins (not skipped) whose weighted raw scores can be kept summed in
        one column, and their names: row-local, with a batch form, without
        NormalizeScore; none for fewer than two."""
        found = self._summed_for.get(skip)
        if found is None:
            summed = tuple(
                sp
                for sp in self._score
                if sp.name not in skip
                and sp.name in self._row_local_scores
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
        for equal pods (one read instead of one per plugin); None when there is none or
        a plugin fails or leaves the score range (each plugin then scores on its own
        and reports it)."""
        infos = table.infos

        def score_rows(at: IntArray) -> IntArray | None:
            out: IntArray | None = None
            for sp in summed:
                assert sp.batch is not None
                values = sp.batch(state, pod, table, at)
                if values is None or not is_scores(values, len(at)) or not _in_range(values):
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
            return self.row_cache.scores(key, names, table, rows, score_rows, score_row, high)
        except Exception:
            return None

    def _timed_score(self, sp: ScorePluginEntry, recorder: MetricsRecorder) -> PluginCall:
        return self._timed.get(SCORE, self._score_calls, recorder)[self._score.index(sp)]

    async def _score_async(
        self, call: PluginCall, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> IntArray:
        scores: list[int] = [0] * len(nodes)

        async def one(i: int) -> bool:
            scores[i] = await invoke(call, state, pod, nodes[i])
            return True

        await run_chunked(len(nodes), self.parallelism, one)
        return int_scores(scores)

    # ---- Reserve / Permit ---------------------------------------------------------

    async def run_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        for call in self._calls(state, RESERVE, self._reserve):
            try:
                result = call.fn(state, pod, node_name)
                if call.is_async:
                    result = await result
                status: Status | None = result
            except Exception as exc:
                return fault_status(call.plugin, "Reserve", exc)
            if status is not None and not status.is_success:
                return status.with_plugin(call.plugin)
        return SUCCESS

    async def run_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Unreserve on every Reserve plugin in reverse order; faults are contained."""
        with anyio.CancelScope(shield=True):
            for call in reversed(self._calls(state, UNRESERVE, self._unreserve)):
                with contextlib.suppress(Exception):  # one failing Unreserve must not stop the rest
                    pending = call.fn(state, pod, node_name)
                    if call.is_async:
                        await pending

    async def run_permit(
        self, state: CycleState, pod: Pod, node_name: str, now: float
    ) -> tuple[Status, WaitingPod | None]:
        """Permit in order: any rejection rejects; any Wait makes the pod wait.

        Returns (status, waiting pod or None). Timeouts are capped at 15 minutes.
        """
        pending: dict[str, float] = {}
        timeouts: dict[str, float] = {}
        for call in self._calls(state, PERMIT, self._permit):
            try:
                result = call.fn(state, pod, node_name)
                if call.is_async:
                    result = await result
                status: Status | None = result
            except Exception as exc:
                return fault_status(call.plugin, "Permit", exc), None
            if status is None or status.is_success:
                continue
            if status.code is Code.WAIT:
                timeout = min(max(status.timeout, 0.0), MAX_PERMIT_TIMEOUT)
                pending[call.plugin] = now + timeout
                timeouts[call.plugin] = timeout
                continue
            if status.is_rejected:
                return status.with_plugin(call.plugin), None
            return status.with_plugin(call.plugin), None
        if pending:
            waiting = WaitingPod(pod=pod, node_name=node_name, pending=pending, timeouts=timeouts)
            return Status(Code.WAIT), waiting
        return SUCCESS, None

    # ---- binding ------------------------------------------------------------------

    def run_pre_bind_pre_flights(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """PreBindPreFlight: the PreBind plugins that say SKIP (nothing to do for this pod
        on this node) are skipped at PreBind. # runtime/framework.go RunPreBindPreFlights

        Any other answer, or a fault, leaves the plugin's PreBind to run and report."""
        skip: list[str] = []
        for call in self._calls(state, PRE_BIND_PRE_FLIGHT, self._pre_bind_pre_flight):
            try:
                status: Status | None = call.fn(state, pod, node_name)
            except Exception:
                continue
            if status is not None and status.code is Code.SKIP:
                skip.append(call.plugin)
        state.skip_pre_bind_plugins = frozenset(skip)

    def binds_inline(self, state: CycleState) -> bool:
        """Whether every PreBind (not skipped), Bind and PostBind plugin for this attempt is
        a plain ``def``: the binding cycle then cannot wait on anything."""
        if self._binds_async:
            return False
        return not self._async_pre_bind or self._async_pre_bind <= state.skip_pre_bind_plugins

    async def run_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        for call in self._calls(state, PRE_BIND, self._pre_bind):
            if call.plugin in state.skip_pre_bind_plugins:
                continue
            try:
                result = call.fn(state, pod, node_name)
                if call.is_async:
                    result = await result
                status: Status | None = result
            except Exception as exc:
                return fault_status(call.plugin, "PreBind", exc)
            if status is not None and not status.is_success:
                return status.with_plugin(call.plugin)
        return SUCCESS

    async def run_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """The first Bind plugin that does not SKIP decides."""
        for call in self._calls(state, BIND, self._bind):
            try:
                result = call.fn(state, pod, node_name)
                if call.is_async:
                    result = await result
                status: Status | None = result
            except Exception as exc:
                return fault_status(call.plugin, "Bind", exc)
            if status is not None and status.code is Code.SKIP:
                continue
            return SUCCESS if status is None else status.with_plugin(call.plugin)
        return SKIP

    async def run_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        for call in self._calls(state, POST_BIND, self._post_bind):
            with contextlib.suppress(Exception):  # PostBind is informational
                pending = call.fn(state, pod, node_name)
                if call.is_async:
                    await pending
