"""The scheduler's cache (nodes, bound and assumed pods) and the per-cycle snapshot."""

from ._cache import Cache as Cache
from ._cache import Snapshot as Snapshot

__all__ = ["Cache", "Snapshot"]
