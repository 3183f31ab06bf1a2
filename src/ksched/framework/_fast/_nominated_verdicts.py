"""Filter verdicts on nodes that hold nominated pods, kept between scheduling cycles.

# pkg/scheduler/framework/runtime/framework.go (RunFilterPluginsWithNominatedPods)
Every cycle runs the Filter twice on each node holding a nominated pod (with the
higher-or-equal priority nominated pods added, then without). While preemptors queue up,
most of those nodes and their nominations stay as they were from one cycle to the next,
and so do the verdicts: when every Filter that runs for the pod reads only the node
(its Node object and the pods on it) and the pod, the verdict is a function of the
node's info, the nominated pods, and the parts of the pod those Filters read.

Kept per node, a verdict is still checked node by node in every cycle, and a cycle asks
about every node holding nominated pods. A sweep keeps, per pod key, the verdicts on all
those nodes and follows two change logs instead: the table's refreshed rows and the
nominator's changed nodes. A cycle then looks again only at the nodes either log names,
and at the node its own pod is nominated to (whose verdict is never shared).

A pod that fits nowhere (a preemptor) needs every node's status, and the batch pass
that spells them out over thousands of rows costs more than the rest of its cycle.
:class:`RowVerdicts` keeps, per pod key, the single-pass verdict on every table row (as
the row cache keeps masks) and follows the table's refreshed rows: only those are judged
again, by the per-node chain that defines the verdict.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Collection, Hashable, Sequence
from typing import Any, Protocol

import attrs
import numpy as np

from ...api import Pod
from .._capabilities import row_key_function
from .._cycle_state import CycleState
from .._status import Code, Status
from .._table import BoolArray, IntArray, NodeTable
from .._types import NodeInfo, PodInfo

__all__ = [
    "NominatedVerdicts",
    "NominationLog",
    "RowVerdicts",
    "Sweep",
]

_LIMIT = 10_000
_KEYS_LIMIT = 256
_SWEEPS_LIMIT = 16
_ROW_KEYS = 8
"""Pod keys whose verdicts on every row are kept."""


class NominationLog(Protocol):
    """What the queue's collection of nominated node names offers besides the names: the
    log of nodes whose nominated pods changed (or are handed out differently now)."""

    @property
    def cursor(self) -> int:
        """The position after the last logged change."""
        ...

    def changed_since(self, cursor: int) -> Sequence[str] | None:
        """The nodes changed after ``cursor``; None when the log does not reach back."""
        ...

    def node_of(self, uid: str) -> str | None:
        """The node the pod is nominated to."""
        ...


class Sweep:
    """One pod key's verdicts on the nodes holding nominated pods, kept across cycles
    while neither the node's table row nor its nominated pods changed.

    Rejections are also kept by table row (a flag and an index into a few distinct
    statuses), so a cycle takes them all with array operations.
    """

    __slots__ = (
        "_distinct",
        "_epoch",
        "_intern",
        "_log",
        "_own",
        "_rejected",
        "_rows_seen",
        "_seen",
        "_slot",
        "_statuses",
        "_table",
        "_which",
    )

    def __init__(
        self, table: NodeTable, log: NominationLog, intern: Callable[[Status], Status]
    ) -> None:
        self._table = table
        self._epoch = table.epoch
        self._rows_seen = len(table.changed_rows)
        self._log = log
        self._seen = log.cursor
        self._intern = intern
        self._statuses: dict[str, Status] = {}
        self._own: int | None = None
        """The table row of the node the cycle's pod is nominated to."""
        n = len(table)
        self._rejected: BoolArray = np.zeros(n, dtype=np.bool_)
        self._which: IntArray = np.zeros(n, dtype=np.int64)
        self._distinct: list[Status] = []
        self._slot: dict[int, int] = {}
        """Index into ``_distinct`` by the status object's id (statuses are interned)."""

    def _catch_up(self, table: NodeTable, log: NominationLog) -> bool:
        """Forget the verdicts on nodes changed since the last cycle; False when the logs
        do not tell (another table, a new epoch, a log that does not reach back)."""
        if table is not self._table or log is not self._log or table.epoch != self._epoch:
            return False
        changed = log.changed_since(self._seen)
        if changed is None or len(self._distinct) > _KEYS_LIMIT:
            return False
        statuses = self._statuses
        if statuses:
            index, rejected = table.index, self._rejected
            for name in changed:
                if statuses.pop(name, None) is not None:
                    row = index.get(name)
                    if row is not None:
                        rejected[row] = False
            names = table.names
            for row in table.changed_rows[self._rows_seen :]:
                statuses.pop(names[row], None)
                rejected[row] = False
        self._seen = log.cursor
        self._rows_seen = len(table.changed_rows)
        return True

    def _start(self, own: str | None) -> None:
        self._own = None if own is None else self._table.index.get(own)

    def get(self, name: str) -> Status | None:
        """The kept verdict on the node, if any."""
        if self._own is not None and self._table.index.get(name) == self._own:
            return None
        return self._statuses.get(name)

    def keep(self, name: str, status: Status) -> Status:
        """Keep the verdict just made on the node (not on the pod's own nominated node,
        not an error); returns it, or the kept equal object."""
        row = self._table.index.get(name)
        if row is None or row == self._own or status.code is Code.ERROR:
            return status
        status = self._intern(status)
        self._statuses[name] = status
        if not status.is_success:
            slot = self._slot.get(id(status))
            if slot is None:
                slot = self._slot[id(status)] = len(self._distinct)
                self._distinct.append(status)
            self._rejected[row] = True
            self._which[row] = slot
        return status

    @property
    def rejects(self) -> bool:
        """Whether a rejection was ever kept (else :meth:`rejected_at` finds none)."""
        return bool(self._distinct)

    def rejected_at(self, order: IntArray, special: BoolArray) -> BoolArray:
        """Per position of ``order`` (table rows) whether a kept rejection decides it:
        among the ``special`` positions (the nodes holding nominated pods), not the
        pod's own nominated node."""
        own = self._own
        if own is None or not self._rejected[own]:
            decided: BoolArray = self._rejected[order]
        else:
            self._rejected[own] = False
            decided = self._rejected[order]
            self._rejected[own] = True
        decided &= special
        return decided

    def merge(
        self,
        positions: IntArray,
        which: IntArray,
        distinct: list[Status],
        decided: IntArray,
        order: IntArray,
    ) -> tuple[IntArray, IntArray]:
        """Add the kept rejections at the ``decided`` positions to a batch pass's
        rejections (``positions`` ascending, disjoint from them; per position the index
        of its status in ``distinct``), keeping position order. The statuses they use
        join ``distinct`` (each object once)."""
        if not len(decided):
            return positions, which
        # Both position lists are ascending and disjoint: scatter them by position.
        size = max(int(positions[-1]) if len(positions) else -1, int(decided[-1])) + 1
        at = np.full(size, -1, dtype=np.int64)
        at[positions] = which
        self.scatter(at, distinct, decided, order)
        merged = np.flatnonzero(at >= 0)
        return merged, at[merged]

    def scatter(
        self, at: IntArray, distinct: list[Status], decided: IntArray, order: IntArray
    ) -> None:
        """Write the kept rejections at the ``decided`` positions of ``order`` (table
        rows) into ``at`` (per position an index into ``distinct``); the statuses they
        use join ``distinct`` (each object once)."""
        kept = self._which[order[decided]]
        used = np.bincount(kept, minlength=len(self._distinct)).nonzero()[0]
        known = {id(s): k for k, s in enumerate(distinct)}
        renumber = np.zeros(len(self._distinct), dtype=np.int64)
        for slot in used.tolist():
            status = self._distinct[slot]
            k = known.get(id(status))
            if k is None:
                k = known[id(status)] = len(distinct)
                distinct.append(status)
            renumber[slot] = k
        at[decided] = renumber[kept]


