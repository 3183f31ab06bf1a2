"""What the scheduler knows of each scheduling.k8s.io pod group: policy and members.

# pkg/scheduler/backend/workloadmanager (PodGroupState: AllPods, UnscheduledPods,
# AssumedPods, ScheduledPodsCount) and framework/plugins/helper (PodGroupPolicy)
Followed from the cluster store, as upstream's manager follows the informers; assumed
members are told by the plugin's Reserve and Unreserve.
"""

from __future__ import annotations

from typing import Any

import attrs

from ...api import GroupPolicy, Pod, SchedulingPodGroup, Workload
from ...cluster import ClusterStore

__all__ = ["GroupInfo", "GroupTracker", "group_key"]


def group_key(pod: Pod) -> str | None:
    """The key of the pod's group, or None for a pod outside any."""
    ref = pod.spec.scheduling_group
    return None if ref is None else ref.group_key(pod.namespace)


@attrs.frozen
class GroupInfo:
    """A pod group as one scheduling decision sees it."""

    key: str
    name: str
    """What messages call it: the PodGroup's name, or ``workload/podGroup``."""
    policy: GroupPolicy

    @property
    def min_count(self) -> int:
        """The gang's minCount; 1 for a basic group (upstream getMinCount)."""
        return self.policy.min_count if self.policy.min_count is not None else 1


@attrs.define(eq=False)
class _Members:
    pods: dict[str, Pod] = attrs.field(factory=dict)
    """Every live pod of the group, by uid."""
    assumed: set[str] = attrs.field(factory=set)


class GroupTracker:
    """Pods by group, and each group's policy from its PodGroup or Workload."""

    def __init__(self, cluster: ClusterStore) -> None:
        self._cluster = cluster
        self._groups: dict[str, _Members] = {}
        cluster.subscribe(self._on_change)
        for pod in cluster.pods():
            self._on_change("Pod", None, pod)

    def close(self) -> None:
        self._cluster.unsubscribe(self._on_change)

    def _on_change(self, kind: str, old: Any, new: Any) -> None:
        if kind != "Pod":
            return
        if old is not None:
            key = group_key(old)
            members = self._groups.get(key) if key is not None else None
            if members is not None and (new is None or group_key(new) != key):
                members.pods.pop(old.uid, None)
                members.assumed.discard(old.uid)
                if not members.pods:
                    del self._groups[key]  # type: ignore[arg-type]
        if new is not None:
            key = group_key(new)
            if key is None:
                return
            members = self._groups.get(key)
            if members is None:
                members = self._groups[key] = _Members()
            if new.is_terminating:
                members.pods.pop(new.uid, None)
                members.assumed.discard(new.uid)
            else:
                members.pods[new.uid] = new

    # ---- policy ----------------------------------------------------------------------

    def info(self, pod: Pod) -> GroupInfo | str | None:
        """The pod's group, or the reason it cannot be found yet, or None (no group)."""
        ref = pod.spec.scheduling_group
        if ref is None:
            return None
        key = ref.group_key(pod.namespace)
        if ref.pod_group_name:
            group: SchedulingPodGroup | None = self._cluster.get(
                "SchedulingPodGroup", f"{pod.namespace}/{ref.pod_group_name}"
            )
            if group is None:
                return (
                    f'waiting for pod\'s pod group "{ref.pod_group_name}" '
                    "to appear in scheduling queue"
                )
            return GroupInfo(key, ref.pod_group_name, group.policy)
        workload: Workload | None = self._cluster.get("Workload", f"{pod.namespace}/{ref.workload}")
        if workload is None:
            # 1.35's wording, its typo included
            return f'waiting for pods\'s workload "{ref.workload}" to appear in scheduling queue'
        template = workload.template(ref.pod_group)
        if template is None:
            return f'pod group "{ref.pod_group}" doesn\'t exist for a workload "{ref.workload}"'
        return GroupInfo(key, f"{ref.workload}/{ref.pod_group}", template.policy)

    # ---- members ---------------------------------------------------------------------

    def all_count(self, key: str) -> int:
        """AllPodsCount: the group's live pods, scheduled or not."""
        members = self._groups.get(key)
        return len(members.pods) if members is not None else 0

    def scheduled_count(self, key: str) -> int:
        """ScheduledPodsCount: members bound or assumed."""
        members = self._groups.get(key)
        if members is None:
            return 0
        bound = sum(1 for p in members.pods.values() if p.spec.node_name)
        pending_assumed = sum(
            1 for uid in members.assumed if (p := members.pods.get(uid)) and not p.spec.node_name
        )
        return bound + pending_assumed

    def unscheduled(self, key: str) -> list[Pod]:
        """UnscheduledPods: members neither bound nor assumed."""
        members = self._groups.get(key)
        if members is None:
            return []
        return [
            p
            for p in members.pods.values()
            if not p.spec.node_name and p.uid not in members.assumed
        ]

    def assumed(self, key: str) -> list[str]:
        members = self._groups.get(key)
        return sorted(members.assumed) if members is not None else []

    def assume(self, pod: Pod) -> None:
        key = group_key(pod)
        members = self._groups.get(key) if key is not None else None
        if members is not None and pod.uid in members.pods:
            members.assumed.add(pod.uid)

    def forget(self, pod: Pod) -> None:
        key = group_key(pod)
        members = self._groups.get(key) if key is not None else None
        if members is not None:
            members.assumed.discard(pod.uid)

    def group_keys(self) -> list[str]:
        return sorted(self._groups)
