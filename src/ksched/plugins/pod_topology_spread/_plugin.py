"""PodTopologySpread: spread pods over topology domains (hard: Filter, soft: Score).

# pkg/scheduler/framework/plugins/podtopologyspread/plugin.go
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ...api import Node, Pod
from ...framework import (
    SKIP,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    NodeInfo,
    PodInfo,
    PreFilterResult,
    QueueingHint,
    Status,
)
from ...framework.batch import NodeTable, PodIndex, SignFragment
from ._args import SYSTEM_DEFAULT_CONSTRAINTS, SYSTEM_DEFAULTING, PodTopologySpreadArgs
from ._common import (
    DO_NOT_SCHEDULE,
    HONOR,
    SCHEDULE_ANYWAY,
    CountMemo,
    InvalidSelectorError,
    SpreadConstraint,
    default_selector,
    filter_constraints,
    has_all_keys,
)
from ._filtering import PreFilterState, compute_pre_filter_state
from ._indexed import filter_rows, indexed_pre_filter_state, indexed_pre_score_state, score_rows
from ._scoring import PreScoreState, compute_pre_score_state, normalize, score

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "PodTopologySpread",
]

NAME = "PodTopologySpread"
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

_NOT_MATCH = Status(Code.UNSCHEDULABLE, (ERR_REASON_CONSTRAINTS_NOT_MATCH,))
_MISSING_LABEL = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_NODE_LABEL_NOT_MATCH,))
_OWN_CONSTRAINTS_UNSIGNABLE = Status(
    Code.UNSCHEDULABLE, ("pods with topology constraints are not signable",)
)
_DEFAULT_CONSTRAINTS_UNSIGNABLE = Status(
    Code.UNSCHEDULABLE, ("pods with default topology constraints are not signable",)
)


class PodTopologySpread:
    """Keeps a pod's topologySpreadConstraints (or the configured defaults).

    DoNotSchedule constraints are enforced in Filter, ScheduleAnyway ones weigh in Score.
    """

    name = NAME

    def __init__(self, args: PodTopologySpreadArgs, handle: Handle) -> None:
        self._handle = handle
        # Node-derived counts reused across cycles while a NodeInfo is unchanged; no
        # per-pod data lives here (that goes in CycleState).
        self._memo = CountMemo()
        self._system_defaulted = args.defaulting_type == SYSTEM_DEFAULTING
        self._default_constraints = (
            SYSTEM_DEFAULT_CONSTRAINTS if self._system_defaulted else args.default_constraints
        )
        self.use_index = True
        """Count from the snapshot's pod index when it covers the nodes (else walk them)."""
        self._defaults_by_action: dict[str, list[SpreadConstraint]] = {}
        """The default constraints of each action, parsed once when none reads the
        pod's labels (matchLabelKeys): the same list for every pod."""

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> PodTopologySpread:
        return cls(PodTopologySpreadArgs.from_dict(args), handle)

    # ---- constraints -------------------------------------------------------------------

    def constraints_for(self, pod: Pod, action: str) -> list[SpreadConstraint]:
        """The pod's own constraints of kind ``action``; without any of its own, the
        defaults, selecting what the pod's Services and controller select
        (upstream getConstraints / initPreScoreState + buildDefaultConstraints).

        Raises InvalidSelectorError for a selector upstream cannot parse.
        """
        own = pod.spec.topology_spread_constraints
        if own:
            return filter_constraints(own, pod.labels, action)
        if not self._default_constraints:
            return []
        constraints = self._defaults_by_action.get(action)
        if constraints is None:
            constraints = filter_constraints(self._default_constraints, pod.labels, action)
            if not any(c.match_label_keys for c in self._default_constraints):
                self._defaults_by_action[action] = constraints
        if not constraints:
            return []
        selector = default_selector(pod, self._handle.cluster)
        if selector.is_empty:
            return []
        return [
            SpreadConstraint(
                max_skew=c.max_skew,
                topology_key=c.topology_key,
                selector=selector,
                min_domains=c.min_domains,
                node_affinity_policy=c.node_affinity_policy,
                node_taints_policy=c.node_taints_policy,
            )
            for c in constraints
        ]

    # ---- PreFilter / Filter --------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | PreFilterResult | None:
        try:
            constraints = self.constraints_for(pod, DO_NOT_SCHEDULE)
        except InvalidSelectorError as exc:
            return Status.error(f"get constraints from pod: {exc}")
        if not constraints:
            return SKIP
        indexed = self._index(nodes)
        if indexed is not None:
            s = indexed_pre_filter_state(pod, constraints, *indexed)
        else:
            s = compute_pre_filter_state(pod, constraints, nodes, self._memo)
        state.write(PRE_FILTER_STATE_KEY, s)
        return None

    def _index(self, nodes: Sequence[NodeInfo]) -> tuple[PodIndex, NodeTable | None] | None:
        """The snapshot's pod index and node table when the index counts ``nodes``."""
        if not self.use_index:
            return None
        snapshot = self._handle.snapshot
        index = getattr(snapshot, "pod_index", None)
        if not isinstance(index, PodIndex) or not index.covers(nodes):
            return None
        table = getattr(snapshot, "table", None)
        return index, table if isinstance(table, NodeTable) else None

    def pre_filter_extensions(self) -> PodTopologySpread:
        return self

    def add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return _state_missing(PRE_FILTER_STATE_KEY)
        s.update_with_pod(pod_to_add.pod, pod, node_info.node, 1)
        return None

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return _state_missing(PRE_FILTER_STATE_KEY)
        s.update_with_pod(pod_to_remove.pod, pod, node_info.node, -1)
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s: PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return _state_missing(PRE_FILTER_STATE_KEY)
        labels = node_info.node.metadata.labels
        for key, max_skew, self_match, min_domains, counts, paths in s.checks:
            value = labels.get(key)
            if value is None:
                return _MISSING_LABEL
            # The global minimum counts as 0 while there are fewer domains than minDomains.
            minimum = paths.num0 if len(counts) >= min_domains else 0
            if counts.get(value, 0) + self_match - minimum > max_skew:
                return _NOT_MATCH
        return None

    def filter_batch(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> npt.NDArray[np.bool_] | None:
        """Filter over every row of the snapshot's table, from the index's domain codes."""
        s: PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if s is None or not self.use_index:
            return None
        index = getattr(self._handle.snapshot, "pod_index", None)
        if not isinstance(index, PodIndex) or index.infos is not table.infos:
            return None
        return filter_rows(s, index)

    # ---- PreScore / Score ----------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        all_nodes = self._handle.snapshot.list()
        if not all_nodes:
            return SKIP
        try:
            constraints = self.constraints_for(pod, SCHEDULE_ANYWAY)
        except InvalidSelectorError as exc:
            return Status.error(f"calculating preScoreState: {exc}")
        if not constraints:
            return SKIP
        # Zone-less nodes still get hostname spreading under the system defaults.
        require_all = bool(pod.spec.topology_spread_constraints) or not self._system_defaulted
        indexed = self._index(all_nodes)
        if indexed is not None:
            s = indexed_pre_score_state(pod, constraints, nodes, require_all, *indexed)
        else:
            s = compute_pre_score_state(pod, constraints, nodes, all_nodes, require_all, self._memo)
        state.write(PRE_SCORE_STATE_KEY, s)
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        s: PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            raise LookupError(f'reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        return score(s, node_info)

    def score_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.int64] | None:
        """Score for the table's ``rows``, from the index's domain codes and views."""
        s: PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        if s is None or not self.use_index:
            return None
        index = getattr(self._handle.snapshot, "pod_index", None)
        if not isinstance(index, PodIndex) or index.infos is not table.infos:
            return None
        return score_rows(s, index, rows)

    def score_extensions(self) -> PodTopologySpread:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status | None:
        s = state.get(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return _state_missing(PRE_SCORE_STATE_KEY)
        normalize(s, scores)
        return None

    # ---- EnqueueExtensions ---------------------------------------------------------------

    def sign_pod(self, pod: Pod) -> Sequence[SignFragment] | Status:
        """Spreading depends on where other pods are: a pod with constraints, given or
        defaulted, cannot be signed."""
        if pod.spec.topology_spread_constraints:
            return _OWN_CONSTRAINTS_UNSIGNABLE
        if self._default_constraints:
            return _DEFAULT_CONSTRAINTS_UNSIGNABLE
        return ()

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        pod_actions = (
            ActionType.ADD
            | ActionType.UPDATE_POD_LABEL
            | ActionType.UPDATE_POD_TOLERATION
            | ActionType.DELETE
        )
        node_actions = (
            ActionType.ADD
            | ActionType.DELETE
            | ActionType.UPDATE_NODE_LABEL
            | ActionType.UPDATE_NODE_TAINT
        )
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, pod_actions), self.is_schedulable_after_pod_change
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, node_actions),
                self.is_schedulable_after_node_change,
            ),
        ]

    def is_schedulable_after_pod_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Queue when an assigned pod of the namespace that a DoNotSchedule constraint
        selects comes, goes or changes labels to or from matching, or when the pod itself
        gets new tolerations and a constraint honours taints."""
        before = old if isinstance(old, Pod) else None
        after = new if isinstance(new, Pod) else None
        if before is None and after is None:
            return QueueingHint.QUEUE
        if (after is not None and not _involved(after, pod)) or (
            before is not None and not _involved(before, pod)
        ):
            return QueueingHint.SKIP
        try:
            constraints = self.constraints_for(pod, DO_NOT_SCHEDULE)
        except InvalidSelectorError:
            return QueueingHint.QUEUE
        if after is not None and before is not None:
            if (
                after.uid == pod.uid
                and after.spec.tolerations != before.spec.tolerations
                and any(c.node_taints_policy == HONOR for c in constraints)
            ):
                return QueueingHint.QUEUE
            if dict(after.labels) == dict(before.labels):
                return QueueingHint.SKIP
            for c in constraints:
                if c.selector.matches(before.labels) != c.selector.matches(after.labels):
                    return QueueingHint.QUEUE
            return QueueingHint.SKIP
        changed = after if after is not None else before
        assert changed is not None
        if any(c.selector.matches(changed.labels) for c in constraints):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def is_schedulable_after_node_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Queue when a node carrying every topology key comes or goes, gains or loses one
        of the keys, or changes a key's value or its taints."""
        before = old if isinstance(old, Node) else None
        after = new if isinstance(new, Node) else None
        if before is None and after is None:
            return QueueingHint.QUEUE
        try:
            constraints = self.constraints_for(pod, DO_NOT_SCHEDULE)
        except InvalidSelectorError:
            return QueueingHint.QUEUE
        was = before is not None and has_all_keys(before.metadata.labels, constraints)
        now = after is not None and has_all_keys(after.metadata.labels, constraints)
        if before is not None and after is not None:
            if was != now:
                return QueueingHint.QUEUE
            if now and (
                _topology_labels_changed(before, after, constraints)
                or before.spec.taints != after.spec.taints
            ):
                return QueueingHint.QUEUE
            return QueueingHint.SKIP
        if after is not None:
            return QueueingHint.QUEUE if now else QueueingHint.SKIP
        return QueueingHint.QUEUE if was else QueueingHint.SKIP


def _involved(incoming: Pod, pending: Pod) -> bool:
    """upstream involvedInTopologySpreading: the pod itself, or an assigned pod of its
    namespace."""
    return incoming.uid == pending.uid or (
        bool(incoming.spec.node_name) and incoming.namespace == pending.namespace
    )


def _topology_labels_changed(
    before: Node, after: Node, constraints: Sequence[SpreadConstraint]
) -> bool:
    old, new = before.metadata.labels, after.metadata.labels
    return any(old.get(c.topology_key, "") != new.get(c.topology_key, "") for c in constraints)


def _state_missing(key: str) -> Status:
    return Status.error(f'reading "{key}" from cycleState: not found')
