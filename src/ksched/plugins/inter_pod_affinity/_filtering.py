"""Required (anti-)affinity: the PreFilter counts and the Filter checks.

# pkg/scheduler/framework/plugins/interpodaffinity/filtering.go
Counts are kept per topology pair (key, value): how many existing pods on nodes with
that label match the incoming pod's affinity terms (all of them), its anti-affinity
terms (each), and how many existing pods have a required anti-affinity term the
incoming pod matches. Filter then reads only the node's labels.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...api import Node, Pod
from ...framework import Code, NodeInfo, PodInfo, Status
from ._terms import IncomingPod, IncomingTerm

__all__ = [
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "PRE_FILTER_STATE_KEY",
    "Counts",
    "PreFilterState",
    "build_pre_filter_state",
    "filter_node",
]

PRE_FILTER_STATE_KEY = "PreFilterInterPodAffinity"

ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = (
    "node(s) didn't satisfy existing pods anti-affinity rules"
)
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"

_AFFINITY_MISMATCH = Status(
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_AFFINITY_RULES_NOT_MATCH,)
)
_ANTI_AFFINITY_MISMATCH = Status(Code.UNSCHEDULABLE, (ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,))
_EXISTING_ANTI_AFFINITY_MISMATCH = Status(
    Code.UNSCHEDULABLE, (ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,)
)
_NO_STATE = Status(
    Code.ERROR, (f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found',)
)

Counts = dict[tuple[str, str], int]
"""(topology key, topology value) -> number of matching pods."""


def _update(counts: Counts, labels: Mapping[str, str], key: str, delta: int) -> None:
    value = labels.get(key)
    if value is None:
        return
    pair = (key, value)
    total = counts.get(pair, 0) + delta
    if total:
        counts[pair] = total
    else:
        del counts[pair]


def _matches_all(terms: Sequence[IncomingTerm], pod: Pod) -> bool:
    """Whether ``pod`` matches every term (and there is at least one)."""
    if not terms:
        return False
    return all(term.matches(pod) for term in terms)


class PreFilterState:
    """The counts of one attempt; preemption's what-ifs update clones of it."""

    __slots__ = (
        "affinity_counts",
        "anti_affinity_counts",
        "existing_anti_affinity_counts",
        "incoming",
        "namespace_labels",
        "pod",
        "present",
        "self_match",
    )

    def __init__(
        self,
        pod: Pod,
        incoming: IncomingPod,
        namespace_labels: Mapping[str, str],
        existing_anti_affinity_counts: Counts,
        affinity_counts: Counts,
        anti_affinity_counts: Counts,
    ) -> None:
        self.pod = pod
        self.incoming = incoming
        self.namespace_labels = namespace_labels
        self.present: dict[tuple[int, str], Any] | None = None
        """Set by the indexed PreFilter: by (count kind, topology key), which domain codes
        hold pods; dropped when the counts change."""
        self.existing_anti_affinity_counts = existing_anti_affinity_counts
        self.affinity_counts = affinity_counts
        self.anti_affinity_counts = anti_affinity_counts
        # Whether the pod matches all its own affinity terms: "first pod of a collection".
        self.self_match = _matches_all(incoming.required_affinity, pod)

    def clone(self) -> PreFilterState:
        copy = PreFilterState.__new__(PreFilterState)
        copy.pod = self.pod
        copy.incoming = self.incoming
        copy.namespace_labels = self.namespace_labels
        copy.self_match = self.self_match
        copy.present = None
        copy.existing_anti_affinity_counts = dict(self.existing_anti_affinity_counts)
        copy.affinity_counts = dict(self.affinity_counts)
        copy.anti_affinity_counts = dict(self.anti_affinity_counts)
        return copy

    def update_with_pod(self, pod_info: PodInfo, node: Node, delta: int) -> None:
        """Count (delta=1) or uncount (delta=-1) ``pod_info`` as running on ``node``."""
        self.present = None
        labels = node.metadata.labels
        for existing_term in pod_info.required_anti_affinity_terms:
            if existing_term.matches(self.pod, self.namespace_labels):
                key = existing_term.topology_key
                _update(self.existing_anti_affinity_counts, labels, key, delta)
        other = pod_info.pod
        affinity = self.incoming.required_affinity
        if _matches_all(affinity, other):
            for term in affinity:
                _update(self.affinity_counts, labels, term.topology_key, delta)
        for term in self.incoming.required_anti_affinity:
            if term.matches(other):
                _update(self.anti_affinity_counts, labels, term.topology_key, delta)


