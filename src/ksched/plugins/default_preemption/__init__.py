"""DefaultPreemption: when no node fits, evict lower-priority pods to make room.

# pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go
# pkg/scheduler/framework/preemption/preemption.go
``_plugin`` holds the plugin and the evaluator's steps; ``_candidates`` the order of pods
and the pick of a node; ``_pdb`` the disruption budgets; ``_dry_run`` the shortcuts that
decide victims from the NodeResourcesFit comparisons; ``_args`` the plugin's arguments.
"""

from ._args import NAME as NAME
from ._args import DefaultPreemptionArgs as DefaultPreemptionArgs
from ._candidates import Candidate as Candidate
from ._candidates import Victims as Victims
from ._candidates import pick_one_node_for_preemption as pick_one_node_for_preemption
from ._dry_run import MSG_NO_VICTIMS as MSG_NO_VICTIMS
from ._pdb import disruptions_allowed as disruptions_allowed
from ._pdb import filter_pods_with_pdb_violation as filter_pods_with_pdb_violation
from ._plugin import WAITING_POD_REJECT_MSG as WAITING_POD_REJECT_MSG
from ._plugin import DefaultPreemption as DefaultPreemption

__all__ = [
    "MSG_NO_VICTIMS",
    "NAME",
    "WAITING_POD_REJECT_MSG",
    "Candidate",
    "DefaultPreemption",
    "DefaultPreemptionArgs",
    "Victims",
    "disruptions_allowed",
    "filter_pods_with_pdb_violation",
    "pick_one_node_for_preemption",
]
