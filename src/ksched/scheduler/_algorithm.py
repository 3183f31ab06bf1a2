"""The scheduling algorithm: which node for this pod, against the cycle's snapshot.

# pkg/scheduler/schedule_one.go (schedulePod, findNodesThatFitPod, evaluateNominatedNode,
# findNodesThatPassFilters, prioritizeNodes, selectHost), runtime/batch.go (GetNodeHint,
# StoreScheduleResults)
PreFilter, Filter (the nominated node, or the opportunistic-batching hint, tried alone
first), the extenders' filter, PreScore, Score and the extenders' priorities, then the
highest total (ties drawn uniformly). Nothing is assumed or bound here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Sequence

import attrs
import numpy as np

from ..api import Pod
from ..framework import Code, CycleState, NodeInfo, NodeToStatus, PodInfo, PreFilterResult, Status
from ..framework.batch import IntArray, PodSignature
from ..framework.runtime import FilterOutcome, Framework, OpportunisticBatch, ScoreOutcome
from ._diagnosis import FitError
from ._extenders import filter_by_extenders, prioritize_by_extenders
from ._observer import Attempt
from ._state import SchedulerState, num_feasible_nodes_to_find

__all__ = ["NO_NODES", "Evaluation", "SchedulingAlgorithm"]


@attrs.frozen
class Evaluation:
    """What :meth:`SchedulingAlgorithm.evaluate` found: the feasible nodes, the others'
    statuses, the totals (with ``score``) and the highest total possible."""

    feasible: list[str] = attrs.field(factory=list)
    statuses: NodeToStatus = attrs.field(factory=NodeToStatus)
    totals: dict[str, int] = attrs.field(factory=dict)
    max_total: int = 0
    error: Status | None = None
    scores: dict[str, dict[str, int]] = attrs.field(factory=dict)
    """Plugin -> node -> normalized score (before weight), with ``score``."""


@attrs.define(eq=False, slots=True)
class _Hint:
    """Opportunistic batching for one attempt: the pod's signature and the node hinted."""

    batch: OpportunisticBatch | None = None
    """The profile's OpportunisticBatch (None: batching is off for this attempt)."""
    signature: PodSignature | None = None
    node: str | None = None


_NO_HINT = _Hint()


@attrs.define(eq=False, slots=True)
class _Feasible:
    """The nodes that passed Filter (and the extenders), with their NodeTable rows when
    the batch path found them; ``first``: the nominated or hinted node, tried alone."""

    nodes: Sequence[NodeInfo]
    hint: _Hint
    rows: IntArray | None = None
    first: bool = False
    row_key: Hashable | None = None
    """The pod's key for the kept rows (None: nothing is kept for it)."""


NO_NODES = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("no nodes available to schedule pods",))


