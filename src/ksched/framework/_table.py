"""A columnar view of the snapshot's nodes, for plugins' batch forms.

One row per node, in the snapshot's node order: allocatable and requested amounts as
int64 columns, a few per-node flags, and indexes that tell which rows need a closer look
(tainted nodes, nodes holding an image). Batch forms evaluate every row with a handful of
array operations and hand the rare rows that need it to the per-node method, so their
results equal the per-node path exactly.

The snapshot keeps the table in step, row by row, as NodeInfos change.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from typing import overload

import numpy as np
import numpy.typing as npt

from ._types import NodeInfo

__all__ = ["BoolArray", "IntArray", "NodeRows", "NodeTable"]

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

EXACT_LIMIT = 1 << 53
"""Above this an amount may not convert exactly to float64, nor multiply by 100 in int64:
the table then reports itself inexact and batch forms step aside."""

_EPOCHS = itertools.count(1)
MAX_REFRESH = 4096
"""Above this many refreshed rows a kept view is dropped, not brought up to date."""
_CHANGE_LOG_LIMIT = 1 << 16
"""Rows logged before the log starts over under a new epoch (kept views then rebuild)."""

_AMOUNTS = (
    "alloc_cpu",
    "alloc_memory",
    "alloc_ephemeral",
    "alloc_pods",
    "req_cpu",
    "req_memory",
    "req_ephemeral",
    "nonzero_cpu",
    "nonzero_memory",
    "pod_count",
    "free_cpu",
    "free_memory",
    "free_ephemeral",
    "free_pods",
)
"""The int64 amount columns, in the order of the lines of ``NodeTable._amounts``."""

_HARD_EFFECTS = frozenset({"NoSchedule", "NoExecute"})
_SOFT_EFFECT = "PreferNoSchedule"


class NodeTable:
    """Per-node columns aligned with ``infos`` (the snapshot's node list)."""

    __slots__ = (
        "_amounts",
        "_codes",
        "_images",
        "_labels",
        "_oversized",
        "_ports",
        "_row_images",
        "_row_nodes",
        "_row_ports",
        "_scalars",
        "alloc_cpu",
        "alloc_ephemeral",
        "alloc_memory",
        "alloc_pods",
        "changed_rows",
        "epoch",
        "free_cpu",
        "free_ephemeral",
        "free_memory",
        "free_pods",
        "generation",
        "hard_tainted",
        "has_ports",
        "index",
        "infos",
        "names",
        "nonzero_cpu",
        "nonzero_memory",
        "pod_count",
        "req_cpu",
        "req_ephemeral",
        "req_memory",
        "soft_tainted",
        "unschedulable",
    )

    def __init__(self, infos: Sequence[NodeInfo] = ()) -> None:
        self.rebuild(infos)

    def rebuild(self, infos: Sequence[NodeInfo]) -> None:
        """Start over from ``infos`` (after nodes came, went or changed order)."""
        n = len(infos)
        self.infos: Sequence[NodeInfo] = infos
        self.index = {info.name: i for i, info in enumerate(infos)}
        self.names = [info.name for info in infos]
        """Node name per row."""

        def flags() -> BoolArray:
            return np.zeros(n, dtype=np.bool_)

        # The amount columns are the lines of one array, so a row is written with one
        # assignment (update_row), not one per column.
        self._amounts: npt.NDArray[np.int64] = np.zeros((len(_AMOUNTS), n), dtype=np.int64)
        (
            self.alloc_cpu,
            self.alloc_memory,
            self.alloc_ephemeral,
            self.alloc_pods,
            self.req_cpu,
            self.req_memory,
            self.req_ephemeral,
            self.nonzero_cpu,
            self.nonzero_memory,
            self.pod_count,
            # allocatable minus requested (and pod slots left), kept with the row: Filter
            # compares against them without a table-sized temporary per pod.
            self.free_cpu,
            self.free_memory,
            self.free_ephemeral,
            self.free_pods,
        ) = self._amounts
        self.generation: IntArray = np.zeros(n, dtype=np.int64)
        """Each row's NodeInfo generation (unique per node version: tells changed rows)."""
        self.unschedulable, self.hard_tainted, self.soft_tainted = flags(), flags(), flags()
        self._scalars: dict[str, tuple[IntArray, IntArray]] = {}
        self._labels: dict[str, npt.NDArray[np.object_]] = {}
        self._codes: dict[str, tuple[IntArray, dict[str, int]]] = {}
        self.has_ports = flags()
        self._ports: dict[tuple[str, int], BoolArray] = {}
        self._row_ports: list[frozenset[tuple[str, int]]] = [frozenset()] * n
        self._images: dict[str, set[int]] = {}
        self._row_images: list[tuple[str, ...]] = [()] * n
        self._oversized: set[int] = set()
        self._row_nodes: list[object] = [None] * n
        """The Node object each row's node columns were read from."""
        self.epoch = next(_EPOCHS)
        """Changes with every rebuild: rows of another epoch may mean other nodes."""
        self.changed_rows: list[int] = []
        """Rows refreshed since the epoch began, in order (repeats kept): what a view
        kept from an earlier cycle must look at again."""
        for i, info in enumerate(infos):
            self.update_row(i, info)
        self.changed_rows.clear()

    def __len__(self) -> int:
        return len(self.infos)

    def changed_since(self, epoch: int, seen: int) -> list[int] | None:
        """The rows refreshed after a view of ``epoch`` took in ``seen`` entries of
        :attr:`changed_rows`, each once and ascending; None when the view cannot be
        brought up to date (another epoch, or more than ``MAX_REFRESH`` rows)."""
        if epoch != self.epoch:
            return None
        log = self.changed_rows
        if seen == len(log):
            return []
        # Usually one row (the node the previous pod went to) since the last look.
        rows = [log[-1]] if seen == len(log) - 1 else sorted(set(log[seen:]))
        return None if len(rows) > MAX_REFRESH else rows

    @property
    def exact(self) -> bool:
        """Whether every amount is small enough for exact array arithmetic."""
        return not self._oversized

    def update_row(self, row: int, info: NodeInfo) -> None:
        """Refresh one row from its (new) NodeInfo."""
        changed = self.changed_rows
        if len(changed) >= _CHANGE_LOG_LIMIT:
            self.epoch = next(_EPOCHS)
            changed.clear()
        changed.append(row)
        alloc, req, nonzero = info.allocatable, info.requested, info.non_zero_requested
        values = (
            alloc.milli_cpu,
            alloc.memory,
            alloc.ephemeral_storage,
            alloc.allowed_pod_number,
            req.milli_cpu,
            req.memory,
            req.ephemeral_storage,
            nonzero.milli_cpu,
            nonzero.memory,
            *alloc.scalar.values(),
            *req.scalar.values(),
        )
        self.generation[row] = info.generation
        if max(values) >= EXACT_LIMIT or min(values) <= -EXACT_LIMIT:
            self._oversized.add(row)
            return
        self._oversized.discard(row)
        pods = len(info.pods)
        self._amounts[:, row] = (  # in the order of _AMOUNTS
            *values[:9],  # allocatable, requested and non-zero requested, as above
            pods,
            alloc.milli_cpu - req.milli_cpu,
            alloc.memory - req.memory,
            alloc.ephemeral_storage - req.ephemeral_storage,
            alloc.allowed_pod_number - pods,
        )
        for name, (alloc_col, req_col) in self._scalars.items():
            alloc_col[row] = alloc.scalar.get(name, 0)
            req_col[row] = req.scalar.get(name, 0)
        used_ports = info.used_ports
        had_ports = self._row_ports[row]
        if used_ports or had_ports:  # host ports now or before (rare): the port columns
            pairs = used_ports.pairs() if used_ports else frozenset()
            if pairs != had_ports:
                self.has_ports[row] = bool(pairs)
                for pair in had_ports - pairs:
                    self._ports[pair][row] = False
                for pair in pairs:
                    in_use = self._ports.get(pair)
                    if in_use is None:
                        in_use = self._ports[pair] = np.zeros(len(self.infos), dtype=np.bool_)
                    in_use[row] = True
                self._row_ports[row] = pairs
        node = info.node
        if node is self._row_nodes[row]:
            return  # labels, flags and images come from the Node object alone
        self._row_nodes[row] = node
        if self._labels or self._codes:
            labels = node.labels
            for key, column in self._labels.items():
                column[row] = labels.get(key)
            for key, (codes, vocabulary) in self._codes.items():
                value = labels.get(key)
                codes[row] = -1 if value is None else vocabulary.setdefault(value, len(vocabulary))
        self.unschedulable[row] = node.spec.unschedulable
        effects = {t.effect for t in node.spec.taints}
        self.hard_tainted[row] = not effects.isdisjoint(_HARD_EFFECTS)
        self.soft_tainted[row] = _SOFT_EFFECT in effects
        images = tuple(name for image in node.status.images for name in image.names)
        if images != self._row_images[row]:
            for name in self._row_images[row]:
                holders = self._images.get(name)
                if holders is not None:
                    holders.discard(row)
            for name in images:
                self._images.setdefault(name, set()).add(row)
            self._row_images[row] = images

    def scalar(self, name: str) -> tuple[IntArray, IntArray]:
        """(allocatable, requested) columns of an extended or hugepages resource."""
        columns = self._scalars.get(name)
        if columns is None:
            alloc_col = np.fromiter(
                (info.allocatable.scalar.get(name, 0) for info in self.infos),
                dtype=np.int64,
                count=len(self.infos),
            )
            req_col = np.fromiter(
                (info.requested.scalar.get(name, 0) for info in self.infos),
                dtype=np.int64,
                count=len(self.infos),
            )
            columns = self._scalars[name] = (alloc_col, req_col)
        return columns

    def label(self, key: str) -> npt.NDArray[np.object_]:
        """The value of node label ``key`` per row (None where the node lacks it)."""
        column = self._labels.get(key)
        if column is None:
            column = np.empty(len(self.infos), dtype=np.object_)
            column[:] = [info.node.labels.get(key) for info in self.infos]
            self._labels[key] = column
        return column

    def label_codes(self, key: str) -> tuple[IntArray, dict[str, int]]:
        """Node label ``key`` as a code per row (-1 where the node lacks it), and the code
        of each value seen (codes count up from 0 in the order values were first seen)."""
        entry = self._codes.get(key)
        if entry is None:
            vocabulary: dict[str, int] = {}
            values = (info.node.labels.get(key) for info in self.infos)
            codes = np.fromiter(
                (-1 if v is None else vocabulary.setdefault(v, len(vocabulary)) for v in values),
                dtype=np.int64,
                count=len(self.infos),
            )
            entry = self._codes[key] = (codes, vocabulary)
        return entry

    def port_in_use(self, protocol: str, port: int) -> BoolArray | None:
        """Rows where (``protocol``, ``port``) is in use on any host ip; None: on none."""
        column = self._ports.get((protocol or "TCP", port))
        return column if column is not None and column.any() else None

    def rows_with_images(self, names: Iterable[str]) -> list[int]:
        """Rows whose node holds any of ``names``, in row order."""
        rows: set[int] = set()
        for name in names:
            rows |= self._images.get(name, set())
        return sorted(rows)


class NodeRows(Sequence[NodeInfo]):
    """The NodeInfos of some table rows, looked up only when read (no list is built)."""

    __slots__ = ("_infos", "rows")

    def __init__(self, infos: Sequence[NodeInfo], rows: IntArray) -> None:
        self._infos = infos
        self.rows = rows

    @property
    def infos(self) -> Sequence[NodeInfo]:
        """The whole node list the rows index into."""
        return self._infos

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, index: int) -> NodeInfo: ...

    @overload
    def __getitem__(self, index: slice) -> NodeRows: ...

    def __getitem__(self, index: int | slice) -> NodeInfo | NodeRows:
        if isinstance(index, slice):
            return NodeRows(self._infos, self.rows[index])
        return self._infos[int(self.rows[index])]

    def __iter__(self) -> Iterator[NodeInfo]:
        return map(self._infos.__getitem__, self.rows.tolist())
