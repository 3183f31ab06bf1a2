"""InterPodAffinity: the in-tree plugin, split as upstream splits it.

# pkg/scheduler/framework/plugins/interpodaffinity/
"""

from ._filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
)
from ._plugin import InterPodAffinity as InterPodAffinity
from ._plugin import InterPodAffinityArgs as InterPodAffinityArgs

__all__ = [
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "InterPodAffinity",
    "InterPodAffinityArgs",
]