def _add(counts: Counts, labels: Mapping[str, str], key: str) -> None:
    value = labels.get(key)
    if value is not None:
        pair = (key, value)
        counts[pair] = counts.get(pair, 0) + 1


def build_pre_filter_state(
    pod: Pod,
    incoming: IncomingPod,
    namespace_labels: Mapping[str, str],
    nodes: Iterable[NodeInfo],
    nodes_with_required_anti_affinity: Iterable[NodeInfo],
) -> PreFilterState:
    """Count over the existing pods once for the whole attempt."""
    existing: Counts = {}
    for node_info in nodes_with_required_anti_affinity:
        labels = node_info.node.metadata.labels
        for existing_pod in node_info.pods_with_required_anti_affinity:
            for existing_term in existing_pod.required_anti_affinity_terms:
                if existing_term.matches(pod, namespace_labels):
                    _add(existing, labels, existing_term.topology_key)

    affinity_counts: Counts = {}
    anti_affinity_counts: Counts = {}
    affinity = incoming.required_affinity
    anti_affinity = incoming.required_anti_affinity
    if affinity or anti_affinity:
        for node_info in nodes:
            labels = node_info.node.metadata.labels
            for existing_pod in node_info.pods:
                other = existing_pod.pod
                if affinity:
                    for term in affinity:
                        if not term.matches(other):
                            break
                    else:
                        for term in affinity:
                            _add(affinity_counts, labels, term.topology_key)
                for term in anti_affinity:
                    if term.matches(other):
                        _add(anti_affinity_counts, labels, term.topology_key)
    return PreFilterState(
        pod, incoming, namespace_labels, existing, affinity_counts, anti_affinity_counts
    )


def _satisfies_affinity(state: PreFilterState, labels: Mapping[str, str]) -> bool:
    counts = state.affinity_counts
    pods_exist = True
    for term in state.incoming.required_affinity:
        value = labels.get(term.topology_key)
        if value is None:
            return False  # every topology key must be on the node
        if counts.get((term.topology_key, value), 0) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    # The first pod of a collection with affinity to itself: no pod anywhere matches
    # yet, but the pod matches its own terms and the node has the topology keys.
    return not counts and state.self_match


def _satisfies_anti_affinity(state: PreFilterState, labels: Mapping[str, str]) -> bool:
    counts = state.anti_affinity_counts
    if not counts:
        return True
    for term in state.incoming.required_anti_affinity:
        value = labels.get(term.topology_key)
        if value is not None and counts.get((term.topology_key, value), 0) > 0:
            return False
    return True


def _satisfies_existing_anti_affinity(state: PreFilterState, labels: Mapping[str, str]) -> bool:
    counts = state.existing_anti_affinity_counts
    if not counts:
        return True
    if len(counts) <= len(labels):
        return not any(n > 0 and labels.get(k) == v for (k, v), n in counts.items())
    return not any(counts.get(pair, 0) > 0 for pair in labels.items())


def filter_node(state: PreFilterState | None, node_info: NodeInfo) -> Status | None:
    """Filter's verdict for one node from the attempt's counts."""
    if state is None:
        return _NO_STATE
    labels = node_info.node.metadata.labels
    if not _satisfies_affinity(state, labels):
        return _AFFINITY_MISMATCH
    if not _satisfies_anti_affinity(state, labels):
        return _ANTI_AFFINITY_MISMATCH
    if not _satisfies_existing_anti_affinity(state, labels):
        return _EXISTING_ANTI_AFFINITY_MISMATCH
    return None
