"""ksched: the Kubernetes scheduling framework as an asyncio/trio engine."""

from ._errors import ConfigError as ConfigError
from ._errors import KschedError as KschedError
from ._errors import ManifestError as ManifestError
from ._errors import NotFoundError as NotFoundError
from ._errors import SchedulerClosedError as SchedulerClosedError
from .api import Node as Node
from .api import Pod as Pod

__all__ = [
    "ConfigError",
    "KschedError",
    "ManifestError",
    "Node",
    "NotFoundError",
    "Pod",
    "SchedulerClosedError",
]
