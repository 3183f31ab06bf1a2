"""Filter masks and raw Score columns of recent pod signatures, kept row by row.

# pkg/scheduler/framework/runtime/signature.go
Two pods with equal signatures get the same Filter verdict and the same raw score on a
node in the same state. When every Filter that runs for a pod reads only the node and the
pod (node-local), its batch mask over the NodeTable is a function of what those Filters
read of the pod (their declared fields: ``Framework.row_key``), the
Filters it skips and each row: the mask of an earlier equal pod stays right on every row
the table has not refreshed since, and only the refreshed rows are judged again (by the
per-node chain, which defines the verdict). Score columns of plugins whose raw score is a
function of the row alone are kept the same way, over the whole table, and read at the
feasible rows. NormalizeScore still runs on what was read, per pod.

A Score column costs a whole-table batch call to build, so it is built the second time a
signature asks (a pod seen once pays nothing extra). A table rebuilt (nodes came or went)
starts a new epoch: what was kept is built again.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import attrs
import numpy as np

from .._interfaces import MAX_NODE_SCORE, MIN_NODE_SCORE
from .._table import BoolArray, IntArray, NodeTable

__all__ = ["RowCache"]

_KEYS = 8
"""Signatures whose masks (and, apart, whose score columns) are kept."""
_ASKED = 64
"""Signatures remembered as asked for a score column once."""
_PER_ROW = 16
"""Up to this many changed rows a column is refreshed per node, not by the batch form."""


@attrs.define(eq=False, slots=True)
class _Kept:
    epoch: int
    seen: int
    """How much of the table's change log this view has taken in."""
    values: np.ndarray[Any, Any]
    """A BoolArray mask or an IntArray column over the table's rows."""
    count: int = -1
    """A mask's passing rows (-1 until counted), kept in step as rows are judged again."""


class RowCache:
    """One profile's kept Filter masks and Score columns, by key (signature and skips)."""

    def __init__(self) -> None:
        self._masks: OrderedDict[Hashable, _Kept] = OrderedDict()
        self._columns: OrderedDict[tuple[Hashable, Hashable], _Kept] = OrderedDict()
        self._asked: OrderedDict[Hashable, None] = OrderedDict()

    def clear(self) -> None:
        """Forget everything kept."""
        self._masks.clear()
        self._columns.clear()
        self._asked.clear()

    def mask(
        self, key: Hashable, table: NodeTable, judge: Callable[[int], bool | None]
    ) -> tuple[BoolArray, int] | None:
        """The kept Filter mask for ``key``, brought up to date with ``judge(row)`` (the
        row's verdict; None when it cannot be had), and how many rows pass; None when
        no usable mask is kept.

        The mask is the cache's own: read it, do not change it."""
        kept = self._masks.get(key)
        if kept is None:
            return None

        def refresh(rows: list[int]) -> bool:
            values, count = kept.values, kept.count
            for row in rows:
                verdict = judge(row)
                if verdict is None:
                    return False
                if count >= 0 and bool(values[row]) != verdict:
                    count += 1 if verdict else -1
                values[row] = verdict
            kept.count = count
            return True

        if not _catch_up(kept, table, refresh):
            del self._masks[key]
            return None
        self._masks.move_to_end(key)
        mask: BoolArray = kept.values
        if kept.count < 0:
            kept.count = int(np.count_nonzero(mask))
        return mask, kept.count

    def keep_mask(self, key: Hashable, table: NodeTable, mask: BoolArray) -> None:
        """Keep (a copy of) the mask just computed over the whole ``table``."""
        self._masks[key] = _Kept(table.epoch, len(table.changed_rows), mask.copy())
        self._masks.move_to_end(key)
        if len(self._masks) > _KEYS:
            self._masks.popitem(last=False)

    def scores(
        self,
        key: Hashable,
        plugin: Hashable,
        table: NodeTable,
        rows: IntArray,
        score_rows: Callable[[IntArray], IntArray | None],
        score_row: Callable[[int], int],
        high: int = MAX_NODE_SCORE,
    ) -> IntArray | None:
        """Raw scores at ``rows`` from the kept column of ``plugin`` for ``key``; None
        when there is none to read (the caller scores ``rows`` itself). The column is
        built with ``score_rows(rows)`` (the batch form) and brought up to date row by
        row with ``score_row(row)`` (the per-node method: cheaper for a few rows). Every
        kept score is within [MIN_NODE_SCORE, ``high``]: a column that would hold
        another is dropped, so the caller's own scoring reports it.

        ``plugin`` names the column: a plugin's name, or a tuple of names for a column of
        several plugins' weighted sums (``high`` then bounds the sum)."""
        slot = (key, plugin)
        kept = self._columns.get(slot)
        n = len(table)
        if kept is not None:
            column = kept.values

            def refresh(changed: list[int]) -> bool:
                if len(changed) <= _PER_ROW:
                    for row in changed:
                        value = score_row(row)
                        if not MIN_NODE_SCORE <= value <= high:
                            return False
                        column[row] = value
                    return True
                at = np.array(changed, dtype=np.int64)
                fresh = score_rows(at)
                if fresh is None or not _is_column(fresh, len(at)) or not _in_range(fresh, high):
                    return False
                column[at] = fresh
                return True

            if not _catch_up(kept, table, refresh):
                del self._columns[slot]
                kept = None
        if kept is None:
            if key not in self._asked:
                self._asked[key] = None
                if len(self._asked) > _ASKED:
                    self._asked.popitem(last=False)
                return None
            values = score_rows(np.arange(n, dtype=np.int64))
            if values is None or not _is_column(values, n) or not _in_range(values, high):
                return None
            kept = self._columns[slot] = _Kept(table.epoch, len(table.changed_rows), values)
            if len(self._columns) > _KEYS * 4:
                self._columns.popitem(last=False)
        self._columns.move_to_end(slot)
        out: IntArray = kept.values[rows]  # indexing: about twice as fast as .take here
        return out


def _catch_up(kept: _Kept, table: NodeTable, refresh: Callable[[list[int]], bool]) -> bool:
    """Bring ``kept`` up to the table's change log with ``refresh(rows)``; False when it
    cannot be (another epoch, too many rows, or ``refresh`` failed)."""
    rows = table.changed_since(kept.epoch, kept.seen)
    if rows is None or (rows and not refresh(rows)):
        return False
    kept.seen = len(table.changed_rows)
    return True


def _in_range(values: IntArray, high: int = MAX_NODE_SCORE) -> bool:
    return not len(values) or (int(values.min()) >= MIN_NODE_SCORE and int(values.max()) <= high)


def _is_column(values: object, size: int) -> bool:
    return isinstance(values, np.ndarray) and values.dtype == np.int64 and values.shape == (size,)
