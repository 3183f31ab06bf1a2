"""GPU pools: the openb trace as ksched objects, the FGD study's experiments on the engine,
and GPU metrics (allocation, fragmentation) in the study's tables and plots.

The GPU plugins themselves (Open-Gpu-Share and the six Score policies) are in
``ksched.plugins.gpu_share``; this package drives them as the study's artifact
(hkust-adsl/kubernetes-scheduler-simulator) does its experiments.
"""

from ._experiment import POLICIES as POLICIES
from ._experiment import ExperimentConfig as ExperimentConfig
from ._experiment import ExperimentResult as ExperimentResult
from ._experiment import policy_name as policy_name
from ._experiment import run_experiment as run_experiment
from ._experiment import scheduler_config as scheduler_config
from ._gorand import GoRand as GoRand
from ._metrics import FRAG_KINDS as FRAG_KINDS
from ._metrics import POD_KINDS as POD_KINDS
from ._metrics import FragMeter as FragMeter
from ._metrics import GpuClusterState as GpuClusterState
from ._metrics import GpuCurve as GpuCurve
from ._metrics import discrete_curve as discrete_curve
from ._metrics import pod_kind as pod_kind
from ._openb import PodShape as PodShape
from ._openb import TraceError as TraceError
from ._openb import TraceNode as TraceNode
from ._openb import TracePod as TracePod
from ._openb import node_manifest as node_manifest
from ._openb import pod_manifest as pod_manifest
from ._openb import read_nodes as read_nodes
from ._openb import read_pods as read_pods
from ._openb import to_nodes as to_nodes
from ._openb import to_pods as to_pods
from ._typical import TypicalPod as TypicalPod
from ._typical import TypicalPodsConfig as TypicalPodsConfig
from ._typical import typical_pods as typical_pods
from ._typical import typical_pods_args as typical_pods_args
from ._workload import GoDraws as GoDraws
from ._workload import NumpyDraws as NumpyDraws
from ._workload import Workload as Workload
from ._workload import WorkloadConfig as WorkloadConfig
from ._workload import prepare_workload as prepare_workload

__all__ = [
    "FRAG_KINDS",
    "POD_KINDS",
    "POLICIES",
    "ExperimentConfig",
    "ExperimentResult",
    "FragMeter",
    "GoDraws",
    "GoRand",
    "GpuClusterState",
    "GpuCurve",
    "NumpyDraws",
    "PodShape",
    "TraceError",
    "TraceNode",
    "TracePod",
    "TypicalPod",
    "TypicalPodsConfig",
    "Workload",
    "WorkloadConfig",
    "discrete_curve",
    "node_manifest",
    "pod_kind",
    "pod_manifest",
    "policy_name",
    "prepare_workload",
    "read_nodes",
    "read_pods",
    "run_experiment",
    "scheduler_config",
    "to_nodes",
    "to_pods",
    "typical_pods",
    "typical_pods_args",
]
