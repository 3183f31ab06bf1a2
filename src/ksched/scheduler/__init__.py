"""The engine: the Scheduler and what only it uses (profiles, the plugin registry).

``Scheduler`` drives ``queue/``, ``cache/`` and ``framework/``; its parts are collaborators
split as upstream's files are: event handlers, the scheduling cycle and algorithm, the
binding cycle, failure handling, the pod-group cycle (see ``_state``).
"""

from ._algorithm import Evaluation as Evaluation
from ._diagnosis import AttemptReport as AttemptReport
from ._diagnosis import FitError as FitError
from ._diagnosis import SchedulingEvent as SchedulingEvent
from ._profiles import Registry as Registry
from ._profiles import build_framework as build_framework
from ._profiles import implemented_points as implemented_points
from ._registry import ENTRY_POINT_GROUP as ENTRY_POINT_GROUP
from ._registry import plugin_registry as plugin_registry
from ._scheduler import Scheduler as Scheduler
from ._state import PodRecord as PodRecord
from ._state import num_feasible_nodes_to_find as num_feasible_nodes_to_find

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
