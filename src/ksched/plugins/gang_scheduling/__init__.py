"""GangScheduling: the scheduling.k8s.io Workload/PodGroup gang plugin."""

from ._plugin import NAME, PERMIT_TIMEOUT_SECONDS, GangScheduling
from ._tracker import GroupInfo, GroupTracker, group_key

__all__ = [
    "NAME",
    "PERMIT_TIMEOUT_SECONDS",
    "GangScheduling",
    "GroupInfo",
    "GroupTracker",
    "group_key",
]
