"""The scheduler against a real cluster: kube-apiserver watch caches, binding, status,
Events, leader election, and the ``ksched run`` command."""

from ..config import ClientConnection as ClientConnection
from ..config import LeaderElection as LeaderElection
from ..observability import HealthServer as HealthServer
from ._client import ApiError as ApiError
from ._client import ConflictError as ConflictError
from ._client import KubeClient as KubeClient
from ._client import TokenBucket as TokenBucket
from ._kubeconfig import KubeConfig as KubeConfig
from ._kubeconfig import in_cluster_config as in_cluster_config
from ._kubeconfig import load_kubeconfig as load_kubeconfig
from ._leader import LeaderElector as LeaderElector
from ._leader import LeadershipLostError as LeadershipLostError
from ._reflector import RESOURCES as RESOURCES
from ._reflector import Reflector as Reflector
from ._reflector import Resource as Resource
from ._run import RunOptions as RunOptions
from ._run import resolve_kubeconfig as resolve_kubeconfig
from ._run import run as run
from ._store import KubeCluster as KubeCluster
from ._store import NodeChangedError as NodeChangedError
from ._store import NotLeaderError as NotLeaderError
from ._writer import Writer as Writer

__all__ = [
    "RESOURCES",
    "ApiError",
    "ClientConnection",
    "ConflictError",
    "HealthServer",
    "KubeClient",
    "KubeCluster",
    "KubeConfig",
    "LeaderElection",
    "LeaderElector",
    "LeadershipLostError",
    "NodeChangedError",
    "NotLeaderError",
    "Reflector",
    "Resource",
    "RunOptions",
    "TokenBucket",
    "Writer",
    "in_cluster_config",
    "load_kubeconfig",
    "resolve_kubeconfig",
    "run",
]
