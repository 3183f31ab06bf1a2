"""Garbage-collector settings for the batch commands (``ksched simulate``, ``ksched bench``)."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["few_collections"]


@contextlib.contextmanager
def few_collections() -> Iterator[None]:
    """Rare cyclic garbage collections while the block runs, as in a batch compiler.

    A simulation or a benchmark builds objects that live to its end (the inputs, the
    cluster, the engine's state: millions at 50 000 nodes); with the default thresholds
    the collector walks them all again and again and finds almost nothing.
    """
    thresholds = gc.get_threshold()
    gc.set_threshold(200_000, 30, 30)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
