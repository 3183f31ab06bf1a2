"""TaintToleration: a pod must tolerate a node's NoSchedule and NoExecute taints.

# pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go
Filter rejects a node with a NoSchedule/NoExecute taint none of the pod's tolerations
tolerates; since v1.35 the reason no longer names the taint (upstream logs it instead), so
nodes rejected for different taints share one reason in the FitError message. Score counts
the PreferNoSchedule taints the pod does not tolerate (only tolerations with effect
PreferNoSchedule or empty count); NormalizeScore reverses it: fewest intolerable taints,
highest score.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from ..api import Node, Pod, Taint, Toleration
from ..framework import (
    MAX_NODE_SCORE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    NodeInfo,
    QueueingHint,
    SpecMemo,
    Status,
    default_normalize_score,
    default_normalize_scores,
)
from ..framework.batch import (
    POD_TOLERATIONS,
    TOLERATIONS,
    BoolArray,
    Capabilities,
    IntArray,
    NodeTable,
    SignFragment,
    tolerations_signer,
)

__all__ = ["ERR_REASON_UNTOLERATED", "TaintToleration"]

PRE_SCORE_STATE_KEY = "PreScoreTaintToleration"

_DO_NOT_SCHEDULE = frozenset({"NoSchedule", "NoExecute"})
_PREFER_NO_SCHEDULE = "PreferNoSchedule"


ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"
"""The Filter reason for a node with a NoSchedule/NoExecute taint the pod does not tolerate."""

_UNTOLERATED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_UNTOLERATED,))


def _first_untolerated(taints: Sequence[Taint], tolerations: Sequence[Toleration]) -> Taint | None:
    """The first NoSchedule/NoExecute taint that no toleration tolerates."""
    for taint in taints:
        if taint.effect in _DO_NOT_SCHEDULE and not any(t.tolerates(taint) for t in tolerations):
            return taint
    return None


@attrs.frozen
class _PreScoreState:
    tolerations: tuple[Toleration, ...]
    """The pod's tolerations with effect PreferNoSchedule or no effect."""

    def clone(self) -> _PreScoreState:
        return self


def _soft_tolerations(pod: Pod) -> _PreScoreState:
    return _PreScoreState(
        tuple(t for t in pod.spec.tolerations if not t.effect or t.effect == _PREFER_NO_SCHEDULE)
    )


class TaintToleration:
    """Keeps pods off nodes whose taints they do not tolerate; prefers fewer soft taints."""

    name = "TaintToleration"
    capabilities = Capabilities(
        node_local_filter=True, node_local_score=True, pod_fields=(POD_TOLERATIONS,)
    )

    def __init__(self) -> None:
        # The PreScore state reads only the pod's spec and nobody changes it: one per spec.
        self._pre_score_state = SpecMemo(_soft_tolerations)
        self._soft_tainted_seen: tuple[int, int, bool] | None = None
        """(table epoch, change-log length, whether a row had a PreferNoSchedule taint)."""

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> TaintToleration:
        return cls()

    # -- EnqueueExtensions

    def sign_pod(self, pod: Pod) -> Sequence[SignFragment]:
        return ((TOLERATIONS, tolerations_signer(pod)),)

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # With queueing hints there is no pre-check: label updates need no registration,
        # and a pod's own toleration update goes through the Pod event's hint.
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                self._node_changed,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_TOLERATION),
                self._pod_tolerations_changed,
            ),
        ]

    def _node_changed(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        if not isinstance(new, Node) or (old is not None and not isinstance(old, Node)):
            return QueueingHint.QUEUE
        tolerations = pod.spec.tolerations
        was_untolerated = True
        if old is not None:
            was_untolerated = _first_untolerated(old.spec.taints, tolerations) is not None
        is_untolerated = _first_untolerated(new.spec.taints, tolerations) is not None
        if was_untolerated and not is_untolerated:
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def _pod_tolerations_changed(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        if not isinstance(new, Pod) or (old is not None and not isinstance(old, Pod)):
            return QueueingHint.QUEUE
        # Only the rejected pod's own new toleration can change its verdict.
        return QueueingHint.QUEUE if new.uid == pod.uid else QueueingHint.SKIP

    # -- Filter

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        taints = node_info.node.spec.taints
        if not taints:
            return None
        if _first_untolerated(taints, pod.spec.tolerations) is None:
            return None
        return _UNTOLERATED

    def filter_batch(self, state: CycleState, pod: Pod, table: NodeTable) -> BoolArray:
        # Only nodes with a NoSchedule/NoExecute taint can reject: judge those one by one.
        mask: BoolArray = ~table.hard_tainted
        for row in table.hard_tainted.nonzero()[0].tolist():
            mask[row] = self.filter(state, pod, table.infos[row]) is None
        return mask

    # -- PreScore / Score

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        state.write(PRE_SCORE_STATE_KEY, self._pre_score_state(pod))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        pre: _PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        if pre is None:
            raise LookupError(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState')
        tolerations = pre.tolerations
        return sum(
            1
            for taint in node_info.node.spec.taints
            if taint.effect == _PREFER_NO_SCHEDULE
            and not any(t.tolerates(taint) for t in tolerations)
        )

    def score_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray:
        # Only PreferNoSchedule taints count: nodes without one score 0.
        scores: IntArray = np.zeros(len(rows), dtype=np.int64)
        for i in table.soft_tainted[rows].nonzero()[0].tolist():
            scores[i] = self.score(state, pod, table.infos[int(rows[i])])
        return scores

    def uniform_score(self, state: CycleState, pod: Pod, table: NodeTable) -> int | None:
        """MaxNodeScore while no node has a PreferNoSchedule taint: every raw score is 0,
        which the reversed NormalizeScore turns into 100 on every node."""
        if state.get(PRE_SCORE_STATE_KEY) is None or self._any_soft_tainted(table):
            return None
        return MAX_NODE_SCORE

    def _any_soft_tainted(self, table: NodeTable) -> bool:
        """Whether a row may have a PreferNoSchedule taint: checked over the rows changed
        since the last look; once one is seen, True until the table's next epoch."""
        seen = len(table.changed_rows)
        last = self._soft_tainted_seen
        if last is not None and last[0] == table.epoch:
            epoch, at, found = last
            if found or at == seen:
                return found
            rows = table.changed_since(epoch, at)
            if rows is not None:
                soft = table.soft_tainted
                found = any(soft[row] for row in rows)
                self._soft_tainted_seen = (epoch, seen, found)
                return found
        found = bool(table.soft_tainted.any())
        self._soft_tainted_seen = (table.epoch, seen, found)
        return found

    def score_extensions(self) -> TaintToleration:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> None:
        default_normalize_score(scores, reverse=True)

    def normalize_score_batch(self, state: CycleState, pod: Pod, scores: IntArray) -> None:
        default_normalize_scores(scores, reverse=True)
