"""What the fast paths keep between cycles, and the switches that turn each off."""

from __future__ import annotations

import attrs

from ._nominated_verdicts import NominatedVerdicts
from ._row_cache import RowCache

__all__ = ["Kept"]


@attrs.define(eq=False)
class Kept:
    """One profile's kept masks, columns and verdicts; the differential tests flip the
    switches to compare each fast path with the reference path."""

    row_cache: RowCache
    """Filter masks and Score columns kept per pod key between cycles."""
    nominated: NominatedVerdicts
    """Per node: the two-pass Filter verdict, for pods whose Filters are node-local; and
    every row's verdict for pods that fit nowhere."""
    batching: bool = True
    """Use plugins' batch forms when the snapshot's table allows (off: per node only)."""
    verdict_cache: bool = True
    """Keep Filter verdicts between cycles when the pod's Filters are node-local."""
    use_row_cache: bool = True
    """Read kept masks and columns for equal pods (off: batch forms every cycle)."""
