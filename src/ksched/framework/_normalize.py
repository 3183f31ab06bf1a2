"""Score helpers shared by plugins.

# pkg/scheduler/framework/plugins/helper/normalize_score.go DefaultNormalizeScore
"""

from __future__ import annotations

import numpy as np

from ._interfaces import MAX_NODE_SCORE
from ._table import IntArray

__all__ = ["default_normalize_score", "default_normalize_scores", "trunc_div"]


def trunc_div(a: int, b: int) -> int:
    """Integer division rounding toward zero, as Go's ``/`` on integers."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def default_normalize_score(scores: dict[str, int], *, reverse: bool = False) -> None:
    """Scale ``scores`` in place so the highest becomes 100; ``reverse`` flips them.

    With no positive score, every node gets 0 (or 100 when reversed).
    """
    highest = max(0, max(scores.values(), default=0))
    if highest == 0:
        if reverse:
            for node in scores:
                scores[node] = MAX_NODE_SCORE
        return
    for node, score in scores.items():
        normalized = trunc_div(MAX_NODE_SCORE * score, highest)
        scores[node] = MAX_NODE_SCORE - normalized if reverse else normalized


def default_normalize_scores(scores: IntArray, *, reverse: bool = False) -> None:
    """:func:`default_normalize_score` over an int64 array, in place."""
    if len(scores) == 0:
        return
    highest = int(_max(scores))
    if highest <= 0:  # no positive score
        if reverse:
            scores.fill(MAX_NODE_SCORE)
        return
    if _min(scores) >= 0:
        # In place: floor is Go's truncating division for these non-negative values.
        np.multiply(scores, MAX_NODE_SCORE, out=scores)
        np.floor_divide(scores, highest, out=scores)
    else:
        scaled = MAX_NODE_SCORE * scores
        scores[:] = np.sign(scaled) * (np.abs(scaled) // highest)  # Go's truncating division
    if reverse:
        np.subtract(MAX_NODE_SCORE, scores, out=scores)


_max = np.maximum.reduce
"""``ndarray.max`` without its Python-level wrapper."""
_min = np.minimum.reduce
