"""The plugin API: statuses, cycle state, node infos, one protocol per extension point."""

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
from ._handle import MetricsRecorder as MetricsRecorder
from ._interfaces import MAX_NODE_SCORE as MAX_NODE_SCORE
from ._interfaces import MIN_NODE_SCORE as MIN_NODE_SCORE
from ._interfaces import BatchFilterPlugin as BatchFilterPlugin
from ._interfaces import BatchFilterStatuses as BatchFilterStatuses
from ._interfaces import BatchFilterStatusGroups as BatchFilterStatusGroups
from ._interfaces import BatchScoreExtensions as BatchScoreExtensions
from ._interfaces import BatchScorePlugin as BatchScorePlugin
from ._interfaces import BindPlugin as BindPlugin
from ._interfaces import ClosablePlugin as ClosablePlugin
from ._interfaces import EnqueueExtensions as EnqueueExtensions
from ._interfaces import FilterPlugin as FilterPlugin
from ._interfaces import NodeToStatus as NodeToStatus
from ._interfaces import PermitPlugin as PermitPlugin
from ._interfaces import Plugin as Plugin
from ._interfaces import PluginFactory as PluginFactory
from ._interfaces import PodGroup as PodGroup
from ._interfaces import PodGroupPlugin as PodGroupPlugin
from ._interfaces import PostBindPlugin as PostBindPlugin
from ._interfaces import PostFilterPlugin as PostFilterPlugin
from ._interfaces import PostFilterResult as PostFilterResult
from ._interfaces import PreBindPlugin as PreBindPlugin
from ._interfaces import PreEnqueuePlugin as PreEnqueuePlugin
from ._interfaces import PreFilterExtensions as PreFilterExtensions
from ._interfaces import PreFilterPlugin as PreFilterPlugin
from ._interfaces import PreFilterResult as PreFilterResult
from ._interfaces import PreScorePlugin as PreScorePlugin
from ._interfaces import QueuedPodInfo as QueuedPodInfo
from ._interfaces import QueueSortPlugin as QueueSortPlugin
from ._interfaces import ReservePlugin as ReservePlugin
from ._interfaces import ScoreExtensions as ScoreExtensions
from ._interfaces import ScorePlugin as ScorePlugin
from ._interfaces import SharedLister as SharedLister
from ._interfaces import UniformScorePlugin as UniformScorePlugin
from ._normalize import default_normalize_score as default_normalize_score
from ._normalize import default_normalize_scores as default_normalize_scores
from ._normalize import trunc_div as trunc_div
from ._parallel import run_chunked as run_chunked
from ._plugin_args import parse_plugin_args as parse_plugin_args
from ._pod_index import PodIndex as PodIndex
from ._signature import HOST_PORTS as HOST_PORTS
from ._signature import IMAGE_NAMES as IMAGE_NAMES
from ._signature import LABELS as LABELS
from ._signature import NODE_AFFINITY as NODE_AFFINITY
from ._signature import NODE_NAME as NODE_NAME
from ._signature import NODE_SELECTOR as NODE_SELECTOR
from ._signature import RESOURCES as RESOURCES
from ._signature import TOLERATIONS as TOLERATIONS
from ._signature import VOLUMES as VOLUMES
from ._signature import PodSignature as PodSignature
from ._signature import SignFragment as SignFragment
from ._signature import SignPlugin as SignPlugin
from ._signature import host_ports_signer as host_ports_signer
from ._signature import node_selector_signer as node_selector_signer
from ._signature import resources_signer as resources_signer
from ._signature import tolerations_signer as tolerations_signer
from ._signature import volumes_signer as volumes_signer
from ._status import Code as Code
from ._status import Status as Status
from ._table import BoolArray as BoolArray
from ._table import IntArray as IntArray
from ._table import NodeRows as NodeRows
from ._table import NodeTable as NodeTable
from ._types import AffinityTerm as AffinityTerm
from ._types import HostPortInfo as HostPortInfo
from ._types import ImageStateSummary as ImageStateSummary
from ._types import NodeInfo as NodeInfo
from ._types import PodInfo as PodInfo
from ._types import Resource as Resource
from ._types import WeightedAffinityTerm as WeightedAffinityTerm
from ._waiting import WaitingPod as WaitingPod

__all__ = [
    "HOST_PORTS",
    "IMAGE_NAMES",
    "LABELS",
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "NODE_AFFINITY",
    "NODE_NAME",
    "NODE_SELECTOR",
    "POD_GROUP_CYCLE",
    "RESOURCES",
    "TOLERATIONS",
    "VOLUMES",
    "ActionType",
    "AffinityTerm",
    "BatchFilterPlugin",
    "BatchFilterStatusGroups",
    "BatchFilterStatuses",
    "BatchScoreExtensions",
    "BatchScorePlugin",
    "BindPlugin",
    "BoolArray",
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
    "HostPortInfo",
    "ImageStateSummary",
    "IntArray",
    "MetricsRecorder",
    "NodeInfo",
    "NodeRows",
    "NodeTable",
    "NodeToStatus",
    "PermitPlugin",
    "Plugin",
    "PluginFactory",
    "PodGroup",
    "PodGroupPlugin",
    "PodIndex",
    "PodInfo",
    "PodSignature",
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
    "SignFragment",
    "SignPlugin",
    "StateData",
    "Status",
    "UniformScorePlugin",
    "WaitingPod",
    "WeightedAffinityTerm",
    "default_normalize_score",
    "default_normalize_scores",
    "host_ports_signer",
    "node_selector_signer",
    "parse_plugin_args",
    "resources_signer",
    "run_chunked",
    "tolerations_signer",
    "trunc_div",
    "volumes_signer",
]
