"""Garbage-collector settings for the batch commands (``ksched simulate``, ``ksched bench``)."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["few_collections", "kept_for_the_run"]


@contextlib.contextmanager
def few_collections() -> Iterator[None]:
    """Rare cyclic garbage collections while the block runs, as in a batch compiler.

    A simulation or a benchmark builds objects that live to its end (the inputs, the
    cluster, the engine's state: millions at 50 000 nodes); with the default thresholds
    the collector walks them all again and again, a sixth of a large simulation's time,
    and finds almost nothing.
    """
    thresholds = gc.get_threshold()
    gc.set_threshold(200_000, 30, 30)
    try:
        yield
    finally:
        gc.unfreeze()  # what kept_for_the_run set aside goes back to the collector
        gc.set_threshold(*thresholds)


@contextlib.contextmanager
def kept_for_the_run() -> Iterator[None]:
    """No collection while the block runs, and what it leaves is set aside (``gc.freeze``)
    from the collections that follow: the inputs read live to the end of the run and
    hold no cycles; walking them again and again would find nothing."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        gc.freeze()
    finally:
        if enabled:
            gc.enable()
