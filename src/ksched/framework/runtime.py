"""The runtime that runs one profile's plugins, for the engine and for tools.

# pkg/scheduler/framework/runtime/framework.go
:class:`Framework` runs a profile's plugins at each extension point: a plain per-node
reference path, and beside it the fast paths (batch forms, kept masks and columns,
nominated verdicts) that return the same outcome or decline. The well-known cluster
events are the ones the engine itself raises.
"""

from ._calls import FilterOutcome as FilterOutcome
from ._calls import ScoreOutcome as ScoreOutcome
from ._events import ASSIGNED_POD_ADD as ASSIGNED_POD_ADD
from ._events import ASSIGNED_POD_DELETE as ASSIGNED_POD_DELETE
from ._events import FORCE_ACTIVATE as FORCE_ACTIVATE
from ._events import NODE_ADD as NODE_ADD
from ._events import NODE_DELETE as NODE_DELETE
from ._events import UNSCHEDULABLE_TIMEOUT as UNSCHEDULABLE_TIMEOUT
from ._events import UNSCHEDULED_POD_ADD as UNSCHEDULED_POD_ADD
from ._fast._opportunistic import OpportunisticBatch as OpportunisticBatch
from ._metrics import MetricsRecorder as MetricsRecorder
from ._profile import describe_fast_paths as describe_fast_paths
from ._runtime import Framework as Framework
from ._waiting import WaitingPods as WaitingPods

__all__ = [
    "ASSIGNED_POD_ADD",
    "ASSIGNED_POD_DELETE",
    "FORCE_ACTIVATE",
    "NODE_ADD",
    "NODE_DELETE",
    "UNSCHEDULABLE_TIMEOUT",
    "UNSCHEDULED_POD_ADD",
    "FilterOutcome",
    "Framework",
    "MetricsRecorder",
    "OpportunisticBatch",
    "ScoreOutcome",
    "WaitingPods",
    "describe_fast_paths",
]
