"""The ClusterStore seam and InMemoryCluster, the embedded cluster."""

from ._memory import InMemoryCluster as InMemoryCluster
from ._memory import RecordedEvent as RecordedEvent
from ._store import KINDS as KINDS
from ._store import ClusterListener as ClusterListener
from ._store import ClusterStore as ClusterStore
from ._store import EventRecorder as EventRecorder
from ._store import SyncBinder as SyncBinder
from ._store import object_key as object_key

__all__ = [
    "KINDS",
    "ClusterListener",
    "ClusterStore",
    "EventRecorder",
    "InMemoryCluster",
    "RecordedEvent",
    "SyncBinder",
    "object_key",
]
