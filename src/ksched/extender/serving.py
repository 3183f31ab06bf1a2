"""The serving side of the extender protocol: a profile's plugins for other schedulers.

Kept apart from :mod:`ksched.extender` (the client the engine calls) because it runs a
Scheduler of its own.
"""

from ._serve import EXTENDER_LIMITS as EXTENDER_LIMITS
from ._serve import extender_serving as extender_serving
from ._serve import serve_extender as serve_extender
from ._server import ExtenderServer as ExtenderServer
from ._server import ServedCluster as ServedCluster

__all__ = [
    "EXTENDER_LIMITS",
    "ExtenderServer",
    "ServedCluster",
    "extender_serving",
    "serve_extender",
]
