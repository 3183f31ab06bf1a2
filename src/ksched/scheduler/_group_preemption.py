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

from collections.abc import Awaitable, Sequence
from typing import Any, Protocol, runtime_checkable

import attrs

from ..api import Pod
from ..framework import CycleState, NodeToStatus, PodGroup, PodGroupPlugin, PodInfo, Status
from ..framework.runtime import Framework
from ._algorithm import SchedulingAlgorithm
from ._diagnosis import FitError
from ._observer import Observer
from ._state import SchedulerState

__all__ = ["GroupPlan", "GroupPreemption", "GroupPreemptor", "place_in_snapshot"]


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


@runtime_checkable
class GroupPreemptor(Protocol):
    """A PostFilter plugin whose dry run the gang's plan can use (DefaultPreemption)."""

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: Status | None
    ) -> tuple[bool, str]: ...

    def find_candidates(
        self, state: CycleState, all_nodes: Sequence[Any], pod: Pod, statuses: NodeToStatus
    ) -> Awaitable[tuple[Sequence[Any], Any, Any]]: ...

    def select_candidate(self, candidates: Sequence[Any]) -> Any: ...

    def prepare_victims(
        self, node_name: str, victims: Sequence[Pod], pod: Pod
    ) -> Awaitable[Status]: ...


def _preemptor(fw: Framework) -> GroupPreemptor | None:
    """The profile's PostFilter plugin that can plan preemption for a gang, if any."""
    for name in fw.points.get("postFilter", ()):
        plugin = fw.plugins[name]
        if isinstance(plugin, GroupPreemptor):
            return plugin
    return None


def place_in_snapshot(
    state: SchedulerState, pod: Pod, node: str, victims: Sequence[Pod] = ()
) -> Pod:
    """Put ``pod`` on ``node`` in the cycle's snapshot only (``victims`` taken off it
    first); the pod as placed. The next refresh from the cache undoes it."""
    info = state.snapshot.get(node)
    assert info is not None
    changed = info.clone()
    for victim in victims:
        changed.remove_pod(victim)
    assumed = attrs.evolve(pod, spec=attrs.evolve(pod.spec, node_name=node))
    changed.add_pod(PodInfo.of(assumed))
    state.snapshot.overlay(changed)
    return assumed


class GroupPreemption:
    """Plans and carries out preemption for a gang that does not fit."""

    def __init__(
        self, state: SchedulerState, observer: Observer, algorithm: SchedulingAlgorithm
    ) -> None:
        self.state = state
        self.observer = observer
        self.algorithm = algorithm

    async def preempt_for_group(
        self, fw: Framework, plugin: PodGroupPlugin, group: PodGroup, members: Sequence[Pod]
    ) -> GroupPlan | None:
        """Evict for the gang only if the plan places minCount members; the plan."""
        preemptor = _preemptor(fw)
        if preemptor is None:
            return None
        st = self.state
        needed = group.min_count - plugin.scheduled_count(group)
        st.cache.update_snapshot(st.snapshot)
        plan = GroupPlan()
        placed = 0
        batching, st.opportunistic_batching = st.opportunistic_batching, False
        try:
            for pod in members:
                if placed >= needed:
                    break
                if await self._plan_member(fw, preemptor, pod, plan) is not None:
                    placed += 1
        finally:
            st.opportunistic_batching = batching
        metrics = self.observer.metrics
        if placed < needed:
            if metrics is not None:
                metrics.preemption(0)
            return None
        for node, victims in plan.victims.items():
            if metrics is not None:
                metrics.preemption(len(victims))
            status = await preemptor.prepare_victims(node, victims, plan.preemptors[node])
            if not status.is_success:
                return None
        return plan

    async def _plan_member(
        self, fw: Framework, preemptor: GroupPreemptor, pod: Pod, plan: GroupPlan
    ) -> str | None:
        """Place ``pod`` in the snapshot, preempting if it must; its node or None."""
        state = CycleState()
        attempt = self.observer.unexplained(fw.profile_name)
        found = await self.algorithm.schedule_pod(fw, state, pod, attempt)
        if isinstance(found, str):
            place_in_snapshot(self.state, pod, found)
            plan.nominations[pod.uid] = found
            return found
        if not isinstance(found, FitError):
            return None
        nominated = pod.status.nominated_node_name
        eligible, _ = preemptor.pod_eligible_to_preempt_others(
            pod, found.statuses.get(nominated or "")
        )
        if not eligible:
            if nominated and pod.spec.preemption_policy != "Never":
                # Its earlier victims are still terminating there: count it as placed.
                plan.nominations[pod.uid] = nominated
                return nominated
            return None
        candidates, _, _ = await preemptor.find_candidates(
            state, self.state.snapshot.list(), pod, found.statuses
        )
        best = preemptor.select_candidate(candidates)
        if best is None or not best.name:
            return None
        victims = tuple(best.victims.pods)
        place_in_snapshot(self.state, pod, best.name, victims)
        plan.nominations[pod.uid] = best.name
        if victims:
            plan.victims.setdefault(best.name, []).extend(victims)
            plan.preemptors.setdefault(best.name, pod)
        return str(best.name)
