"""The plugin author's API: statuses, cycle state, node infos, one protocol per extension point.

# staging/src/k8s.io/kube-scheduler/framework
A plugin needs only ``ksched`` and this package. The batch machinery (the node table,
batch forms, pod signatures, what a plugin lets the fast paths assume) is the expert's
API, :mod:`ksched.framework.batch`; the runtime that runs a profile's plugins is
:mod:`ksched.framework.runtime`, for the engine and for tools.
"""

from ._cycle_state import POD_GROUP_CYCLE as POD_GROUP_CYCLE
from ._cycle_state import CycleState as CycleState
from ._cycle_state import StateData as StateData
from ._events import ActionType as ActionType
from ._events import ClusterEvent as ClusterEvent
from ._events import ClusterEventWithHint as ClusterEventWithHint
from ._events import EventResource as EventResource
from ._events import QueueingHint as QueueingHint
from ._events import QueueingHintFn as QueueingHintFn
from ._handle import Extender as Extender
from ._handle import Handle as Handle
from ._handle import PluginFactory as PluginFactory
from ._interfaces import MAX_NODE_SCORE as MAX_NODE_SCORE
from ._interfaces import MIN_NODE_SCORE as MIN_NODE_SCORE
from ._interfaces import NodeToStatus as NodeToStatus
from ._interfaces import PostFilterResult as PostFilterResult
from ._interfaces import PreFilterResult as PreFilterResult
from ._interfaces import QueuedPodInfo as QueuedPodInfo
from ._interfaces import SharedLister as SharedLister
from ._normalize import default_normalize_score as default_normalize_score
from ._normalize import default_normalize_scores as default_normalize_scores
from ._normalize import trunc_div as trunc_div
from ._plugin_args import parse_plugin_args as parse_plugin_args
from ._protocols import BindPlugin as BindPlugin
from ._protocols import ClosablePlugin as ClosablePlugin
from ._protocols import EnqueueExtensions as EnqueueExtensions
from ._protocols import FilterPlugin as FilterPlugin
from ._protocols import PermitPlugin as PermitPlugin
from ._protocols import Plugin as Plugin
from ._protocols import PodGroup as PodGroup
from ._protocols import PodGroupPlugin as PodGroupPlugin
from ._protocols import PostBindPlugin as PostBindPlugin
from ._protocols import PostFilterPlugin as PostFilterPlugin
from ._protocols import PreBindPlugin as PreBindPlugin
from ._protocols import PreEnqueuePlugin as PreEnqueuePlugin
from ._protocols import PreFilterExtensions as PreFilterExtensions
from ._protocols import PreFilterPlugin as PreFilterPlugin
from ._protocols import PreScorePlugin as PreScorePlugin
from ._protocols import QueueSortPlugin as QueueSortPlugin
from ._protocols import ReservePlugin as ReservePlugin
from ._protocols import ScoreExtensions as ScoreExtensions
from ._protocols import ScorePlugin as ScorePlugin
from ._spec_memo import SpecMemo as SpecMemo
from ._status import SKIP as SKIP
from ._status import Code as Code
from ._status import Status as Status
from ._types import NodeInfo as NodeInfo
from ._types import PodInfo as PodInfo
from ._types import Resource as Resource
from ._waiting import WaitingPod as WaitingPod

__all__ = [
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "POD_GROUP_CYCLE",
    "SKIP",
    "ActionType",
    "BindPlugin",
    "ClosablePlugin",
    "ClusterEvent",
    "ClusterEventWithHint",
    "Code",
    "CycleState",
    "EnqueueExtensions",
    "EventResource",
    "Extender",
    "FilterPlugin",
    "Handle",
    "NodeInfo",
    "NodeToStatus",
    "PermitPlugin",
    "Plugin",
    "PluginFactory",
    "PodGroup",
    "PodGroupPlugin",
    "PodInfo",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "QueueSortPlugin",
    "QueuedPodInfo",
    "QueueingHint",
    "QueueingHintFn",
    "ReservePlugin",
    "Resource",
    "ScoreExtensions",
    "ScorePlugin",
    "SharedLister",
    "SpecMemo",
    "StateData",
    "Status",
    "WaitingPod",
    "default_normalize_score",
    "default_normalize_scores",
    "parse_plugin_args",
    "trunc_div",
]
