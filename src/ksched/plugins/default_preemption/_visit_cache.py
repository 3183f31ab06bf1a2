"""Dry-run outcomes kept per node between preemptors, for the arithmetic path.

When the profile lets victims be decided by the NodeResourcesFit comparisons and the
node-only Filters (see ``_dry_run``), a node's dry-run outcome is a function of: the
node (its NodeInfo, generation and Node object), the pods nominated to it (the same
PodInfo objects), the preemptor's priority, Fit request and node-only fields, the
disruption budgets with their allowances, and, when the victims' order compares a pod
without a start time with one that has one, the clock. Between two preemptors most
nodes change in none of these, so their outcome is read back instead of recomputed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from ...api import Pod, PodDisruptionBudget
from ...framework import NodeInfo, PodInfo, Status
from ._candidates import Candidate

__all__ = ["Entry", "VisitCache", "preemptor_key"]

_LIMIT = 50_000
_KEYS_LIMIT = 256

Outcome = tuple[Candidate | None, Status | None]
"""(candidate, None), (None, status), or (None, None) for a node passed over."""


def preemptor_key(pod: Pod, request: object, scalars: object) -> object:
    """What the outcome reads of the preemptor: priority, Fit request, and the fields the
    node-only Filters read (tolerations, node name, node selector, node affinity)."""
    spec = pod.spec
    affinity = spec.affinity.node_affinity if spec.affinity is not None else None
    selector = tuple(sorted(spec.node_selector.items())) if spec.node_selector else ()
    return (pod.priority, request, scalars, spec.tolerations, spec.node_name, selector, affinity)


@attrs.define(eq=False, slots=True)
class Entry:
    node: NodeInfo
    generation: int
    node_object: object
    nominated: tuple[PodInfo, ...]
    own_nominated: bool
    key: object
    pdbs: tuple[PodDisruptionBudget, ...]
    allowances: tuple[int, ...]
    now: float | None
    outcome: Outcome


class VisitCache:
    """Per node, the last arithmetic dry-run outcome and what it was decided from."""

    __slots__ = ("_entries", "_keys")

    def __init__(self) -> None:
        self._entries: dict[str, Entry] = {}
        self._keys: dict[object, object] = {}

    @property
    def entries(self) -> Mapping[str, Entry]:
        """The kept entries by node name (for a caller that checks the common case
        inline: same NodeInfo, generation, Node, key, no nominated pods, no budgets)."""
        return self._entries

    def intern(self, key: object) -> object:
        """The kept object equal to ``key`` (entries then match it by identity, with no
        comparison per node), or ``key`` itself, kept from now on."""
        try:
            kept = self._keys.get(key)
        except TypeError:  # an unhashable part: compared per node instead
            return key
        if kept is None:
            if len(self._keys) >= _KEYS_LIMIT:
                self._keys.clear()
            self._keys[key] = kept = key
        return kept

    def get(
        self,
        node: NodeInfo,
        nominated: Sequence[PodInfo],
        own_nominated: bool,
        key: object,
        pdbs: Sequence[tuple[PodDisruptionBudget, int]],
        now: float,
    ) -> Outcome | None:
        entry = self._entries.get(node.name)
        if (
            entry is None
            or entry.node is not node
            or entry.generation != node.generation
            or entry.node_object is not node.node
            or not (entry.key is key or entry.key == key)
            or entry.own_nominated != own_nominated
            or len(entry.nominated) != len(nominated)
            or len(entry.pdbs) != len(pdbs)
            or (entry.now is not None and entry.now != now)
        ):
            return None
        if not nominated and not pdbs:
            return entry.outcome
        for kept, current in zip(entry.nominated, nominated, strict=True):
            if kept is not current:
                return None
        for kept_pdb, allowance, (pdb, allowed) in zip(
            entry.pdbs, entry.allowances, pdbs, strict=True
        ):
            if kept_pdb is not pdb or allowance != allowed:
                return None
        return entry.outcome

    def put(
        self,
        node: NodeInfo,
        nominated: Sequence[PodInfo],
        own_nominated: bool,
        key: object,
        pdbs: Sequence[tuple[PodDisruptionBudget, int]],
        now: float | None,
        outcome: Outcome,
    ) -> None:
        if len(self._entries) >= _LIMIT:
            self._entries.clear()
        self._entries[node.name] = Entry(
            node,
            node.generation,
            node.node,
            tuple(nominated),
            own_nominated,
            key,
            tuple(p for p, _ in pdbs),
            tuple(a for _, a in pdbs),
            now,
            outcome,
        )
