"""One order of simultaneous tasks per seed, so a simulation's outcome is its seed's.

Trio picks the order in which tasks that became runnable together run with a random
generator of its own (reversing each batch half the time); this is how it brings out
order bugs in tests. In a simulation the scheduler and the workload controllers often
become runnable at the same simulated instant (a DaemonSet's pods created while pods
from a manifest are queued), and which runs first decides which pod is popped first.
Seeding that generator (as property-testing libraries do for trio) makes a run
reproducible: the same inputs and seed give the same report, run after run.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator

__all__ = ["task_order_seeded"]


def _trio_generator() -> random.Random | None:
    try:
        from trio._core import _run
    except ImportError:  # pragma: no cover - a trio without the module
        return None
    generator = getattr(_run, "_r", None)
    return generator if isinstance(generator, random.Random) else None


@contextlib.contextmanager
def task_order_seeded(seed: int) -> Iterator[None]:
    """While the block runs, trio orders simultaneous tasks by ``seed``; afterwards
    its generator goes on from where it was."""
    generator = _trio_generator()
    if generator is None:  # pragma: no cover
        yield
        return
    state = generator.getstate()
    generator.seed(seed)
    try:
        yield
    finally:
        generator.setstate(state)
