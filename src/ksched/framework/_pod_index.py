"""Indexes of the snapshot's pods, kept up to date as NodeInfos change.

Topology plugins (PodTopologySpread, InterPodAffinity) count, per topology domain, the
existing pods a selector selects. Walking every pod of every node for that costs
O(pods) selector evaluations per pod scheduled. The snapshot keeps instead:

- a label index, ``(label key, value) -> pods``, to find the candidates of a selector;
- selector views: for a conjunction of label requirements asked about before, the number
  of selected pods per node row and namespace, updated as pods come and go (at most
  ``capacity`` views, least recently used dropped);
- term groups: the (anti-)affinity terms of existing pods, grouped by equal terms, with
  the number of pods holding the term per node;
- domain codes: per topology key, each row's label value as a small integer, so that
  counts aggregate per domain with a few array operations.

The cache refreshes it from the old and new copy of each changed NodeInfo; rows follow
the snapshot's node list, and what is kept per row is dropped when that list changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from ..api import compile_requirements
from ._types import AffinityTerm, NodeInfo, PodInfo

__all__ = [
    "PREFERRED_AFFINITY",
    "PREFERRED_ANTI_AFFINITY",
    "REQUIRED_AFFINITY",
    "REQUIRED_ANTI_AFFINITY",
    "Domains",
    "PodIndex",
    "Requirement",
    "SelectorView",
    "TermGroup",
]

IntArray = npt.NDArray[np.int64]
Requirement = tuple[str, str, frozenset[str]]
"""``(key, operator, values)``; operators In, NotIn, Exists, DoesNotExist."""
Labels = Mapping[str, str]

REQUIRED_AFFINITY = 0
REQUIRED_ANTI_AFFINITY = 1
PREFERRED_AFFINITY = 2
PREFERRED_ANTI_AFFINITY = 3


def _position(pods: Sequence[PodInfo], pod: PodInfo) -> int:
    """Where ``pod`` is in ``pods`` (-1: not there)."""
    try:
        return pods.index(pod)
    except ValueError:
        return -1


def canonical(requirements: Iterable[Requirement]) -> tuple[Requirement, ...]:
    """Requirements deduplicated in a fixed order: equal conjunctions share one view."""
    unique = set(requirements)
    return tuple(sorted(unique, key=lambda r: (r[0], r[1], sorted(r[2]))))


class SelectorView:
    """Pods selected by a conjunction of label requirements, counted per node row.

    ``live[namespace]`` counts pods without a deletion timestamp, ``terminating[ns]``
    the others; each is an int64 array indexed by row (absent: none there).
    """

    __slots__ = ("live", "matches", "requirements", "terminating")

    def __init__(self, requirements: tuple[Requirement, ...]) -> None:
        self.requirements = requirements
        self.matches = compile_requirements(requirements)
        self.live: dict[str, IntArray] = {}
        self.terminating: dict[str, IntArray] = {}

    def _count(self, pod_info: PodInfo, row: int, size: int, delta: int) -> None:
        meta = pod_info.pod.metadata
        if not self.matches(meta.labels):
            return
        table = self.live if meta.deletion_timestamp is None else self.terminating
        counts = table.get(meta.namespace)
        if counts is None:
            counts = table[meta.namespace] = np.zeros(size, dtype=np.int64)
        counts[row] += delta

    def selected(self, accept: Callable[[str], bool]) -> IntArray | None:
        """Per row, the selected pods (terminating or not) of the accepted namespaces."""
        total: IntArray | None = None
        for table in (self.live, self.terminating):
            for namespace, counts in table.items():
                if accept(namespace):
                    total = counts.copy() if total is None else total + counts
        return total


class TermGroup:
    """Existing pods' (anti-)affinity terms equal to ``term`` (and of equal weight)."""

    __slots__ = ("nodes", "term", "weight")

    def __init__(self, term: AffinityTerm, weight: int) -> None:
        self.term = term
        self.weight = weight
        self.nodes: dict[str, int] = {}
        """node name -> number of pods there holding the term."""


