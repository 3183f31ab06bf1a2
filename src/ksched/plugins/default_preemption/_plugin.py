"""DefaultPreemption: when no node fits, evict lower-priority pods to make room.

# pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go
# pkg/scheduler/framework/preemption/preemption.go (Evaluator.Preempt, findCandidates,
# DryRunPreemption, callExtenders, SelectCandidate, pickOneNodeForPreemption, prepareCandidate)
# pkg/scheduler/util/utils.go (MoreImportantPod, GetEarliestPodStartTime)

Preemption runs synchronously in the PostFilter (upstream with SchedulerAsyncPreemption
off): victims are evicted before the pod is nominated to the chosen node.

When the profile runs the built-in NodeResourcesFit Filter, dry runs take shortcuts
that change no outcome: a node where the pod cannot fit by resources even with every
lower-priority pod gone is passed over (it cannot be a candidate), and a pod added back
while the Fit comparisons reject the node stays a victim without a Filter run. When,
besides, every other Filter that runs for the pod reads only the Node object (as
NodeUnschedulable, NodeName, TaintToleration and NodeAffinity do) and no PreFilter
extension runs, a node's victims are decided by the Fit comparisons alone: no clone of
the node and no Filter run but one call of each node-only Filter. Those outcomes are kept
between preemptors (``_visit_cache``), and by table row (``_visit_rows``) so that a visit
over thousands of unchanged nodes, and the pick among its candidates, are array passes.

The evaluator's steps stay in one module (~640 lines) in upstream's order, as
preemption.go keeps them: Preempt, findCandidates, DryRunPreemption, SelectCandidate,
prepareCandidate share the dry-run caches kept on the plugin.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from ...api import Pod, PodDisruptionBudget
from ...framework import (
    ClusterEventWithHint,
    Code,
    CycleState,
    Handle,
    NodeInfo,
    NodeToStatus,
    PodInfo,
    PostFilterResult,
    Status,
)
from ...framework.batch import NodeTable, run_chunked
from ._args import NAME, DefaultPreemptionArgs
from ._candidates import (
    Candidate,
    Victims,
    by_importance,
    pick_one_node_for_preemption,
    rank_of,
)
from ._dry_run import (
    MSG_NO_VICTIMS,
    DryRunContext,
    FitBound,
    StepError,
    VictimsEntry,
    aggregate_errors,
    dry_run_context,
    fit_error_message,
    fit_outcome,
    node_checks_pass,
    order_reads_now,
)
from ._extenders import call_extenders
from ._pdb import disruptions_allowed, filter_pods_with_pdb_violation
from ._visit_cache import Outcome, VisitCache, preemptor_key
from ._visit_rows import (
    CANDIDATE,
    FAILED,
    UNKNOWN,
    RowPlane,
    VisitRows,
    kind_of,
    log_of,
    pick_best,
)

__all__ = ["DefaultPreemption"]


PREEMPT_NEVER = "Never"
MSG_POLICY_NEVER = "not eligible due to preemptionPolicy=Never."
MSG_TERMINATING_ON_NOMINATED = "not eligible due to a terminating pod on the nominated node."
MSG_NOT_HELPFUL = "Preemption is not helpful for scheduling"
MSG_NO_CANDIDATE = "no candidate node for preemption"
MSG_NO_NODES = "no nodes available"
MSG_PREFIX = "preemption: "
WAITING_POD_REJECT_MSG = "preempted"

_REMAINING_CACHE_LIMIT = 50_000


class _EveryName(Collection[str]):
    """Holds every string: nodes whose nominated pods must be asked about one by one."""

    def __contains__(self, item: object) -> bool:
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


_EVERY_NAME = _EveryName()

_Ranks = tuple[
    np.ndarray[tuple[int], np.dtype[np.int64]],
    np.ndarray[tuple[int], np.dtype[np.int64]],
    np.ndarray[tuple[int], np.dtype[np.int64]],
    np.ndarray[tuple[int], np.dtype[np.float64]],
    np.ndarray[tuple[int], np.dtype[np.bool_]],
]
"""pickOneNodeForPreemption's criteria per candidate (no PDB violations): highest victim
priority, sum of priorities, victims (each negated), earliest start, one not started."""


def _distinct_codes(statuses: NodeToStatus) -> set[Code]:
    """The codes of the listed nodes' statuses, read once per distinct object."""
    return {s.code for s, _ in statuses.counts()}


