"""InterPodAffinity: required and preferred pod (anti-)affinity, both directions.

# pkg/scheduler/framework/plugins/interpodaffinity/plugin.go (args, hints)
# pkg/scheduler/framework/plugins/interpodaffinity/filtering.go, scoring.go
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np
import numpy.typing as npt

from ..._errors import ConfigError
from ...api import Node, Pod, PodAffinityTerm
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
from ...framework.batch import (
    LABELS,
    PREFERRED_AFFINITY,
    PREFERRED_ANTI_AFFINITY,
    REQUIRED_AFFINITY,
    REQUIRED_ANTI_AFFINITY,
    AffinityTerm,
    NodeTable,
    PodIndex,
    SignFragment,
)
from ._filtering import PRE_FILTER_STATE_KEY, PreFilterState, build_pre_filter_state, filter_node
from ._indexed import (
    filter_rows,
    indexed_pre_filter_state,
    indexed_topology_score,
    normalize_rows,
    score_rows,
)
from ._scoring import PRE_SCORE_STATE_KEY, PreScoreState, build_topology_score, normalize
from ._terms import parse_incoming
from ._validation import label_selector_error

__all__ = ["InterPodAffinity", "InterPodAffinityArgs"]

_NO_PRE_FILTER_STATE = Status.error(
    f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found'
)
_NO_PRE_SCORE_STATE = Status.error(
    f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found'
)
_EMPTY: Mapping[str, str] = {}
_MIN_HARD_WEIGHT, _MAX_HARD_WEIGHT = 0, 100
_ARG_FIELDS = frozenset(
    {"hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods", "apiVersion", "kind"}
)


@attrs.frozen(kw_only=True)
class InterPodAffinityArgs:
    """InterPodAffinityArgs with the v1 defaults."""

    hard_pod_affinity_weight: int = 1
    """Score weight of an existing pod's required affinity term the incoming pod matches."""
    ignore_preferred_terms_of_existing_pods: bool = False
    """Skip scoring when the incoming pod has no preferred terms of its own."""

    @classmethod
    def from_dict(cls, args: Mapping[str, Any] | None) -> InterPodAffinityArgs:
        if args is None:
            return cls()
        if not isinstance(args, Mapping):
            raise ConfigError(f"InterPodAffinity: args: expected a mapping, got {args!r}")
        unknown = sorted(set(args) - _ARG_FIELDS)
        if unknown:
            raise ConfigError(f'InterPodAffinity: args: unknown field "{unknown[0]}"')
        weight = args.get("hardPodAffinityWeight", 1)
        if weight is None:
            weight = 1
        if isinstance(weight, bool) or not isinstance(weight, int):
            raise ConfigError(
                f"InterPodAffinity: args.hardPodAffinityWeight: expected an integer, got {weight!r}"
            )
        if not _MIN_HARD_WEIGHT <= weight <= _MAX_HARD_WEIGHT:
            raise ConfigError(
                f"InterPodAffinity: args.hardPodAffinityWeight: Invalid value: {weight}: "
                f"not in valid range [{_MIN_HARD_WEIGHT}, {_MAX_HARD_WEIGHT}]"
            )
        ignore = args.get("ignorePreferredTermsOfExistingPods", False)
        if ignore is None:
            ignore = False
        if not isinstance(ignore, bool):
            raise ConfigError(
                "InterPodAffinity: args.ignorePreferredTermsOfExistingPods: "
                f"expected true or false, got {ignore!r}"
            )
        return cls(hard_pod_affinity_weight=weight, ignore_preferred_terms_of_existing_pods=ignore)


def _required_terms(pod: Pod, anti: bool) -> tuple[PodAffinityTerm, ...]:
    affinity = pod.spec.affinity
    if affinity is None:
        return ()
    group = affinity.pod_anti_affinity if anti else affinity.pod_affinity
    return () if group is None else group.required


def _hint_terms(pod: Pod, anti: bool) -> list[AffinityTerm] | None:
    """The pod's required terms as stored for existing pods; None if one does not parse."""
    terms = _required_terms(pod, anti)
    for term in terms:
        if label_selector_error(term.label_selector) or label_selector_error(
            term.namespace_selector
        ):
            return None
    return [AffinityTerm.of(pod, term) for term in terms]


def _matches_all(terms: Sequence[AffinityTerm], pod: Pod) -> bool:
    # Namespace selectors of these terms are not resolved, as upstream: only an empty
    # selector (every namespace) or the listed namespaces count.
    return bool(terms) and all(term.matches(pod, _EMPTY) for term in terms)


