"""The scheduling queue: activeQ, backoffQ, the unschedulable pool, PreEnqueue gating,
cluster events and queueing hints, nominated pods."""

from ._backoff import backoff_duration_ns as backoff_duration_ns
from ._entry import QueuedPod as QueuedPod
from ._pod_events import pod_scheduling_properties_change as pod_scheduling_properties_change
from ._queue import BACKOFF_FLUSH_PERIOD as BACKOFF_FLUSH_PERIOD
from ._queue import DEFAULT_POD_INITIAL_BACKOFF as DEFAULT_POD_INITIAL_BACKOFF
from ._queue import DEFAULT_POD_MAX_BACKOFF as DEFAULT_POD_MAX_BACKOFF
from ._queue import DEFAULT_POD_MAX_IN_UNSCHEDULABLE as DEFAULT_POD_MAX_IN_UNSCHEDULABLE
from ._queue import UNSCHEDULABLE_FLUSH_PERIOD as UNSCHEDULABLE_FLUSH_PERIOD
from ._queue import SchedulingQueue as SchedulingQueue

__all__ = [
    "BACKOFF_FLUSH_PERIOD",
    "DEFAULT_POD_INITIAL_BACKOFF",
    "DEFAULT_POD_MAX_BACKOFF",
    "DEFAULT_POD_MAX_IN_UNSCHEDULABLE",
    "UNSCHEDULABLE_FLUSH_PERIOD",
    "QueuedPod",
    "SchedulingQueue",
    "backoff_duration_ns",
    "pod_scheduling_properties_change",
]
