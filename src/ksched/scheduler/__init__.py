"""The engine: the Scheduler and what only it uses (profiles, the plugin registry).

``Scheduler`` drives ``queue/``, ``cache/`` and ``framework/``; its loop is split as
upstream's is: event handlers, the scheduling cycle, the binding cycle, failure handling.
"""

from ._base import PodRecord as PodRecord
from ._base import num_feasible_nodes_to_find as num_feasible_nodes_to_find
from ._diagnosis import AttemptReport as AttemptReport
from ._diagnosis import FitError as FitError
from ._diagnosis import SchedulingEvent as SchedulingEvent
from ._profiles import Registry as Registry
from ._profiles import build_framework as build_framework
from ._profiles import implemented_points as implemented_points
from ._registry import ENTRY_POINT_GROUP as ENTRY_POINT_GROUP
from ._registry import plugin_registry as plugin_registry
from ._scheduler import Scheduler as Scheduler
from ._scheduling_cycle import Evaluation as Evaluation

__all__ = [
    "ENTRY_POINT_GROUP",
    "AttemptReport",
    "Evaluation",
    "FitError",
    "PodRecord",
    "Registry",
    "Scheduler",
    "SchedulingEvent",
    "build_framework",
    "implemented_points",
    "num_feasible_nodes_to_find",
    "plugin_registry",
]