class InterPodAffinity:
    """Places pods with or away from other pods by topology, as their terms ask."""

    name = "InterPodAffinity"

    def __init__(self, args: InterPodAffinityArgs, handle: Handle) -> None:
        self.args = args
        self._handle = handle
        self.use_index = True
        """Count from the snapshot's pod index when it covers the nodes (else walk them)."""

    def _index(self, nodes: Sequence[NodeInfo] | None) -> PodIndex | None:
        """The snapshot's pod index when it counts ``nodes`` (None: the snapshot's list)."""
        if not self.use_index:
            return None
        snapshot = self._handle.snapshot
        index = getattr(snapshot, "pod_index", None)
        if not isinstance(index, PodIndex):
            return None
        return index if index.covers(snapshot.list() if nodes is None else nodes) else None

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> InterPodAffinity:
        return cls(InterPodAffinityArgs.from_dict(args), handle)

    def _namespace_labels(self, namespace: str) -> Mapping[str, str]:
        # A namespace that cannot be found has no labels, as upstream assumes.
        return self._handle.namespace_labels(namespace) or _EMPTY

    # -- EnqueueExtensions

    def sign_pod(self, pod: Pod) -> Sequence[SignFragment] | Status:
        """Unsignable with pod (anti-)affinity terms; otherwise existing pods' terms read
        the pod's labels (and namespace), unless their preferred terms are ignored."""
        affinity = pod.spec.affinity
        terms = affinity is not None and any(
            spec is not None and (spec.required or spec.preferred)
            for spec in (affinity.pod_affinity, affinity.pod_anti_affinity)
        )
        if terms:
            return Status(Code.UNSCHEDULABLE, ("pods with pod affinity are not signable",))
        if self.args.ignore_preferred_terms_of_existing_pods:
            return ()
        return ((LABELS, (pod.namespace, tuple(sorted(pod.labels.items())))),)

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # With queueing hints there is no pre-check, so node taint updates need no
        # registration.
        pod_actions = ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE
        node_actions = ActionType.ADD | ActionType.UPDATE_NODE_LABEL
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.POD, pod_actions), self._pod_changed),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, node_actions), self._node_changed
            ),
        ]

    def _pod_changed(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        if (old is not None and not isinstance(old, Pod)) or (
            new is not None and not isinstance(new, Pod)
        ):
            return QueueingHint.QUEUE
        if old is None and new is None:
            return QueueingHint.QUEUE
        if new is not None and new.uid == pod.uid:
            # The rejected pod itself changed its labels: it may now satisfy its own terms.
            return QueueingHint.QUEUE
        if (new is not None and not new.spec.node_name) or (
            old is not None and not old.spec.node_name
        ):
            return QueueingHint.SKIP  # only pods on nodes count
        terms = _hint_terms(pod, anti=False)
        anti_terms = _hint_terms(pod, anti=True)
        if terms is None or anti_terms is None:
            return QueueingHint.QUEUE
        # A single existing pod must match all the affinity terms; see Filter.
        if new is not None and old is not None:
            if not _matches_all(terms, old) and _matches_all(terms, new):
                return QueueingHint.QUEUE
            if _matches_all(anti_terms, old) and not _matches_all(anti_terms, new):
                return QueueingHint.QUEUE
            return QueueingHint.SKIP
        if new is not None:
            return QueueingHint.QUEUE if _matches_all(terms, new) else QueueingHint.SKIP
        assert old is not None
        if _matches_all(anti_terms, old):
            return QueueingHint.QUEUE
        # The deleted pod's own required anti-affinity may have kept this pod away.
        labels = self._namespace_labels(pod.namespace)
        existing_anti = PodInfo.of(old).required_anti_affinity_terms
        if any(term.matches(pod, labels) for term in existing_anti):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def _node_changed(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        if not isinstance(new, Node) or (old is not None and not isinstance(old, Node)):
            return QueueingHint.QUEUE
        terms = _hint_terms(pod, anti=False)
        if terms is None:
            return QueueingHint.QUEUE
        new_labels = new.metadata.labels
        for term in terms:
            key = term.topology_key
            if old is None:
                if key in new_labels:
                    return QueueingHint.QUEUE  # a new domain for the affinity
                continue
            old_value = old.metadata.labels.get(key)
            new_value = new_labels.get(key)
            if new_value is not None and old_value != new_value:
                return QueueingHint.QUEUE  # the node joined (or moved to) a domain
        anti_terms = _hint_terms(pod, anti=True)
        if anti_terms is None:
            return QueueingHint.QUEUE
        for term in anti_terms:
            if old is None:
                # A node without the key always suits anti-affinity; one with it may.
                return QueueingHint.QUEUE
            key = term.topology_key
            old_value = old.metadata.labels.get(key)
            new_value = new_labels.get(key)
            if old_value is not None and old_value != new_value:
                return QueueingHint.QUEUE  # the node left (or moved out of) a domain
        return QueueingHint.SKIP

    # -- PreFilter / Filter

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | PreFilterResult | None:
        incoming = parse_incoming(pod, self._handle.namespace_labels)
        if isinstance(incoming, str):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (f"parsing pod: {incoming}",))
        index = self._index(nodes)
        if (
            index is not None
            and not incoming.required_affinity
            and not incoming.required_anti_affinity
            and not index.has_groups(REQUIRED_ANTI_AFFINITY)
        ):
            return SKIP  # no term on either side: no counts to build
        if index is not None:
            pre = indexed_pre_filter_state(
                pod, incoming, self._namespace_labels(pod.namespace), index
            )
        else:
            pre = build_pre_filter_state(
                pod,
                incoming,
                self._namespace_labels(pod.namespace),
                nodes,
                self._handle.snapshot.have_pods_with_required_anti_affinity(),
            )
        if (
            not pre.existing_anti_affinity_counts
            and not incoming.required_affinity
            and not incoming.required_anti_affinity
        ):
            return SKIP
        state.write(PRE_FILTER_STATE_KEY, pre)
        return None

    def pre_filter_extensions(self) -> InterPodAffinity:
        return self

    def add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._update(state, pod_to_add, node_info, 1)

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._update(state, pod_to_remove, node_info, -1)

    def _update(
        self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo, delta: int
    ) -> Status | None:
        pre: PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if pre is None:
            return _NO_PRE_FILTER_STATE
        pre.update_with_pod(pod_info, node_info.node, delta)
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return filter_node(state.get(PRE_FILTER_STATE_KEY), node_info)

    def filter_batch(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> npt.NDArray[np.bool_] | None:
        """Filter over every row of the snapshot's table, from the index's domain codes."""
        pre: PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        index = self._index(None)
        if pre is None or index is None or index.infos is not table.infos:
            return None
        return filter_rows(pre, index)

    # -- PreScore / Score

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        affinity = pod.spec.affinity
        has_preferred = affinity is not None and bool(
            (affinity.pod_affinity is not None and affinity.pod_affinity.preferred)
            or (affinity.pod_anti_affinity is not None and affinity.pod_anti_affinity.preferred)
        )
        if self.args.ignore_preferred_terms_of_existing_pods and not has_preferred:
            return SKIP
        incoming = parse_incoming(pod, self._handle.namespace_labels)
        if isinstance(incoming, str):
            return Status(Code.ERROR, (f"failed to parse pod: {incoming}",))
        index = self._index(None)
        if (
            index is not None
            and not incoming.preferred_affinity
            and not incoming.preferred_anti_affinity
            and not index.has_groups(REQUIRED_AFFINITY, PREFERRED_AFFINITY, PREFERRED_ANTI_AFFINITY)
        ):
            return SKIP  # no term on either side: nothing scores
        if index is not None:
            topology_score = indexed_topology_score(
                pod,
                incoming,
                self._namespace_labels(pod.namespace),
                index,
                self.args.hard_pod_affinity_weight,
            )
        else:
            # Without preferred terms of its own, only pods with affinity can add to a score.
            snapshot = self._handle.snapshot
            walk = snapshot.list() if has_preferred else snapshot.have_pods_with_affinity()
            topology_score = build_topology_score(
                pod,
                incoming,
                self._namespace_labels(pod.namespace),
                walk,
                all_pods=has_preferred,
                hard_pod_affinity_weight=self.args.hard_pod_affinity_weight,
            )
        if not topology_score:
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(topology_score))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        pre: PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        if pre is None:
            raise LookupError(_NO_PRE_SCORE_STATE.message)
        return pre.score(node_info.node.metadata.labels)

    def score_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.int64] | None:
        """Score for the table's ``rows``, from the index's domain codes."""
        pre: PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        index = self._index(None)
        if pre is None or index is None or index.infos is not table.infos:
            return None
        return score_rows(pre.topology_score, index, rows)

    def score_extensions(self) -> InterPodAffinity:
        return self

    def normalize_score_batch(
        self, state: CycleState, pod: Pod, scores: npt.NDArray[np.int64]
    ) -> None:
        """normalize_score over an array of scores, in place."""
        pre: PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        if pre is None:
            raise LookupError(_NO_PRE_SCORE_STATE.message)
        if pre.topology_score:
            normalize_rows(scores)

    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status | None:
        pre: PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        if pre is None:
            return _NO_PRE_SCORE_STATE
        if pre.topology_score:
            normalize(scores)
        return None
