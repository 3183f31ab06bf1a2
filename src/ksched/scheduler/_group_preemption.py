"""Group preemption: victims chosen so that a whole gang fits, or none evicted.

Upstream's pod-group cycle runs each member's own PostFilter, which may evict for a gang
that still does not fit. ksched plans first and evicts last (docs/gang-scheduling.md):

1. From a fresh snapshot, each member in the group's order is filtered again against the
   snapshot as the members before it left it. A member that fits is placed there; one that
   does not runs the profile's DefaultPreemption dry run (its candidate search, PDB
   ordering, victim selection and pickOneNodeForPreemption) on that same snapshot, and the
   chosen candidate's victims are removed from the snapshot and the member placed instead.
   A member whose nominated node still holds its terminating victims counts as placed
   there. Members that may not preempt (``preemptionPolicy: Never``) are only placed.
2. The plan stops once minCount members (with those already scheduled) are placed. If it
   never gets there, nothing is evicted.
3. Otherwise the victims are evicted, node by node, as DefaultPreemption prepares a
   candidate (DisruptionTarget condition, Preempted Events, lower nominations cleared), and
   each placed member is nominated to its node. The members go back to the queue; the
   victims' deletions requeue them, and the next pod-group cycle finds the room.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from ..api import Pod
from ..framework import CycleState, PodGroup, PodGroupPlugin, PodInfo
from ..framework.runtime import Framework
from ._base import SchedulerBase
from ._diagnosis import FitError

__all__ = ["GroupPlan", "GroupPreemption"]


@attrs.define(eq=False)
class GroupPlan:
    """The preemption chosen for a gang: member uid -> node, node -> victims."""

    nominations: dict[str, str] = attrs.field(factory=dict)
    victims: dict[str, list[Pod]] = attrs.field(factory=dict)
    preemptors: dict[str, Pod] = attrs.field(factory=dict)
    """Node -> the member evicting there (named in the victims' Preempted Events)."""

    def explain(self) -> dict[str, Any]:
        return {
            "victims": {node: [v.key for v in pods] for node, pods in sorted(self.victims.items())},
        }


def _preemption_plugin(fw: Framework) -> Any:
    """The profile's DefaultPreemption (any PostFilter with its dry-run interface)."""
    for name in fw.points.get("postFilter", ()):
        plugin = fw.plugins[name]
        if all(
            callable(getattr(plugin, attr, None))
            for attr in ("find_candidates", "select_candidate", "prepare_candidate")
        ):
            return plugin
    return None


class GroupPreemption(SchedulerBase):
    """Plans and carries out preemption for a gang that does not fit."""

    async def preempt_for_group(
        self, fw: Framework, plugin: PodGroupPlugin, group: PodGroup, members: Sequence[Any]
    ) -> GroupPlan | None:
        """Evict for the gang only if the plan places minCount members; the plan."""
        preemption = _preemption_plugin(fw)
        if preemption is None:
            return None
        needed = group.min_count - plugin.scheduled_count(group)
        self.cache.update_snapshot(self.snapshot)
        plan = GroupPlan()
        placed = 0
        batching, self.opportunistic_batching = self.opportunistic_batching, False
        try:
            for m in members:
                if placed >= needed:
                    break
                node = await self._plan_member(fw, preemption, m.qpi.pod, plan)
                if node is not None:
                    placed += 1
        finally:
            self.opportunistic_batching = batching
        metrics = self.metrics
        if placed < needed:
            if metrics is not None:
                metrics.preemption(0)
            return None
        for node, victims in plan.victims.items():
            if metrics is not None:
                metrics.preemption(len(victims))
            candidate = _candidate(node, victims)
            status = await preemption.prepare_candidate(candidate, plan.preemptors[node])
            if not status.is_success:
                return None
        return plan

    async def _plan_member(
        self, fw: Framework, preemption: Any, pod: Pod, plan: GroupPlan
    ) -> str | None:
        """Place ``pod`` in the snapshot, preempting if it must; its node or None."""
        state = CycleState()
        found = await self._schedule_pod(fw, state, pod, None)  # type: ignore[attr-defined]
        if isinstance(found, str):
            self._place_in_snapshot(pod, found)
            plan.nominations[pod.uid] = found
            return found
        if not isinstance(found, FitError):
            return None
        nominated = pod.status.nominated_node_name
        eligible, _ = preemption.pod_eligible_to_preempt_others(
            pod, found.statuses.get(nominated or "")
        )
        if not eligible:
            if nominated and pod.spec.preemption_policy != "Never":
                # Its earlier victims are still terminating there: count it as placed.
                plan.nominations[pod.uid] = nominated
                return nominated
            return None
        candidates, _, _ = await preemption.find_candidates(
            state, self.snapshot.list(), pod, found.statuses
        )
        best = preemption.select_candidate(candidates)
        if best is None or not best.name:
            return None
        victims = tuple(best.victims.pods)
        self._place_in_snapshot(pod, best.name, victims)
        plan.nominations[pod.uid] = best.name
        if victims:
            plan.victims.setdefault(best.name, []).extend(victims)
            plan.preemptors.setdefault(best.name, pod)
        return str(best.name)

    def _place_in_snapshot(self, pod: Pod, node: str, victims: Sequence[Pod] = ()) -> Pod:
        """Put ``pod`` on ``node`` in the snapshot only (``victims`` taken off it first);
        the pod as placed. The next refresh from the cache undoes it."""
        info = self.snapshot.get(node)
        assert info is not None
        changed = info.clone()
        for victim in victims:
            changed.remove_pod(victim)
        assumed = attrs.evolve(pod, spec=attrs.evolve(pod.spec, node_name=node))
        changed.add_pod(PodInfo.of(assumed))
        self.snapshot.overlay(changed)
        return assumed


def _candidate(node: str, victims: Sequence[Pod]) -> Any:
    from ..plugins.default_preemption import Candidate, Victims

    return Candidate(node, Victims(tuple(victims)))
