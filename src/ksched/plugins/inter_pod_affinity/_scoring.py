"""Preferred (anti-)affinity: the PreScore topology scores and their normalization.

# pkg/scheduler/framework/plugins/interpodaffinity/scoring.go
Each existing pod adds, at its node's value of a term's topology key, the weight of
every preferred term of the incoming pod it matches (negated for anti-affinity), and,
symmetrically, the weight of its own preferred terms the incoming pod matches and
``hardPodAffinityWeight`` for each of its required affinity terms the incoming pod
matches. A node scores the sum over its labels; NormalizeScore maps min..max to 0..100.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ...api import Pod
from ...framework import MAX_NODE_SCORE, NodeInfo
from ._terms import IncomingPod

__all__ = ["PRE_SCORE_STATE_KEY", "PreScoreState", "build_topology_score", "normalize"]

PRE_SCORE_STATE_KEY = "PreScoreInterPodAffinity"

TopologyScore = dict[str, dict[str, int]]
"""topology key -> topology value -> score."""


class PreScoreState:
    __slots__ = ("topology_score",)

    def __init__(self, topology_score: TopologyScore) -> None:
        self.topology_score = topology_score

    def clone(self) -> PreScoreState:
        return self

    def score(self, labels: Mapping[str, str]) -> int:
        total = 0
        for key, values in self.topology_score.items():
            value = labels.get(key)
            if value is not None:
                total += values.get(value, 0)
        return total


def build_topology_score(
    pod: Pod,
    incoming: IncomingPod,
    namespace_labels: Mapping[str, str],
    nodes: Iterable[NodeInfo],
    all_pods: bool,
    hard_pod_affinity_weight: int,
) -> TopologyScore:
    """Walk the existing pods (all of them, or only those with affinity) once."""
    scores: TopologyScore = {}

    def add(labels: Mapping[str, str], key: str, weight: int) -> None:
        value = labels.get(key)
        if value is not None:
            by_value = scores.setdefault(key, {})
            by_value[value] = by_value.get(value, 0) + weight

    preferred = incoming.preferred_affinity
    preferred_anti = incoming.preferred_anti_affinity
    for node_info in nodes:
        labels = node_info.node.metadata.labels
        if not labels:
            continue  # no topology key can match
        for existing in node_info.pods if all_pods else node_info.pods_with_affinity:
            other = existing.pod
            for weight, term in preferred:
                if term.matches(other):
                    add(labels, term.topology_key, weight)
            for weight, term in preferred_anti:
                if term.matches(other):
                    add(labels, term.topology_key, -weight)
            if hard_pod_affinity_weight > 0:
                for required in existing.required_affinity_terms:
                    if required.matches(pod, namespace_labels):
                        add(labels, required.topology_key, hard_pod_affinity_weight)
            for weighted in existing.preferred_affinity_terms:
                if weighted.term.matches(pod, namespace_labels):
                    add(labels, weighted.term.topology_key, weighted.weight)
            for weighted in existing.preferred_anti_affinity_terms:
                if weighted.term.matches(pod, namespace_labels):
                    add(labels, weighted.term.topology_key, -weighted.weight)
    return scores


def normalize(scores: dict[str, int]) -> None:
    """Map the lowest score to 0 and the highest to 100, linearly, truncating."""
    if not scores:
        return
    lowest = min(scores.values())
    spread = max(scores.values()) - lowest
    for node, score in scores.items():
        scores[node] = int(MAX_NODE_SCORE * ((score - lowest) / spread)) if spread > 0 else 0
