"""ksched: the Kubernetes scheduling framework as an asyncio/trio engine."""

from ._errors import ConfigError as ConfigError
from ._errors import KschedError as KschedError
from ._errors import ManifestError as ManifestError
from ._errors import NotFoundError as NotFoundError
from ._errors import SchedulerClosedError as SchedulerClosedError
from .api import FieldProblem as FieldProblem
from .api import Node as Node
from .api import Pod as Pod
from .api import PodGroup as PodGroup
from .api import PriorityClass as PriorityClass
from .api import load_manifests as load_manifests
from .api import read_manifest as read_manifest
from .api import read_object as read_object
from .api import validate_object as validate_object
from .cluster import ClusterStore as ClusterStore
from .cluster import InMemoryCluster as InMemoryCluster
from .cluster import RecordedEvent as RecordedEvent
from .config import Profile as Profile
from .config import SchedulerConfig as SchedulerConfig
from .config import load_config as load_config
from .config import parse_config as parse_config
from .observability import RestClientMetrics as RestClientMetrics
from .observability import SchedulerMetrics as SchedulerMetrics
from .scheduler import AttemptReport as AttemptReport
from .scheduler import FitError as FitError
from .scheduler import Scheduler as Scheduler
from .scheduler import SchedulingEvent as SchedulingEvent
from .scheduler import plugin_registry as plugin_registry

__all__ = [
    "AttemptReport",
    "ClusterStore",
    "ConfigError",
    "FieldProblem",
    "FitError",
    "InMemoryCluster",
    "KschedError",
    "ManifestError",
    "Node",
    "NotFoundError",
    "Pod",
    "PodGroup",
    "PriorityClass",
    "Profile",
    "RecordedEvent",
    "RestClientMetrics",
    "Scheduler",
    "SchedulerClosedError",
    "SchedulerConfig",
    "SchedulerMetrics",
    "SchedulingEvent",
    "load_config",
    "load_manifests",
    "parse_config",
    "plugin_registry",
    "read_manifest",
    "read_object",
    "validate_object",
]
