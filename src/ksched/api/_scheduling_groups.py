"""The scheduling.k8s.io Workload API (KEP-4671): Workload and PodGroup objects.

# staging/src/k8s.io/api/scheduling/v1alpha1/types.go (1.35), v1alpha2/types.go (1.36),
# v1alpha3 and v1beta1 types.go (newest)
Upstream reshaped the API between alphas; ksched reads both shapes:

- first alpha (scheduling.k8s.io/v1alpha1, Kubernetes 1.35): a Workload lists its
  ``spec.podGroups[{name, policy: {gang: {minCount}} | {basic: {}}}]`` and a pod points at
  one with ``spec.workloadRef {name, podGroup, podGroupReplicaKey}``;
- newest (v1alpha2 onwards, v1beta1): a Workload lists ``spec.podGroupTemplates[{name,
  schedulingPolicy}]``, a separate PodGroup object (``spec.schedulingPolicy``,
  ``spec.podGroupTemplateRef.workload``) is the runtime group, and a pod points at it with
  ``spec.schedulingGroup.podGroupName``.

Both resolve to one :class:`GroupPolicy` per group key, which is all the scheduler reads.
"""

from __future__ import annotations

import attrs

from ._model import ObjectMeta, SchedulingGroupRef

__all__ = [
    "WORKLOAD_MAX_POD_GROUPS",
    "GroupPolicy",
    "PodGroupTemplate",
    "SchedulingGroupRef",
    "SchedulingPodGroup",
    "Workload",
]

WORKLOAD_MAX_POD_GROUPS = 8
"""WorkloadMaxPodGroupTemplates (v1alpha1: WorkloadMaxPodGroups)."""


@attrs.frozen(kw_only=True)
class GroupPolicy:
    """PodGroupSchedulingPolicy: ``gang`` with ``min_count``, or ``basic`` (None)."""

    min_count: int | None = None

    @property
    def is_gang(self) -> bool:
        return self.min_count is not None


BASIC = GroupPolicy()


@attrs.frozen(kw_only=True)
class PodGroupTemplate:
    """One entry of a Workload's ``podGroups`` (v1alpha1) or ``podGroupTemplates``."""

    name: str
    policy: GroupPolicy = BASIC


@attrs.frozen(kw_only=True)
class Workload:
    """scheduling.k8s.io Workload: the pod groups (templates) of one job and their policies."""

    metadata: ObjectMeta
    pod_groups: tuple[PodGroupTemplate, ...] = ()
    controller_kind: str = ""
    controller_name: str = ""
    controller_api_group: str = ""
    """``spec.controllerRef.apiGroup`` ("" for the core group)."""

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"

    def template(self, name: str) -> PodGroupTemplate | None:
        """The pod group (template) called ``name``, or None."""
        return next((t for t in self.pod_groups if t.name == name), None)


@attrs.frozen(kw_only=True)
class SchedulingPodGroup:
    """scheduling.k8s.io PodGroup (v1alpha2 onwards): the runtime group of a gang.

    Not the scheduler-plugins ``PodGroup`` (scheduling.x-k8s.io) that Coscheduling reads:
    the two share a kind name and differ by API group.
    """

    metadata: ObjectMeta
    policy: GroupPolicy = BASIC
    workload_name: str = ""
    template_name: str = ""

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"