class RowVerdicts:
    """One pod key's single-pass Filter verdict on every row of one table epoch: per row
    -1 (passes) or the index of its rejection in :attr:`distinct` (tagged with the
    rejecting plugin; equal rejections share one entry)."""

    __slots__ = ("_slot", "distinct", "epoch", "seen", "which")

    def __init__(self, table: NodeTable, which: IntArray, distinct: Sequence[Status]) -> None:
        self.epoch = table.epoch
        self.seen = len(table.changed_rows)
        """How much of the table's change log the verdicts have taken in."""
        self.which = which
        self.distinct = list(distinct)
        self._slot = {s: k for k, s in enumerate(self.distinct)}

    def catch_up(self, table: NodeTable, judge: Callable[[int], Status]) -> bool:
        """Judge again the rows the table refreshed since; False when that cannot be done
        (another epoch, too many rows, an error, too many distinct statuses)."""
        rows = table.changed_since(self.epoch, self.seen)
        if rows is None:
            return False
        which, slot, distinct = self.which, self._slot, self.distinct
        for row in rows:
            status = judge(row)
            if status.is_success:
                which[row] = -1
                continue
            if status.code is Code.ERROR:
                return False
            k = slot.get(status)
            if k is None:
                if len(distinct) >= _KEYS_LIMIT:
                    return False
                k = slot[status] = len(distinct)
                distinct.append(status)
            which[row] = k
        self.seen = len(table.changed_rows)
        return True

    def mask(self) -> BoolArray:
        """Per row whether the node passes."""
        passing: BoolArray = self.which < 0
        return passing

    def at(self, order: IntArray, stop: int) -> IntArray:
        """Per position of ``order[:stop]`` (table rows) its index into :attr:`distinct`
        (-1: passes), as a new array."""
        out: IntArray = self.which[order[:stop]]
        return out