class Domains:
    """One topology key's value per row, as codes (-1: the node lacks the key)."""

    __slots__ = ("code", "codes", "key", "values")

    def __init__(self, key: str, infos: Sequence[NodeInfo]) -> None:
        self.key = key
        self.values: list[str] = []
        self.code: dict[str, int] = {}
        codes = [self.code_of(info.node.metadata.labels.get(key)) for info in infos]
        self.codes: IntArray = np.array(codes, dtype=np.int64).reshape(len(infos))

    def code_of(self, value: str | None) -> int:
        if value is None:
            return -1
        code = self.code.get(value)
        if code is None:
            code = self.code[value] = len(self.values)
            self.values.append(value)
        return code


def _term_key(term: AffinityTerm, weight: int) -> tuple[object, ...]:
    return (term.topology_key, term.namespaces, term.namespace_selector, term.selector, weight)


class PodIndex:
    """The snapshot's pods by label, selector views, term groups and domain codes."""

    __slots__ = (
        "_by_label",
        "_capacity",
        "_domains",
        "_groups",
        "_infos",
        "_node_of",
        "_rows",
        "_views",
        "view_builds",
    )

    def __init__(self, capacity: int = 32) -> None:
        self._capacity = capacity
        self._node_of: dict[PodInfo, str] = {}
        self._by_label: dict[tuple[str, str], set[PodInfo]] = {}
        self._groups: tuple[dict[tuple[object, ...], TermGroup], ...] = ({}, {}, {}, {})
        self._views: dict[tuple[Requirement, ...], SelectorView] = {}
        self._domains: dict[str, Domains] = {}
        self._infos: Sequence[NodeInfo] = ()
        self._rows: Mapping[str, int] = {}
        self.view_builds = 0
        """Views built from the label index so far (for tests and benchmarks)."""

    # ---- kept up to date by the cache -----------------------------------------------------

    def relayout(self, infos: Sequence[NodeInfo], rows: Mapping[str, int]) -> None:
        """The node list changed: drop what is kept per row (rebuilt when next asked)."""
        self._infos = infos
        self._rows = rows
        self._views.clear()
        self._domains.clear()

    def replace_node(self, old: NodeInfo | None, new: NodeInfo | None) -> None:
        """Account the change from ``old`` to ``new`` (copies of one node; None: absent).

        Call :meth:`relayout` first when the node list changed.
        """
        old_pods = old.pods if old is not None else ()
        new_pods = new.pods if new is not None else ()
        n = len(old_pods)
        # The usual changes: pods bound to the node (a tail appended) and the oldest pods
        # deleted (a head cut). List index and equality compare identities in C, far
        # cheaper than hashing every pod of a crowded node into sets.
        head = _position(old_pods, new_pods[0]) if old_pods and new_pods else -1
        if head >= 0 and new_pods[: n - head] == old_pods[head:]:
            added, removed = list(new_pods[n - head :]), list(old_pods[:head])
        elif old_pods and new_pods:
            before = set(old_pods)
            after = set(new_pods)
            # Set differences run in C; the usual change (one pod bound or gone) then needs
            # no Python-level walk of a node that holds thousands of pods.
            added_set = after - before
            removed_set = before - after
            added = [p for p in new_pods if p in added_set] if len(added_set) > 1 else [*added_set]
            removed = (
                [p for p in old_pods if p in removed_set]
                if len(removed_set) > 1
                else [*removed_set]
            )
        else:
            added, removed = list(new_pods), list(old_pods)
        for pod_info in removed:
            self._remove(pod_info)
        if new is not None:
            name = new.name
            for pod_info in added:
                self._add(pod_info, name)
            if old is not None and self._domains and new.node is not old.node:
                row = self._rows.get(name)
                if row is not None and self._infos[row] is new:
                    labels = new.node.metadata.labels
                    for domains in self._domains.values():
                        domains.codes[row] = domains.code_of(labels.get(domains.key))

    def _add(self, pod_info: PodInfo, node_name: str) -> None:
        if pod_info in self._node_of:
            self._remove(pod_info)  # moved between nodes within one refresh
        self._node_of[pod_info] = node_name
        by_label = self._by_label
        for pair in pod_info.pod.metadata.labels.items():
            holders = by_label.get(pair)
            if holders is None:
                by_label[pair] = {pod_info}
            else:
                holders.add(pod_info)
        self._count(pod_info, node_name, 1)

    def _remove(self, pod_info: PodInfo) -> None:
        node_name = self._node_of.pop(pod_info, None)
        if node_name is None:
            return
        by_label = self._by_label
        for pair in pod_info.pod.metadata.labels.items():
            holders = by_label.get(pair)
            if holders is not None:
                holders.discard(pod_info)
                if not holders:
                    del by_label[pair]
        self._count(pod_info, node_name, -1)

    def _count(self, pod_info: PodInfo, node_name: str, delta: int) -> None:
        if self._views:
            row = self._rows.get(node_name)
            if row is not None:
                size = len(self._infos)
                for view in self._views.values():
                    view._count(pod_info, row, size, delta)
        if pod_info.has_affinity:
            groups = self._groups
            for term in pod_info.required_affinity_terms:
                self._group(groups[REQUIRED_AFFINITY], term, 0, node_name, delta)
            for term in pod_info.required_anti_affinity_terms:
                self._group(groups[REQUIRED_ANTI_AFFINITY], term, 0, node_name, delta)
            for weighted in pod_info.preferred_affinity_terms:
                self._group(
                    groups[PREFERRED_AFFINITY], weighted.term, weighted.weight, node_name, delta
                )
            for weighted in pod_info.preferred_anti_affinity_terms:
                self._group(
                    groups[PREFERRED_ANTI_AFFINITY],
                    weighted.term,
                    weighted.weight,
                    node_name,
                    delta,
                )

    @staticmethod
    def _group(
        groups: dict[tuple[object, ...], TermGroup],
        term: AffinityTerm,
        weight: int,
        node_name: str,
        delta: int,
    ) -> None:
        key = _term_key(term, weight)
        group = groups.get(key)
        if group is None:
            if delta < 0:
                return
            group = groups[key] = TermGroup(term, weight)
        total = group.nodes.get(node_name, 0) + delta
        if total > 0:
            group.nodes[node_name] = total
        else:
            group.nodes.pop(node_name, None)
            if not group.nodes:
                del groups[key]

    # ---- read by plugins ----------------------------------------------------------------

    @property
    def infos(self) -> Sequence[NodeInfo]:
        """The snapshot's node list the rows refer to."""
        return self._infos

    @property
    def rows(self) -> Mapping[str, int]:
        """node name -> row."""
        return self._rows

    def covers(self, nodes: Sequence[NodeInfo]) -> bool:
        """Whether ``nodes`` is the very node list the index was refreshed for."""
        infos = self._infos
        return nodes is infos or (isinstance(nodes, list) and nodes == infos)

    def groups(self, kind: int) -> Iterable[TermGroup]:
        """The term groups of one kind (REQUIRED_AFFINITY ... PREFERRED_ANTI_AFFINITY)."""
        return self._groups[kind].values()

    def has_groups(self, *kinds: int) -> bool:
        """Whether existing pods hold a term of any of these kinds."""
        groups = self._groups
        return any(groups[kind] for kind in kinds)

    def domains(self, key: str) -> Domains:
        domains = self._domains.get(key)
        if domains is None:
            domains = self._domains[key] = Domains(key, self._infos)
        return domains

    def view(self, requirements: Iterable[Requirement]) -> SelectorView:
        """The view of the pods that satisfy every requirement, built on first use."""
        key = canonical(requirements)
        views = self._views
        view = views.pop(key, None)
        if view is None:
            view = self._build(key)
            if len(views) >= self._capacity:
                del views[next(iter(views))]
        views[key] = view  # most recently used last
        return view

    def _build(self, requirements: tuple[Requirement, ...]) -> SelectorView:
        self.view_builds += 1
        view = SelectorView(requirements)
        candidates: Iterable[PodInfo] = self._node_of
        smallest = -1
        for key, op, values in requirements:
            if op != "In":
                continue
            found: list[set[PodInfo]] = [
                s for s in (self._by_label.get((key, v)) for v in values) if s
            ]
            size = sum(len(s) for s in found)
            if smallest < 0 or size < smallest:
                smallest = size
                if not found:
                    candidates = ()
                elif len(found) == 1:
                    candidates = found[0]
                else:
                    candidates = [p for s in found for p in s]
        rows, size, node_of = self._rows, len(self._infos), self._node_of
        for pod_info in candidates:
            row = rows.get(node_of[pod_info])
            if row is not None:
                view._count(pod_info, row, size, 1)
        return view

    def pods_on(self, node_name: str) -> int:
        """Indexed pods on ``node_name`` (for tests)."""
        return sum(1 for name in self._node_of.values() if name == node_name)

    def __len__(self) -> int:
        return len(self._node_of)
