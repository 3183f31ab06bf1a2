"""Scheduler extenders, both sides: the client the engine calls after its Filter and Score
plugins (and for Bind and preemption), and ``ksched extender serve``, which serves a
profile's plugins to other schedulers over the same wire format.

The engine imports this package for the client; the serving side, which runs a Scheduler
of its own, is :mod:`ksched.extender.serving`.
"""

from ._client import ExtenderClient as ExtenderClient
from ._client import ExtenderError as ExtenderError
from ._client import FilterResult as FilterResult
from ._json import node_json as node_json
from ._json import pod_json as pod_json
from ._wire import MAX_EXTENDER_PRIORITY as MAX_EXTENDER_PRIORITY

__all__ = [
    "MAX_EXTENDER_PRIORITY",
    "ExtenderClient",
    "ExtenderError",
    "FilterResult",
    "node_json",
    "pod_json",
]