class _Marks:
    """Which table rows hold nominated pods, kept in step with the nominator's log."""

    __slots__ = ("epoch", "log", "mask", "seen", "table")

    def __init__(self, table: NodeTable, nodes: Collection[str], log: NominationLog) -> None:
        self.table, self.epoch, self.log = table, table.epoch, log
        self.seen = log.cursor
        self.mask: BoolArray = np.zeros(len(table), dtype=np.bool_)
        index = table.index
        for name in nodes:
            row = index.get(name)
            if row is not None:
                self.mask[row] = True


@attrs.define(eq=False, slots=True)
class _Verdict:
    node: NodeInfo
    generation: int
    node_object: object
    nominated: tuple[PodInfo, ...]
    uids: frozenset[str]
    own: bool
    pod_key: tuple[Any, ...]
    status: Status


class NominatedVerdicts:
    """Per node, the last two-pass Filter verdict and what it was decided from."""

    __slots__ = (
        "_eligible",
        "_entries",
        "_key",
        "_keys",
        "_marks",
        "_node_local",
        "_pod",
        "_row_key",
        "_rows",
        "_state",
        "_statuses",
        "_sweeps",
    )

    def __init__(
        self,
        node_local: frozenset[str] = frozenset(),
        row_key: Callable[[Pod], Hashable | None] | None = None,
    ) -> None:
        self._node_local = node_local
        """The Filters whose verdict reads only the node and the pod's declared fields."""
        self._row_key = row_key if row_key is not None else row_key_function(())
        """What those Filters read of a pod."""
        self._entries: dict[str, _Verdict] = {}
        self._eligible: dict[frozenset[str], bool] = {}
        self._state: CycleState | None = None
        self._pod: Pod | None = None
        self._key: tuple[Any, ...] | None = None
        self._keys: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self._statuses: dict[Status, Status] = {}
        """Kept verdicts by value: equal verdicts on different nodes are one object, so a
        diagnosis counts its distinct statuses, not its nodes."""
        self._sweeps: dict[tuple[Any, ...], Sweep] = {}
        self._marks: _Marks | None = None
        self._rows: OrderedDict[Hashable, RowVerdicts] = OrderedDict()

    def row_verdicts(
        self, key: Hashable, table: NodeTable, judge: Callable[[int], Status]
    ) -> RowVerdicts | None:
        """The verdicts kept for ``key`` (what the node-local Filters read of the pod and
        the Filters the cycle skips) on every row, brought up to date with ``judge(row)``
        (the row's status from the per-node chain); None when none are kept."""
        kept = self._rows.get(key)
        if kept is None:
            return None
        if not kept.catch_up(table, judge):
            del self._rows[key]
            return None
        self._rows.move_to_end(key)
        return kept

    def keep_row_verdicts(
        self, key: Hashable, table: NodeTable, which: IntArray, distinct: Sequence[Status]
    ) -> RowVerdicts:
        """Keep the verdicts just made on every row of ``table`` (see :class:`RowVerdicts`)."""
        kept = self._rows[key] = RowVerdicts(table, which, distinct)
        self._rows.move_to_end(key)
        if len(self._rows) > _ROW_KEYS:
            self._rows.popitem(last=False)
        return kept

    def sweep(
        self,
        state: CycleState,
        pod: Pod,
        filters: Sequence[tuple[str, object]],
        table: NodeTable,
        nodes: Collection[str],
    ) -> Sweep | None:
        """This cycle's sweep over the nominated ``nodes`` (the queue's collection of
        them, which logs their changes), or None when verdicts cannot be kept for the
        pod (see :meth:`key`) or ``nodes`` keeps no log."""
        log: NominationLog | None = _log_of(nodes)
        key = self.key(state, pod, filters) if log is not None else None
        if key is None or log is None:
            return None
        try:
            sweep = self._sweeps.get(key)
        except TypeError:  # an unhashable part
            return None
        if sweep is None or not sweep._catch_up(table, log):
            if len(self._sweeps) >= _SWEEPS_LIMIT:
                self._sweeps.clear()
            sweep = self._sweeps[key] = Sweep(table, log, self._intern_status)
        sweep._start(log.node_of(pod.uid))
        return sweep

    def _intern_status(self, status: Status) -> Status:
        """The kept status equal to ``status`` (equal verdicts share one object)."""
        if len(self._statuses) >= _KEYS_LIMIT:
            self._statuses.clear()
        return self._statuses.setdefault(status, status)

    def nominated_rows(self, table: NodeTable, nodes: Collection[str]) -> BoolArray:
        """Per table row whether the node is in ``nodes``: kept and brought up to date
        from the nominator's log when ``nodes`` keeps one. Read-only for callers."""
        log = _log_of(nodes)
        marks = self._marks
        if log is None:
            return _Marks(table, nodes, _NO_LOG).mask
        if marks is None or marks.table is not table or marks.log is not log:
            marks = self._marks = _Marks(table, nodes, log)
            return marks.mask
        changed = log.changed_since(marks.seen) if marks.epoch == table.epoch else None
        if changed is None or len(marks.mask) != len(table):
            marks = self._marks = _Marks(table, nodes, log)
            return marks.mask
        index, mask = table.index, marks.mask
        for name in changed:
            row = index.get(name)
            if row is not None:
                mask[row] = name in nodes
        marks.seen = log.cursor
        return mask

    def key(
        self, state: CycleState, pod: Pod, filters: Sequence[tuple[str, object]]
    ) -> tuple[Any, ...] | None:
        """The pod's key for this cycle, or None when a Filter that runs for it is not
        node-local (see the module docstring) or its calls are timed one by one."""
        if self._state is state and self._pod is pod:
            return self._key
        skip = frozenset(state.skip_filter_plugins)
        eligible = self._eligible.get(skip)
        if eligible is None:
            local = self._node_local
            eligible = all(n in local for n, _ in filters if n not in skip)
            self._eligible[skip] = eligible
        key = None
        if eligible and not state.record_plugin_metrics:
            fields = self._row_key(pod)
            # What those Filters read of the pod, with its priority (which nominated pods
            # count) and the Filters the cycle skips.
            key = None if fields is None else self._intern((pod.priority, fields, skip))
        self._state, self._pod, self._key = state, pod, key
        return key

    def _intern(self, key: tuple[Any, ...]) -> tuple[Any, ...]:
        """The kept key equal to ``key``, so entries match it by identity."""
        try:
            kept = self._keys.get(key)
        except TypeError:  # an unhashable part: compared per node instead
            return key
        if kept is None:
            if len(self._keys) >= _KEYS_LIMIT:
                self._keys.clear()
            self._keys[key] = kept = key
        return kept

    def get(
        self, node: NodeInfo, nominated: Sequence[PodInfo], pod: Pod, key: tuple[Any, ...]
    ) -> Status | None:
        entry = self._entries.get(node.name)
        if (
            entry is None
            or entry.node is not node
            or entry.generation != node.generation
            or entry.node_object is not node.node
            or len(entry.nominated) != len(nominated)
            or not (entry.pod_key is key or entry.pod_key == key)
        ):
            return None
        for kept, current in zip(entry.nominated, nominated, strict=True):
            if kept is not current:
                return None
        # The same nominated pods: whether the pod is one of them, by their kept uids.
        if (pod.uid in entry.uids) != entry.own:
            return None
        return entry.status

    def put(
        self,
        node: NodeInfo,
        nominated: Sequence[PodInfo],
        pod: Pod,
        key: tuple[Any, ...],
        status: Status,
    ) -> None:
        if len(self._entries) >= _LIMIT:
            self._entries.clear()
        status = self._intern_status(status)
        uids = frozenset(p.pod.uid for p in nominated)
        self._entries[node.name] = _Verdict(
            node,
            node.generation,
            node.node,
            tuple(nominated),
            uids,
            pod.uid in uids,
            key,
            status,
        )


class _NoLog:
    cursor = 0

    def changed_since(self, cursor: int) -> Sequence[str] | None:
        return None

    def node_of(self, uid: str) -> str | None:
        return None


_NO_LOG = _NoLog()


def _log_of(nodes: Collection[str]) -> NominationLog | None:
    """``nodes`` as a nomination log, when it is one (the queue's collection)."""
    if hasattr(type(nodes), "changed_since"):
        return nodes  # type: ignore[return-value]  # a NominationLog: it has the methods
    return None
