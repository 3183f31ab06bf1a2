"""Arithmetic dry-run outcomes by NodeTable row, for whole visits at array speed.

# pkg/scheduler/framework/preemption/preemption.go (DryRunPreemption,
# pickOneNodeForPreemption)
The :class:`~._visit_cache.VisitCache` keeps each node's last outcome and checks it node
by node. Between preemptors of one kind (PreemptionBasic's 500) nearly every node's
outcome is the kept one, and that check becomes the cost. Here the outcomes kept for one
preemptor key sit in arrays over the snapshot's table rows, each with the generation of
the NodeInfo it was decided on: one comparison with the table's generation column says
which rows still hold (a generation names one version of one node). Finding the first
candidates from the offset, and the best of them, are then array operations.

Only outcomes decided by the Fit comparisons, without disruption budgets and independent
of the clock are kept here. A node with nominated pods is kept too when the nominator
logs its changes (the queue's collection of nominated nodes does): a row whose nominated
pods changed since is forgotten, as is, for each preemptor, the node it is itself
nominated to. Without such a log those nodes are visited every time.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Protocol

import numpy as np

from ...framework.batch import NodeTable
from ._candidates import Candidate, Victims, rank_of
from ._visit_cache import Outcome

__all__ = [
    "CANDIDATE",
    "FAILED",
    "PASSED",
    "UNKNOWN",
    "NominationLog",
    "RowPlane",
    "VisitRows",
    "kind_of",
    "log_of",
]

UNKNOWN, CANDIDATE, FAILED, PASSED = 0, 1, 2, 3
"""What a row holds: nothing kept, a candidate, a failure status, passed over."""

_PLANES_LIMIT = 16
_NO_GENERATION = np.iinfo(np.int64).min
_NO_CANDIDATE = Candidate("", Victims(()))


class NominationLog(Protocol):
    """The nominator's log of changed nodes, as the queue's collection of nominated node
    names keeps it (see ``ksched.queue``'s nominator)."""

    @property
    def cursor(self) -> int: ...

    def changed_since(self, cursor: int) -> Sequence[str] | None: ...

    def node_of(self, uid: str) -> str | None: ...


def log_of(names: Collection[str]) -> NominationLog | None:
    """``names`` (the handle's nominated node names) as a log, when it keeps one."""
    if hasattr(type(names), "changed_since"):
        return names  # type: ignore[return-value]  # it has the log's methods
    return None


def kind_of(outcome: Outcome) -> int:
    candidate, status = outcome
    if candidate is not None:
        return CANDIDATE
    return PASSED if status is None else FAILED


class RowPlane:
    """One preemptor key's kept outcomes, by row of one table layout."""

    __slots__ = (
        "candidates",
        "column",
        "count",
        "earliest",
        "generation",
        "kind",
        "log",
        "outcomes",
        "seen",
        "top",
        "total",
        "unstarted",
    )

    def __init__(self, table: NodeTable) -> None:
        n = len(table)
        self.column = table.generation
        """The table's generation column (a rebuilt table has a new one)."""
        self.kind = np.zeros(n, dtype=np.int8)
        self.generation = np.full(n, _NO_GENERATION, dtype=np.int64)
        self.outcomes: list[Outcome | None] = [None] * n
        self.candidates: list[Candidate] = [_NO_CANDIDATE] * n
        """Per row the kept candidate (meaningful where the kind is CANDIDATE)."""
        # pickOneNodeForPreemption's criteria per candidate row (see _candidates._rank).
        self.top = np.zeros(n, dtype=np.int64)
        self.total = np.zeros(n, dtype=np.int64)
        self.count = np.zeros(n, dtype=np.int64)
        self.earliest = np.zeros(n, dtype=np.float64)
        self.unstarted = np.zeros(n, dtype=np.bool_)
        self.log: NominationLog | None = None
        """The nominator's log the kept rows follow (None: no row with nominated pods kept)."""
        self.seen = 0
        """The log's cursor when the rows were last brought up to date."""

    def forget(self, names: Iterable[str], index: Mapping[str, int]) -> None:
        """Forget the outcomes kept on these nodes."""
        generation = self.generation
        for name in names:
            row = index.get(name)
            if row is not None:
                generation[row] = _NO_GENERATION

    def forget_all(self) -> None:
        self.generation.fill(_NO_GENERATION)

    def kinds_from(self, start: int, size: int) -> np.ndarray[tuple[int], np.dtype[np.int8]]:
        """The kept kinds of ``size`` rows from row ``start`` on (wrapping), UNKNOWN where
        the node changed since."""
        stop = start + size
        n = len(self.kind)
        if stop <= n:
            kept = self.generation[start:stop] == self.column[start:stop]
            return np.where(kept, self.kind[start:stop], np.int8(UNKNOWN))
        head = self.kinds_from(start, n - start)
        return np.concatenate((head, self.kinds_from(0, stop - n)))

    def store(self, row: int, generation: int, outcome: Outcome) -> None:
        kind = kind_of(outcome)
        self.kind[row] = kind
        self.generation[row] = generation
        self.outcomes[row] = outcome
        candidate = outcome[0]
        if candidate is not None:
            self.candidates[row] = candidate
            _, top, total, count, earliest, unstarted = rank_of(candidate.victims)
            self.top[row], self.total[row], self.count[row] = top, total, count
            self.earliest[row], self.unstarted[row] = earliest, unstarted


class VisitRows:
    """The row planes, one per interned preemptor key."""

    __slots__ = ("_planes",)

    def __init__(self) -> None:
        self._planes: dict[object, RowPlane] = {}

    def plane(self, key: object, table: NodeTable) -> RowPlane | None:
        """The key's plane for ``table``'s layout (a new one after a rebuild); None for a
        key that cannot be kept (unhashable)."""
        try:
            plane = self._planes.get(key)
        except TypeError:
            return None
        if plane is None or plane.column is not table.generation:
            if len(self._planes) >= _PLANES_LIMIT:
                self._planes.clear()
            self._planes[key] = plane = RowPlane(table)
        return plane


def pick_best(
    candidates: list[Candidate],
    top: np.ndarray[tuple[int], np.dtype[np.int64]],
    total: np.ndarray[tuple[int], np.dtype[np.int64]],
    count: np.ndarray[tuple[int], np.dtype[np.int64]],
    earliest: np.ndarray[tuple[int], np.dtype[np.float64]],
    unstarted: np.ndarray[tuple[int], np.dtype[np.bool_]],
    now: float,
) -> Candidate:
    """pickOneNodeForPreemption over candidates without PDB violations, by arrays of their
    ranks: each criterion in turn keeps the best; ties go to the first candidate."""
    keep = np.ones(len(candidates), dtype=np.bool_)
    for column in (top, total, count):
        keep &= column == column[keep].max()
    start = np.where(unstarted & (now < earliest), now, earliest)
    keep &= start == start[keep].max()
    return candidates[int(np.argmax(keep))]