class SchedulingAlgorithm:
    """Finds the node for a pod (``schedule_pod``); what-if evaluations (``evaluate``)."""

    def __init__(self, state: SchedulerState) -> None:
        self.state = state

    async def schedule_pod(
        self, fw: Framework, state: CycleState, pod: Pod, attempt: Attempt
    ) -> str | FitError | Status:
        """The node for ``pod``, a FitError (no node fits), or a failing Status.

        # schedule_one.go schedulePod
        """
        feasible = await self.find_nodes_that_fit(fw, state, pod, attempt)
        if not isinstance(feasible, _Feasible):
            return feasible
        hint = feasible.hint
        if feasible.first or len(feasible.nodes) == 1 or not fw.has_score_plugins:
            # Without Score plugins Filter stopped at the first feasible node.
            choice = feasible.nodes[0].name
            self._remember(hint, choice, None)
            attempt.selected(choice)
            return choice
        scores = await self.prioritize_nodes(fw, state, pod, feasible, attempt)
        if isinstance(scores, Status):
            return scores
        best = self.select_host(feasible.nodes, scores.total)
        # Only a ranking the batch keeps draws tie-breaking keys (see rank_others).
        keeps = hint.signature is not None and hint.node != best
        ranked = self.rank_others(feasible.nodes, scores.total, best) if keeps else None
        self._remember(hint, best, ranked)
        attempt.scored(scores, state)
        attempt.selected(best)
        return best

    async def find_nodes_that_fit(
        self, fw: Framework, state: CycleState, pod: Pod, attempt: Attempt
    ) -> _Feasible | FitError | Status:
        """PreFilter, the first node alone, then Filter and the extenders' filter.

        # schedule_one.go findNodesThatFitPod
        """
        all_nodes = self.state.snapshot.list()
        pre_result, status, rejectors = await fw.run_pre_filter(state, pod, all_nodes)
        attempt.pre_filtered(status)
        if not status.is_success:
            if not status.is_rejected:
                return status
            # Every node shares PreFilter's status, so that preemption handles them alike.
            return FitError(
                num_all_nodes=len(all_nodes),
                statuses=NodeToStatus(status),
                unschedulable_plugins=rejectors,
                pre_filter_message=status.message,
            )
        # A nominated node (set by preemption) is likely the only one that fits; a hinted
        # node is the previous equal pod's runner-up. Either is tried alone first.
        hint = await self._hint(fw, state, pod)
        statuses = NodeToStatus()
        nominated = pod.status.nominated_node_name
        first = nominated or hint.node
        if first:
            passed = await self._evaluate_first(fw, state, pod, first, statuses)
            if passed is not None:
                if isinstance(passed, Status):
                    return passed
                attempt.tried_first(first, hinted=not nominated)
                return _Feasible([passed], hint=hint, first=True)
        nodes = self._narrowed(all_nodes, pre_result, rejectors, statuses)
        row_key = fw.row_key(pod) if fw.use_row_cache else None
        outcome = await self.find_nodes_that_pass_filters(fw, state, pod, nodes, row_key, attempt)
        statuses.update(outcome.statuses)
        if outcome.error is not None:
            return outcome.error
        feasible, rows = outcome.feasible, outcome.rows
        if self.state.extenders and feasible:
            kept = await filter_by_extenders(self.state.extenders, pod, feasible, statuses)
            if isinstance(kept, Status):
                return kept
            if len(kept) != len(feasible):
                feasible, rows = kept, None
            attempt.extenders_filtered(statuses.items())
        if not feasible:
            return FitError(
                num_all_nodes=len(all_nodes),
                statuses=statuses,
                unschedulable_plugins=outcome.unschedulable_plugins | rejectors,
            )
        return _Feasible(feasible, hint=hint, rows=rows, row_key=row_key)

    async def _evaluate_first(
        self, fw: Framework, state: CycleState, pod: Pod, name: str, statuses: NodeToStatus
    ) -> NodeInfo | Status | None:
        """The node ``name`` if it passes Filter (and the extenders, whose verdict joins
        ``statuses``), an error Status, or None (it does not fit, or is gone).

        # schedule_one.go evaluateNominatedNode
        """
        info = self.state.snapshot.get(name)
        if info is None:
            return None
        outcome = await fw.find_feasible(
            state, pod, [info], start=0, limit=1, nominated_for=self._nominated_for()
        )
        if outcome.error is not None:
            return outcome.error
        if not outcome.feasible:
            return None
        extenders = self.state.extenders
        if extenders:
            passed = await filter_by_extenders(extenders, pod, outcome.feasible, statuses)
            if isinstance(passed, Status):
                return passed
            if not passed:
                return None
        return info

    @staticmethod
    def _narrowed(
        all_nodes: Sequence[NodeInfo],
        pre_result: PreFilterResult | None,
        rejectors: set[str],
        statuses: NodeToStatus,
    ) -> Sequence[NodeInfo]:
        """The nodes PreFilter left to evaluate; the nodes it left out are
        UnschedulableAndUnresolvable in ``statuses``."""
        if pre_result is None or pre_result.node_names is None:
            return all_nodes
        names = pre_result.node_names
        message = f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(rejectors))}]"
        statuses.set_absent(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (message,)))
        return [i for i in all_nodes if i.name in names]

    async def find_nodes_that_pass_filters(
        self,
        fw: Framework,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        row_key: Hashable | None,
        attempt: Attempt,
    ) -> FilterOutcome:
        """Filter from where the last cycle stopped, until enough nodes are feasible.

        # schedule_one.go findNodesThatPassFilters, numFeasibleNodesToFind
        """
        st = self.state
        limit = len(nodes)
        if nodes:
            percentage = fw.percentage_of_nodes_to_score
            if percentage is None:
                percentage = st.config.percentage_of_nodes_to_score
            limit = (
                num_feasible_nodes_to_find(percentage, len(nodes)) if fw.has_score_plugins else 1
            )
        has_nominated = st.queue.has_nominated_pods()
        outcome = await fw.find_feasible(
            state,
            pod,
            nodes,
            start=st.next_start_node_index % len(nodes) if nodes else 0,
            limit=limit,
            nominated_for=st.queue.nominated_pods_for_node if has_nominated else None,
            nominated_nodes=st.queue.nominated_node_names() if has_nominated else (),
            table=st.snapshot.table,
            need_statuses=attempt.report is not None,
            row_key=row_key,
        )
        attempt.filtered(outcome)
        all_nodes = len(st.snapshot)
        if all_nodes:
            st.next_start_node_index = (st.next_start_node_index + outcome.processed) % all_nodes
        return outcome

    async def prioritize_nodes(
        self, fw: Framework, state: CycleState, pod: Pod, feasible: _Feasible, attempt: Attempt
    ) -> ScoreOutcome | Status:
        """PreScore, Score (normalized, weighted, summed) and the extenders' priorities.

        # schedule_one.go prioritizeNodes
        """
        nodes = feasible.nodes
        status = await fw.run_pre_score(state, pod, nodes)
        attempt.point("PreScore", status)
        if not status.is_success:
            return status
        scores = await fw.run_score(
            state,
            pod,
            nodes,
            table=self.state.snapshot.table,
            rows=feasible.rows,
            row_key=feasible.row_key,
            plugin_scores=attempt.report is not None,
        )
        if scores.error is not None:
            return scores.error
        if self.state.extenders:
            added = await prioritize_by_extenders(self.state.extenders, pod, nodes)
            if added:
                extra = np.fromiter((added.get(i.name, 0) for i in nodes), np.int64, len(nodes))
                scores.total = scores.total + extra
        return scores

    def select_host(self, feasible: Sequence[NodeInfo], totals: IntArray) -> str:
        """The highest total; ties broken uniformly at random (seedable), as upstream's
        reservoir sampling over the top-scored nodes does. # schedule_one.go selectHost"""
        ties = (totals == np.maximum.reduce(totals)).nonzero()[0]  # max() minus its wrapper
        pick = 0 if len(ties) == 1 else self.state.rng.randrange(len(ties))
        return feasible[int(ties[pick])].name

    def rank_others(
        self, feasible: Sequence[NodeInfo], totals: IntArray, best: str
    ) -> Callable[[], list[str]]:
        """What builds the feasible nodes but ``best``, highest total first, ties in random
        order. The tie-breaking keys are drawn now, so the random stream is the same
        whether or not the ranking is ever built."""
        st = self.state
        if st.tie_rng is None:
            st.tie_rng = np.random.default_rng(st.rng.getrandbits(64))
        keys = st.tie_rng.random(len(totals))

        def ranked() -> list[str]:
            order = np.lexsort((keys, -totals))
            names = [feasible[i].name for i in order.tolist()]
            names.remove(best)
            return names

        return ranked

    # ---- opportunistic batching -----------------------------------------------------

    async def _hint(self, fw: Framework, state: CycleState, pod: Pod) -> _Hint:
        """The pod's signature and the node to try first (upstream GetNodeHint), when the
        profile batches. Extenders judge nodes the signature cannot see: no hints then."""
        st = self.state
        batch = fw.batch
        if batch is None or not st.opportunistic_batching or st.extenders:
            return _NO_HINT
        signature = batch.sign(pod)
        node = await batch.node_hint(
            signature,
            st.cycle,
            st.now(),
            st.snapshot.get,
            functools.partial(fw.run_filter, state, pod),
        )
        return _Hint(batch, signature, node)

    def _remember(self, hint: _Hint, chosen: str, ranked: Callable[[], list[str]] | None) -> None:
        """Keep the attempt's result for the next equal pod (StoreScheduleResults)."""
        batch = hint.batch
        if batch is not None:
            st = self.state
            batch.store(hint.signature, hint.node, chosen, ranked, st.cycle, st.now())

    def _nominated_for(self) -> Callable[[str], Sequence[PodInfo]] | None:
        queue = self.state.queue
        return queue.nominated_pods_for_node if queue.has_nominated_pods() else None

    # ---- what-if ----------------------------------------------------------------------

    async def evaluate(
        self, pod: Pod, node_names: Sequence[str] | None = None, *, score: bool = False
    ) -> Evaluation:
        """What the pod's profile says of these nodes (all when None), without assuming or
        binding anything: PreFilter and Filter on every node, and with ``score`` PreScore
        and Score on the feasible ones. For ``ksched extender serve`` and what-if tools."""
        st = self.state
        fw = st.framework_for(pod)
        if fw is None:
            return Evaluation(
                error=Status(Code.ERROR, (f"no profile {pod.spec.scheduler_name!r}",))
            )
        st.cache.update_snapshot(st.snapshot)
        listed = st.snapshot.list() if node_names is None else map(st.snapshot.get, node_names)
        infos = [info for info in listed if info is not None]
        state = CycleState()
        _, status, _ = await fw.run_pre_filter(state, pod, infos)
        if not status.is_success:
            if not status.is_rejected:
                return Evaluation(error=status)
            return Evaluation(statuses=NodeToStatus(status))
        outcome = await fw.find_feasible(
            state, pod, infos, start=0, limit=len(infos), need_statuses=True
        )
        if outcome.error is not None:
            return Evaluation(error=outcome.error)
        statuses = NodeToStatus()
        statuses.update(outcome.statuses)
        feasible = [info.name for info in outcome.feasible]
        if not score or not feasible or not fw.has_score_plugins:
            return Evaluation(feasible=feasible, statuses=statuses)
        return await self._evaluate_scores(fw, state, pod, outcome, statuses)

    async def _evaluate_scores(
        self,
        fw: Framework,
        state: CycleState,
        pod: Pod,
        outcome: FilterOutcome,
        statuses: NodeToStatus,
    ) -> Evaluation:
        feasible = [info.name for info in outcome.feasible]
        status = await fw.run_pre_score(state, pod, outcome.feasible)
        if not status.is_success:
            return Evaluation(feasible=feasible, statuses=statuses, error=status)
        scores = await fw.run_score(state, pod, outcome.feasible)
        if scores.error is not None:
            return Evaluation(feasible=feasible, statuses=statuses, error=scores.error)
        weights = sum(w for name, w in fw.weights.items() if name in scores.plugin_scores)
        return Evaluation(
            feasible=feasible,
            statuses=statuses,
            totals=scores.totals,
            max_total=100 * weights,
            scores=scores.plugin_scores,
        )