# ---- the plugin ------------------------------------------------------------------------


class DefaultPreemption:
    """The default PostFilter: find the cheapest node to preempt on, evict, nominate."""

    name = NAME
    arithmetic_dry_runs = True
    """Decide victims by the Fit comparisons when the profile allows (see the module
    docstring); False runs every dry run through the Filter plugins."""
    fast_nominated_lookup = True
    """Ask the nominator only about nodes it names (False: about every node visited)."""
    row_visits = True
    """Read the kept arithmetic outcomes by table row in array passes (see
    ``_visit_rows``); False checks them node by node."""

    def __init__(self, args: DefaultPreemptionArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle
        self._remaining_cache: dict[
            tuple[str, int, tuple[tuple[str, int], ...]], tuple[NodeInfo, int, tuple[int, ...]]
        ] = {}
        self._victims_cache: dict[str, VictimsEntry] = {}
        self._visit_cache = VisitCache()
        self._visit_rows = VisitRows()
        self._pick: tuple[list[Candidate], _Ranks] | None = None
        self._victims = 0

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> DefaultPreemption:
        return cls(DefaultPreemptionArgs.from_dict(args), handle)

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # Upstream registers events only for async preemption, which ksched does not run.
        return []

    # -- PostFilter

    async def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        self._victims = 0
        try:
            result, status = await self.preempt(state, pod, statuses)
        finally:
            metrics = self.handle.metrics
            if metrics is not None:  # default_preemption.go PostFilter; preemption.go Preempt
                metrics.preemption(self._victims)
        if status.message:
            return result, Status(status.code, (MSG_PREFIX + status.message,))
        return result, None if status.is_success else status

    async def preempt(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        """Evaluator.Preempt: eligibility, candidates, the best one, its preparation."""
        handle = self.handle
        current = handle.cluster.get_pod(pod.key)
        if current is None:
            return None, Status(Code.ERROR, (f'pods "{pod.name}" not found',))
        pod = current
        nominated_name = pod.status.nominated_node_name
        nominated_status = statuses.get(nominated_name) if nominated_name else None
        eligible, reason = self.pod_eligible_to_preempt_others(pod, nominated_status)
        if not eligible:
            return None, Status(Code.UNSCHEDULABLE, (reason,))
        all_nodes = handle.snapshot.list()
        candidates, node_statuses, error = await self.find_candidates(
            state, all_nodes, pod, statuses
        )
        if error is not None and not candidates:
            return None, Status(Code.ERROR, (error,))
        if not candidates:
            assert node_statuses is not None
            node_statuses.set_absent(
                Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (MSG_NOT_HELPFUL,))
            )
            message = fit_error_message(len(all_nodes), node_statuses)
            return PostFilterResult(nominated_node_name=""), Status(Code.UNSCHEDULABLE, (message,))
        if handle.extenders:  # callExtenders: those with a preemptVerb trim the candidates
            candidates, failed = await call_extenders(
                handle.extenders, pod, candidates, handle.snapshot
            )
            if failed is not None:
                return None, failed
        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, Status(Code.UNSCHEDULABLE, (MSG_NO_CANDIDATE,))
        self._victims = len(best.victims.pods)
        status = await self.prepare_candidate(best, pod)
        if not status.is_success:
            return None, status
        return PostFilterResult(nominated_node_name=best.name), Status(Code.SUCCESS)

    # -- eligibility

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: Status | None
    ) -> tuple[bool, str]:
        """Never-policy pods may not preempt; nor may a pod whose nominated node still
        has lower-priority pods terminating (its earlier victims), unless Filter now
        finds that node unresolvable."""
        if pod.spec.preemption_policy == PREEMPT_NEVER:
            return False, MSG_POLICY_NEVER
        nominated = pod.status.nominated_node_name
        if nominated:
            if (
                nominated_node_status is not None
                and nominated_node_status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            ):
                return True, ""
            info = self.handle.snapshot.get(nominated)
            if info is not None:
                for p in info.pods:
                    if self._preemption_allowed(p, pod) and p.pod.is_terminating:
                        return False, MSG_TERMINATING_ON_NOMINATED
        return True, ""

    @staticmethod
    def _preemption_allowed(victim: PodInfo, preemptor: Pod) -> bool:
        return victim.pod.priority < preemptor.priority

    # -- candidates

    def calculate_num_candidates(self, num_nodes: int) -> int:
        n = num_nodes * self.args.min_candidate_nodes_percentage // 100
        n = max(n, self.args.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return self.handle.rng.randrange(num_nodes), self.calculate_num_candidates(num_nodes)

    async def find_candidates(
        self,
        state: CycleState,
        all_nodes: Sequence[NodeInfo],
        pod: Pod,
        statuses: NodeToStatus,
    ) -> tuple[list[Candidate], NodeToStatus | None, str | None]:
        """Dry-run preemption on the nodes Filter found merely Unschedulable."""
        if not all_nodes:
            return [], None, MSG_NO_NODES
        unschedulable = Code.UNSCHEDULABLE
        codes = _distinct_codes(statuses)
        if codes == {unschedulable} and (
            len(statuses) == len(all_nodes) or statuses.absent.code is unschedulable
        ):
            potential: Sequence[NodeInfo] = all_nodes  # every node merely Unschedulable
        elif statuses.absent.code is unschedulable:
            potential = [i for i in all_nodes if statuses.get(i.name).code is unschedulable]
        else:
            names = {name for name, status in statuses.items() if status.code is unschedulable}
            potential = [i for i in all_nodes if i.name in names]
        if not potential:
            return [], NodeToStatus(), None
        pdbs = self._pdbs()
        offset, num_candidates = self.get_offset_and_num_candidates(len(potential))
        return await self.dry_run_preemption(state, pod, potential, pdbs, offset, num_candidates)

    def _nominated_names(self) -> Collection[str]:
        """A live view of the nodes that have nominated pods, when the handle can name
        them; otherwise every node's name may have some (an object that holds them all)."""
        names_of = getattr(self.handle, "nominated_node_names", None)
        if names_of is None or not self.fast_nominated_lookup:
            return _EVERY_NAME
        names: Collection[str] = names_of()
        return names

    def _nominated_lookup(self) -> Callable[[str], Sequence[PodInfo]]:
        """``handle.nominated_pods_for_node``, asked only about nodes that have nominated
        pods when the handle can name them (most nodes have none)."""
        for_node = self.handle.nominated_pods_for_node
        names = self._nominated_names()  # a live view: it follows nominations meanwhile
        if names is _EVERY_NAME:
            return for_node

        def lookup(name: str) -> Sequence[PodInfo]:
            return for_node(name) if name in names else ()

        return lookup

    def _pdbs(self) -> list[tuple[PodDisruptionBudget, int]]:
        cluster = self.handle.cluster
        pdbs: list[PodDisruptionBudget] = list(cluster.objects("PodDisruptionBudget"))
        if not pdbs:
            return []
        needs_pods = any(p.disruptions_allowed is None for p in pdbs)
        pods: list[Pod] = list(cluster.pods()) if needs_pods else []
        return [(pdb, disruptions_allowed(pdb, pods)) for pdb in pdbs]

    async def dry_run_preemption(
        self,
        state: CycleState,
        pod: Pod,
        potential_nodes: Sequence[NodeInfo],
        pdbs: Sequence[tuple[PodDisruptionBudget, int]],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate], NodeToStatus, str | None]:
        """Try the nodes from ``offset`` (wrapping) until enough candidates were found:
        at least ``num_candidates`` in all, at least one without a PDB violation.
        Candidates without violations come first.

        A node where the pod cannot fit by resources even with every lower-priority pod
        gone is passed over without a dry run (it cannot be a candidate). When candidates
        were found, the statuses leave such nodes out (callers read statuses only when
        there is none); when none was, they are dry-run after all, so statuses and errors
        are exactly what dry-running every node gives.
        """
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        # Failed nodes in visiting order; a None status marks a node passed over.
        failed: list[tuple[NodeInfo, Status | None]] = []
        ctx = self._context(state)
        bound = ctx.bound
        nominated_for = self._nominated_lookup()
        priority = pod.priority
        n = len(potential_nodes)

        async def visit(i: int) -> tuple[Candidate | None, Status | None]:
            """Dry-run the ``i``-th node from ``offset``; (None, None): passed over."""
            node = potential_nodes[(offset + i) % n]
            if bound is not None:
                base = bound.with_nominated(
                    pod, self._remaining(bound, node, priority), nominated_for(node.name)
                )
                if bound.lacks_room_at(node, base):
                    return None, None
                if ctx.node_checks is not None:
                    outcome = self._dry_run_by_fit(
                        state, pod, node, pdbs, bound, ctx.node_checks, base
                    )
                    if outcome is not None:
                        return outcome
            return await self._dry_run_node(state, pod, node, pdbs, ctx)

        # The arithmetic path, inline: outcomes kept per node between preemptors.
        by_fit = bound is not None and ctx.node_checks is not None and not ctx.waits
        cache = self._visit_cache
        key = (
            cache.intern(preemptor_key(pod, bound.request, bound.scalars))
            if bound is not None
            else None
        )
        now = self.handle.now()

        def visit_by_fit(node: NodeInfo) -> tuple[Candidate | None, Status | None] | None:
            """The node's outcome by the Fit comparisons; None: judge it by the Filters."""
            assert bound is not None and ctx.node_checks is not None
            nominated = nominated_for(node.name)
            own = any(p.pod.uid == pod.uid for p in nominated) if nominated else False
            kept = cache.get(node, nominated, own, key, pdbs, now)
            if kept is not None:
                return kept
            base = bound.with_nominated(pod, self._remaining(bound, node, priority), nominated)
            outcome: tuple[Candidate | None, Status | None] | None
            if bound.lacks_room_at(node, base):
                outcome = None, None
            else:
                outcome = self._dry_run_by_fit(state, pod, node, pdbs, bound, ctx.node_checks, base)
                if outcome is None:
                    return None
            lower = (p for p in node.pods if p.pod.priority < priority)
            reads_now = outcome != (None, None) and order_reads_now(lower)
            cache.put(node, nominated, own, key, pdbs, now if reads_now else None, outcome)
            return outcome

        entries = cache.entries
        nominated_names = self._nominated_names()
        plane: RowPlane | None = None
        table: NodeTable | None = None
        if by_fit and self.row_visits and not pdbs and num_candidates > 0:
            # Every row of the snapshot's table is a potential node (the common case).
            table = getattr(getattr(self.handle, "snapshot", None), "table", None)
            if (
                table is not None
                and potential_nodes is table.infos
                and nominated_names is not _EVERY_NAME
            ):
                plane = self._visit_rows.plane(key, table)
        self._pick = None
        if plane is not None:
            assert table is not None
            candidates, failed = await self._visit_by_rows(
                state, pod, table, plane, offset, num_candidates, nominated_names, visit_by_fit, ctx
            )
        else:
            visited = await self._visit_in_parallel(visit, n, num_candidates) if ctx.waits else None
            for i in range(n):
                node = potential_nodes[(offset + i) % n]
                candidate: Candidate | None
                status: Status | None
                if by_fit:
                    found: tuple[Candidate | None, Status | None] | None
                    # The common case inline: no budgets, nothing nominated to the node, an
                    # outcome kept for this preemptor's key on this very NodeInfo.
                    kept = None if pdbs or node.name in nominated_names else entries.get(node.name)
                    if (
                        kept is not None
                        and kept.key is key
                        and kept.node is node
                        and kept.generation == node.generation
                        and kept.node_object is node.node
                        and not kept.nominated
                        and not kept.pdbs
                        and (kept.now is None or kept.now == now)
                    ):
                        found = kept.outcome
                    else:
                        found = visit_by_fit(node)
                    if found is None:
                        candidate, status = await self._dry_run_node(state, pod, node, pdbs, ctx)
                    else:
                        candidate, status = found
                elif visited is None:
                    candidate, status = await visit(i)
                elif i in visited:
                    candidate, status = visited[i]
                else:
                    break  # the fan-out stopped: enough candidates came before this node
                if candidate is None and status is None:
                    failed.append((node, None))
                    continue
                if candidate is None:
                    failed.append((node, status))
                    continue
                bucket = non_violating if candidate.victims.num_pdb_violations == 0 else violating
                if len(bucket) < num_candidates:
                    bucket.append(candidate)
                if non_violating and len(non_violating) + len(violating) >= num_candidates:
                    break
            candidates = non_violating + violating
        node_statuses = NodeToStatus()
        errors: list[str] = []
        for node, maybe_status in failed:
            if maybe_status is None:
                if candidates:
                    continue
                candidate, maybe_status = await self._dry_run_node(state, pod, node, pdbs, ctx)
                assert candidate is None, f"node {node.name} was passed over but fits"
            if maybe_status.code is Code.ERROR:
                errors.append(maybe_status.message)
            node_statuses.set(node.name, maybe_status)
        error = aggregate_errors(errors) if errors else None
        return candidates, node_statuses, error

    async def _visit_by_rows(
        self,
        state: CycleState,
        pod: Pod,
        table: NodeTable,
        plane: RowPlane,
        offset: int,
        num_candidates: int,
        nominated_names: Collection[str],
        visit_by_fit: Callable[[NodeInfo], Outcome | None],
        ctx: DryRunContext,
    ) -> tuple[list[Candidate], list[tuple[NodeInfo, Status | None]]]:
        """The visit of :meth:`dry_run_preemption` over every table row from ``offset``
        (no budgets): outcomes kept in ``plane`` are read as arrays, the other nodes are
        visited in order until ``num_candidates`` candidates precede them. Returns the
        candidates and the failed nodes up to the last candidate needed, as the
        node-by-node visit gives them, except that the nodes passed over are listed
        (with None) only when there is no candidate: ``dry_run_preemption`` skips them
        otherwise."""
        nodes = table.infos
        n = len(nodes)
        index = table.index
        log = log_of(nominated_names)
        own: str | None = None
        if log is not None:
            # Rows whose nominated pods changed since are forgotten; the node the pod is
            # nominated to itself is visited (its own nomination changes the outcome).
            changed = log.changed_since(plane.seen) if plane.log is log else None
            if changed is None:
                plane.forget_all()
            else:
                plane.forget(changed, index)
            plane.log, plane.seen = log, log.cursor
            own = log.node_of(pod.uid)
        elif plane.log is not None:
            plane.forget_all()
            plane.log = None
        bound, node_checks = ctx.bound, ctx.node_checks
        assert bound is not None and node_checks is not None
        now = self.handle.now
        # Rows the visit must judge whatever the plane holds: the pod's own nominated
        # node, or (without a log) every node holding nominated pods.
        forced: list[int] = []
        if log is not None:
            row_of_own = index.get(own) if own is not None else None
            if row_of_own is not None:
                forced.append(row_of_own)
        elif nominated_names:
            forced = [row for row in map(index.get, nominated_names) if row is not None]
        entries = self._visit_cache.entries
        # A window of rows from the offset first (candidates are usually dense), widened
        # while it holds too few: the same visit as over the whole table, nodes already
        # judged in a narrower window are not judged again.
        window = min(n, 2 * num_candidates + 1024)
        judged: dict[int, Outcome] = {}
        while True:
            order = np.arange(offset, offset + window, dtype=np.int64)
            order[order >= n] -= n
            kind_at = plane.kinds_from(offset, window)
            for row in forced:
                pos = (row - offset) % n
                if pos < window:
                    kind_at[pos] = UNKNOWN
            known_before = np.cumsum(kind_at == CANDIDATE)
            visited: dict[int, Outcome] = {}
            more = 0  # candidates among the nodes visited so far
            for pos in np.flatnonzero(kind_at == UNKNOWN).tolist():
                if int(known_before[pos]) + more >= num_candidates:
                    break  # enough candidates come before this node
                row = int(order[pos])
                found = judged.get(row)
                if found is None:
                    node = nodes[row]
                    if node.name not in nominated_names and node.name != own:
                        # Nothing nominated here: the outcome in one pass, kept unless
                        # the clock decided the victims' order.
                        found, reads_now = fit_outcome(state, pod, node, bound, node_checks, now)
                        if found is not None and not reads_now:
                            plane.store(row, node.generation, found)
                    else:
                        found = visit_by_fit(node)
                        if found is not None and node.name != own and log is not None:
                            entry = entries.get(node.name)
                            if entry is not None and entry.outcome is found and entry.now is None:
                                plane.store(row, node.generation, found)
                    if found is None:
                        found = await self._dry_run_node(state, pod, node, (), ctx)
                    judged[row] = found
                outcome = found
                visited[pos] = outcome
                kind = kind_of(outcome)
                kind_at[pos] = kind
                more += kind == CANDIDATE
            is_candidate = kind_at == CANDIDATE
            cumulative = np.cumsum(is_candidate)
            if window == n or (window and int(cumulative[-1]) >= num_candidates):
                break
            window = min(n, 4 * window)
        end = window
        if window and int(cumulative[-1]) >= num_candidates:
            end = int(np.searchsorted(cumulative, num_candidates)) + 1
        at = np.flatnonzero(is_candidate[:end])
        rows = order[at]
        # Kept candidates by row; the nodes visited now put in at their positions.
        candidates: list[Candidate] = list(map(plane.candidates.__getitem__, rows.tolist()))
        failed: list[tuple[NodeInfo, Status | None]] = []
        # With candidates in hand the nodes passed over are left out (nobody reads them):
        # late in a run of preemptors they are nearly the whole table, every time.
        rest = np.flatnonzero(kind_at[:end] == FAILED if len(at) else ~is_candidate[:end])
        for pos, row in zip(rest.tolist(), order[rest].tolist(), strict=True):
            found = visited.get(pos)
            if found is None:
                found = plane.outcomes[row]
                assert found is not None
            failed.append((nodes[row], found[1]))
        fresh: list[tuple[int, Candidate]] = []
        for pos, outcome in visited.items():
            if outcome[0] is not None and pos < end:
                j = int(np.searchsorted(at, pos))
                candidates[j] = outcome[0]
                fresh.append((j, outcome[0]))
        if len(candidates) > 1:
            ranks = (
                plane.top[rows],
                plane.total[rows],
                plane.count[rows],
                plane.earliest[rows],
                plane.unstarted[rows],
            )
            for j, candidate in fresh:  # maybe not kept in the plane
                _, top, total, count, earliest, unstarted = rank_of(candidate.victims)
                ranks[0][j], ranks[1][j], ranks[2][j] = top, total, count
                ranks[3][j], ranks[4][j] = earliest, unstarted
            self._pick = candidates, ranks
        return candidates, failed

    async def _visit_in_parallel(
        self,
        visit: Callable[[int], Awaitable[tuple[Candidate | None, Status | None]]],
        n: int,
        num_candidates: int,
    ) -> dict[int, tuple[Candidate | None, Status | None]]:
        """Dry runs across nodes at once (at most ``parallelism``), for Filters that wait.

        Nodes start in order and no new one starts once enough candidates are in hand, so
        replaying the results in order gives what visiting one by one gives.
        """
        results: dict[int, tuple[Candidate | None, Status | None]] = {}
        found = [0, 0]  # candidates without / with PDB violations

        async def work(i: int) -> bool:
            results[i] = outcome = await visit(i)
            candidate = outcome[0]
            if candidate is not None:
                found[candidate.victims.num_pdb_violations != 0] += 1
            return not (found[0] and found[0] + found[1] >= num_candidates)

        await run_chunked(n, self.handle.parallelism, work)
        return results

    async def _dry_run_node(
        self,
        state: CycleState,
        pod: Pod,
        node: NodeInfo,
        pdbs: Sequence[tuple[PodDisruptionBudget, int]],
        ctx: DryRunContext,
    ) -> tuple[Candidate | None, Status]:
        """Victims on (a clone of) one node: the candidate, or the failure's status.

        Only PreFilter extensions write to the state in a dry run (Filter reads it, as
        when it runs across nodes in the scheduling cycle), so without them the state
        needs no copy.
        """
        victims, num_violations, status = await self._select_victims(
            state.clone() if ctx.extensions else state, pod, node.clone(), pdbs, ctx
        )
        if status.is_success and victims:
            return Candidate(node.name, Victims(tuple(victims), num_violations)), status
        if status.is_success:
            status = Status(
                Code.ERROR, (f'expected at least one victim pod on node "{node.name}"',)
            )
        return None, status

    def _dry_run_by_fit(
        self,
        state: CycleState,
        pod: Pod,
        node: NodeInfo,
        pdbs: Sequence[tuple[PodDisruptionBudget, int]],
        bound: FitBound,
        node_checks: Sequence[Callable[[CycleState, Pod, NodeInfo], Status | None]],
        base: tuple[int, ...],
    ) -> tuple[Candidate | None, Status] | None:
        """:meth:`_dry_run_node` for a node the Fit filter accepts once every
        lower-priority pod is gone (``base``: the amounts the first Filter pass then
        sees), when the other Filters read only the Node: each of those runs once (on
        the snapshot's node: it cannot tell the difference) and the reprieves are Fit
        comparisons. None when a node-only Filter rejects or fails: the dry run then
        takes the Filter plugins' path for that node's status.

        The victims are kept per node (see :class:`VictimsEntry`) while nothing they
        depend on changes, for the next preemptor alike.
        """
        priority = pod.priority
        entry = self._victims_cache.get(node.name)
        key = (priority, bound.request, bound.scalars, base, tuple(a for _, a in pdbs))
        if not (
            entry is not None
            and entry.node is node
            and entry.generation == node.generation
            and entry.node_object is node.node
            and entry.key == key
            and len(entry.pdbs) == len(pdbs)
            and all(a is b for a, (b, _) in zip(entry.pdbs, pdbs, strict=True))
            and (entry.now is None or entry.now == self.handle.now())
        ):
            entry = None
            potential = [p for p in node.pods if p.pod.priority < priority]
            if not potential:
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (MSG_NO_VICTIMS,))
        if not node_checks_pass(state, pod, node, node_checks):
            return None
        if entry is not None:
            return entry.outcome
        handle = self.handle
        now = handle.now()
        potential.sort(key=by_importance(now))
        if pdbs:
            violating, non_violating = filter_pods_with_pdb_violation(
                potential, [p for p, _ in pdbs], [a for _, a in pdbs]
            )
            ordered = violating + non_violating
        else:
            violating, non_violating = [], potential
            ordered = potential
        evicted = bound.reprieve(node, base, ordered)
        victims = [info for info, out in zip(ordered, evicted, strict=True) if out]
        outcome: tuple[Candidate | None, Status]
        if not victims:
            outcome = (
                None,
                Status(Code.ERROR, (f'expected at least one victim pod on node "{node.name}"',)),
            )
        else:
            num_violating = sum(evicted[: len(violating)])
            if violating and non_violating:
                victims.sort(key=by_importance(handle.now()))
            victims_of = Victims(tuple(v.pod for v in victims), num_violating)
            outcome = Candidate(node.name, victims_of), Status(Code.SUCCESS)
        if len(self._victims_cache) >= _REMAINING_CACHE_LIMIT:
            self._victims_cache.clear()
        self._victims_cache[node.name] = VictimsEntry(
            node,
            node.generation,
            node.node,
            key,
            tuple(p for p, _ in pdbs),
            now if order_reads_now(potential) else None,
            outcome,
        )
        return outcome

    def _remaining(self, bound: FitBound, node: NodeInfo, priority: int) -> tuple[int, ...]:
        """``bound.remaining(node, priority)``, kept per node while its NodeInfo (the
        snapshot's, replaced when the node changes) and its generation stay the same."""
        key = (node.name, priority, bound.scalars)
        entry = self._remaining_cache.get(key)
        if entry is not None and entry[0] is node and entry[1] == node.generation:
            return entry[2]
        amounts = bound.remaining(node, priority)
        if len(self._remaining_cache) >= _REMAINING_CACHE_LIMIT:
            self._remaining_cache.clear()
        self._remaining_cache[key] = (node, node.generation, amounts)
        return amounts

    def _context(self, state: CycleState) -> DryRunContext:
        """What the profile runs for this pod, read through the handle."""
        return dry_run_context(self.handle, state, arithmetic=self.arithmetic_dry_runs)

    async def select_victims_on_node(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        pdbs: Sequence[tuple[PodDisruptionBudget, int]],
    ) -> tuple[list[Pod], int, Status]:
        """The fewest pods to evict from this node (a clone) for ``pod`` to fit.

        Remove every lower-priority pod; if the pod then fits, add them back one by one
        (budget-violating ones first, each group most important first) and keep out
        only those without which it no longer fits.
        """
        return await self._select_victims(state, pod, node_info, pdbs, self._context(state))

    async def _select_victims(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        pdbs: Sequence[tuple[PodDisruptionBudget, int]],
        ctx: DryRunContext,
    ) -> tuple[list[Pod], int, Status]:
        handle = self.handle
        bound, extensions = ctx.bound, ctx.extensions

        def remove(info: PodInfo) -> None:
            node_info.remove_pod(info.pod)
            if extensions:
                status = handle.run_pre_filter_extension_remove_pod(state, pod, info, node_info)
                if not status.is_success:
                    raise StepError(status)

        def add(info: PodInfo) -> None:
            node_info.add_pod(info)
            if extensions:
                status = handle.run_pre_filter_extension_add_pod(state, pod, info, node_info)
                if not status.is_success:
                    raise StepError(status)

        priority = pod.priority
        potential = [p for p in node_info.pods if p.pod.priority < priority]
        try:
            for info in potential:
                remove(info)
        except StepError as exc:
            return [], 0, Status(Code.ERROR, (exc.status.message,))
        if not potential:
            return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (MSG_NO_VICTIMS,))
        status = await handle.run_filter_plugins_with_nominated_pods(state, pod, node_info)
        if not status.is_success:
            return [], 0, status
        potential.sort(key=by_importance(handle.now()))
        if pdbs:
            violating, non_violating = filter_pods_with_pdb_violation(
                potential, [p for p, _ in pdbs], [a for _, a in pdbs]
            )
        else:
            violating, non_violating = [], potential
        victims: list[PodInfo] = []

        async def reprieve(info: PodInfo) -> bool:
            # Only whether the pod fits matters here, and the Filter chain fails when the
            # Fit filter rejects the node: that needs no Filter run. Without extensions,
            # adding a pod without host ports and removing it again leaves the node as
            # it was, so the pair is skipped too.
            if bound is not None and not extensions and not info.host_ports:
                if bound.rejects(node_info, info):
                    victims.append(info)
                    return False
                add(info)
            else:
                add(info)
                if bound is not None and bound.rejects(node_info):
                    remove(info)
                    victims.append(info)
                    return False
            status = await handle.run_filter_plugins_with_nominated_pods(state, pod, node_info)
            if not status.is_success:
                remove(info)
                victims.append(info)
                return False
            return True

        num_violating = 0
        try:
            for info in violating:
                if not await reprieve(info):
                    num_violating += 1
            for info in non_violating:
                await reprieve(info)
        except StepError as exc:
            return [], 0, Status(Code.ERROR, (exc.status.message,))
        if violating and non_violating:
            victims.sort(key=by_importance(handle.now()))
        return [v.pod for v in victims], num_violating, Status(Code.SUCCESS)

    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        """SelectCandidate: the only one, or the one pickOneNodeForPreemption prefers."""
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        picked = self._pick
        if picked is not None and picked[0] is candidates:
            return pick_best(candidates, *picked[1], self.handle.now())
        name = pick_one_node_for_preemption(candidates, self.handle.now())
        for c in candidates:
            if c.name == name:
                return c
        return candidates[0]

    # -- preparation

    async def prepare_victims(self, node_name: str, victims: Sequence[Pod], pod: Pod) -> Status:
        """:meth:`prepare_candidate` for victims chosen elsewhere (a gang's preemption
        plan): evict them for ``pod`` on ``node_name``."""
        return await self.prepare_candidate(Candidate(node_name, Victims(tuple(victims))), pod)

    async def prepare_candidate(self, candidate: Candidate, pod: Pod) -> Status:
        """Evict the victims (a victim held at Permit is rejected instead), then clear
        the nominations of lower-priority pods nominated to the node.

        A failed eviction stops the preparation and comes back as an Error status; the
        preemptor is not nominated and is retried.
        """
        handle = self.handle
        for victim in candidate.victims.pods:
            if victim.is_terminating:
                continue
            if handle.get_waiting_pod(victim.uid) is not None:
                handle.reject_waiting_pod(victim.uid, self.name, WAITING_POD_REJECT_MSG)
            else:
                try:
                    await handle.cluster.evict(victim)
                except LookupError:
                    pass  # already gone: nothing left to do for this victim
                except Exception as exc:
                    return Status(Code.ERROR, (f"evicting pod {victim.key}: {exc}",))
            handle.record_event(
                victim,
                "Preempted",
                f"Preempted by pod {pod.uid} on node {candidate.name}",
                related=pod,
                action="Preempting",
            )
        for info in handle.nominated_pods_for_node(candidate.name):
            nominated = info.pod
            if nominated.uid == pod.uid or nominated.priority >= pod.priority:
                continue
            try:
                await handle.cluster.update_pod_status(
                    nominated, nominated_node_name=None, condition=None
                )
            except Exception:
                continue
        return Status(Code.SUCCESS)
