"""Scans of a Filter mask over the NodeTable for the first passing rows.

# pkg/scheduler/schedule_one.go findNodesThatPassFilters (the rotating start index)
The same answer as masking the table in the order the per-node path examines it (from
``start``, wrapping around), without a table-sized gather; when the passing rows are
dense, without a table-sized scan either.
"""

from __future__ import annotations

import numpy as np

from .._table import BoolArray, IntArray

__all__ = ["first_passing_rows"]


def first_passing_rows(
    mask: BoolArray, start: int, limit: int, passing_rows: int | None = None
) -> tuple[int, IntArray] | None:
    """The rows of the first ``limit`` passing nodes of the whole table, examined from row
    ``start`` on (rotating), and how many rows that examined; None when none pass.
    ``passing_rows``: the mask's count of True, when known."""
    n = len(mask)
    if limit <= 0:
        passing_rows = 0
    elif passing_rows is None:
        passing_rows = int(np.count_nonzero(mask))  # a popcount: cheap
    if passing_rows == 0 and limit > 0:
        return None
    if limit > 0 and passing_rows > limit:
        found = _in_windows_after(mask, start, limit, passing_rows)
        if found is not None:
            return found
    head = mask[start:].nonzero()[0]
    if 0 < limit <= len(head):
        passing = head[:limit]
    else:
        tail = _first_passing_before(mask, start, limit - len(head))
        if not len(head) and not len(tail):
            return None
        passing = np.concatenate((head, tail + (n - start)))
        if not 0 < limit <= len(passing):
            rows = passing + start
            rows[rows >= n] -= n
            return n, rows
        passing = passing[:limit]
    rows = passing + start
    rows[rows >= n] -= n
    return int(passing[-1]) + 1, rows


def _in_windows_after(
    mask: BoolArray, start: int, limit: int, passing_rows: int
) -> tuple[int, IntArray] | None:
    """The answer from a window after ``start``, widened while it holds too few: as long
    as the passing rows would fill ``limit`` if spread evenly, and more. None when the
    windows reach the end of the table first."""
    n = len(mask)
    window = max(2 * limit, limit * n // passing_rows * 5 // 4) + 1024
    while start + window < n:
        head = mask[start : start + window].nonzero()[0]
        if len(head) >= limit:
            passing = head[:limit]
            return int(passing[-1]) + 1, passing + start
        window *= 4
    return None


def _first_passing_before(mask: BoolArray, stop: int, need: int) -> IntArray:
    """The passing rows before ``stop``, at least the first ``need`` of them when there
    are that many (all of them when ``need`` < 1): windows from row 0 first, as the scan
    after the start index does, so a wrapped scan does not index the whole table."""
    if need > 0:
        window = 2 * need + 1024
        while window < stop:
            found = mask[:window].nonzero()[0]
            if len(found) >= need:
                return found
            window *= 4
    return mask[:stop].nonzero()[0]
