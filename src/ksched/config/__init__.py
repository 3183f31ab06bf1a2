"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): profiles, defaults,
validation, and the connection and leader-election settings ``ksched run`` reads."""

from ._connection import JITTER_FACTOR as JITTER_FACTOR
from ._connection import PROTOBUF as PROTOBUF
from ._connection import ClientConnection as ClientConnection
from ._connection import LeaderElection as LeaderElection
from ._connection import parse_client_connection as parse_client_connection
from ._connection import parse_leader_election as parse_leader_election
from ._extenders import ExtenderConfig as ExtenderConfig
from ._extenders import ManagedResource as ManagedResource
from ._nearest import nearest_name as nearest_name
from ._plugin_names import check_plugin_names as check_plugin_names
from ._plugin_names import unregistered_plugin as unregistered_plugin
from ._scheduler_config import API_VERSION as API_VERSION
from ._scheduler_config import DEFAULT_PLUGIN_ARGS as DEFAULT_PLUGIN_ARGS
from ._scheduler_config import DEFAULT_PLUGINS as DEFAULT_PLUGINS
from ._scheduler_config import EXTENSION_POINTS as EXTENSION_POINTS
from ._scheduler_config import PLUGIN_TYPES as PLUGIN_TYPES
from ._scheduler_config import REMOVED_PLUGINS as REMOVED_PLUGINS
from ._scheduler_config import PluginRef as PluginRef
from ._scheduler_config import PluginSet as PluginSet
from ._scheduler_config import Profile as Profile
from ._scheduler_config import SchedulerConfig as SchedulerConfig
from ._scheduler_config import config_yaml as config_yaml
from ._scheduler_config import dump_config as dump_config
from ._scheduler_config import expand_points as expand_points
from ._scheduler_config import load_config as load_config
from ._scheduler_config import parse_config as parse_config
from ._scheduler_config import plugin_names as plugin_names

__all__ = [
    "API_VERSION",
    "DEFAULT_PLUGINS",
    "DEFAULT_PLUGIN_ARGS",
    "EXTENSION_POINTS",
    "JITTER_FACTOR",
    "PLUGIN_TYPES",
    "PROTOBUF",
    "REMOVED_PLUGINS",
    "ClientConnection",
    "ExtenderConfig",
    "LeaderElection",
    "ManagedResource",
    "PluginRef",
    "PluginSet",
    "Profile",
    "SchedulerConfig",
    "check_plugin_names",
    "config_yaml",
    "dump_config",
    "expand_points",
    "load_config",
    "nearest_name",
    "parse_client_connection",
    "parse_config",
    "parse_leader_election",
    "plugin_names",
    "unregistered_plugin",
]
