"""The GPU state of every node as arrays over the node table's rows, for the batch forms.

Free milli per GPU is a 2-D int64 array (row, device), padded with PAD past a node's last
GPU, with per-row totals beside it. The arrays follow the table's change log
(``NodeTable.changed_since``): only rows whose NodeInfo changed are read again, each through
the ledger (so a row shows exactly what the per-node methods see).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from ...framework import Status
from ...framework.batch import IntArray, NodeTable
from ._ledger import GpuLedger, NodeGpus
from ._names import GPU_MODEL

__all__ = ["PAD", "GpuColumns"]

PAD = -(1 << 40)
"""Free milli of a device a node does not have: below any milli a pod asks for."""

_MAX_CLASSES = 62
"""Affinity classes one bitmask column tells apart (beyond: per-node scoring)."""


class GpuColumns:
    """Per-row GPU arrays, kept in step with one NodeTable."""

    def __init__(self, ledger: GpuLedger, reject_status: Callable[[str], Status]) -> None:
        self._ledger = ledger
        self._reject_status = reject_status
        self._table: NodeTable | None = None
        self._epoch = -1
        self._seen = 0
        self.width = 0
        self.count: IntArray = np.zeros(0, dtype=np.int64)
        self.free: IntArray = np.zeros((0, 0), dtype=np.int64)
        self.sorted_free: IntArray = np.zeros((0, 0), dtype=np.int64)
        """Each row's free milli in ascending order (PAD past the last GPU)."""
        self.total: IntArray = np.zeros(0, dtype=np.int64)
        """Free milli summed over the row's GPUs."""
        self.max_free: IntArray = np.zeros(0, dtype=np.int64)
        self.full: IntArray = np.zeros(0, dtype=np.int64)
        """GPUs wholly free."""
        self.classes: IntArray = np.zeros(0, dtype=np.int64)
        """A bit per affinity class the row's pods have (see ``class_bit``)."""
        self.class_count: IntArray = np.zeros(0, dtype=np.int64)
        """How many affinity classes the row's pods have (-1: too many to tell apart)."""
        self.nodes: list[NodeGpus | None] = []
        self.rejections: npt.NDArray[np.object_] = np.empty(0, dtype=np.object_)
        """Open-Gpu-Share's rejection of each row's node (its reason names the node)."""
        self._scalars: IntArray = np.zeros((6, 0), dtype=np.int64)
        self._class_bits: dict[str, int] = {}
        self.changed: list[int] | None = None
        """Rows refreshed by the last ``sync`` (None: all of them)."""

    def sync(self, table: NodeTable) -> None:
        """Bring the arrays up to ``table``'s rows (only the changed rows are read)."""
        rows: list[int] | None = None
        if table is self._table and table.epoch == self._epoch and len(self.nodes) == len(table):
            rows = table.changed_since(self._epoch, self._seen)
        if rows is None:
            self._rebuild(table)
            self.changed = None
        else:
            if rows:
                self._refresh(table, rows)
            self.changed = rows
        self._table, self._epoch, self._seen = table, table.epoch, len(table.changed_rows)

    def model_codes(self, table: NodeTable) -> tuple[IntArray, dict[str, int]]:
        """The rows' GPU model as codes (-1: no model label) and the code of each model."""
        return table.label_codes(GPU_MODEL)

    def class_bit(self, cls: str) -> int | None:
        """The bit of an affinity class in ``classes`` (None: no row has it yet)."""
        return self._class_bits.get(cls)

    def _rebuild(self, table: NodeTable) -> None:
        n = len(table)
        infos = table.infos
        nodes = [self._ledger.node_gpus(info) for info in infos]
        width = max((g.gpu_count for g in nodes), default=0)
        self.width = width
        self.nodes = list(nodes)
        self.free = np.full((n, width), PAD, dtype=np.int64)
        self.sorted_free = np.full((n, width), PAD, dtype=np.int64)
        # The per-row amounts are the lines of one array: a row is written at once.
        self._scalars = np.zeros((6, n), dtype=np.int64)
        (
            self.count,
            self.total,
            self.max_free,
            self.full,
            self.classes,
            self.class_count,
        ) = self._scalars
        for row, gpus in enumerate(nodes):
            self._write(row, gpus)
        names = table.names
        self.rejections = np.empty(n, dtype=np.object_)
        self.rejections[:] = [self._reject_status(name) for name in names]

    def _refresh(self, table: NodeTable, rows: list[int]) -> None:
        infos = table.infos
        for row in rows:
            gpus = self._ledger.node_gpus(infos[row])
            if gpus is self.nodes[row]:
                continue
            if gpus.gpu_count > self.width:
                self._widen(gpus.gpu_count)
            self.nodes[row] = gpus
            self._write(row, gpus)

    def _widen(self, width: int) -> None:
        wider = np.full((len(self.nodes), width), PAD, dtype=np.int64)
        wider[:, : self.width] = self.free
        ordered = np.full((len(self.nodes), width), PAD, dtype=np.int64)
        ordered[:, : self.width] = self.sorted_free
        self.free, self.sorted_free, self.width = wider, ordered, width

    def _write(self, row: int, gpus: NodeGpus) -> None:
        free = gpus.free
        padding = [PAD] * (self.width - len(free))
        self.free[row] = [*free, *padding]
        self.sorted_free[row] = [*gpus.ordered, *padding]
        bits = 0
        for cls in gpus.affinity:
            bit = self._class_bits.get(cls)
            if bit is None:
                if len(self._class_bits) >= _MAX_CLASSES:
                    bits = -1
                    break
                bit = self._class_bits[cls] = len(self._class_bits)
            bits |= 1 << bit
        self._scalars[:, row] = (
            len(free),
            gpus.total_free,
            gpus.ordered[-1] if free else PAD,
            gpus.fully_free,
            bits,
            -1 if bits < 0 else len(gpus.affinity),
        )
