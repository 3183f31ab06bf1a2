"""PodTopologySpread: the in-tree plugin that spreads pods over topology domains.

# pkg/scheduler/framework/plugins/podtopologyspread
"""

from ._args import PodTopologySpreadArgs as PodTopologySpreadArgs
from ._plugin import ERR_REASON_CONSTRAINTS_NOT_MATCH as ERR_REASON_CONSTRAINTS_NOT_MATCH
from ._plugin import ERR_REASON_NODE_LABEL_NOT_MATCH as ERR_REASON_NODE_LABEL_NOT_MATCH
from ._plugin import PodTopologySpread as PodTopologySpread

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "PodTopologySpread",
    "PodTopologySpreadArgs",
]
