"""The sweep's tidy table: a row per cell and metric, appended as cells finish.

Columns: ``cell`` (the cell's id), one per axis (its label), ``metric``, ``at`` (a curve's
x, empty for a single value), ``value``, ``error`` (a failed cell's one row) and
``seconds`` (the cell's wall time on its worker: the one column that differs run to run).
The CSV file is the record a resumed sweep reads; Parquet is written from it (pyarrow).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from .._errors import KschedError
from ._cells import CellOutcome

__all__ = ["TableWriter", "read_rows", "table_columns", "write_parquet"]

TAIL = ("metric", "at", "value", "error", "seconds")


def table_columns(axes: Sequence[str]) -> list[str]:
    """The table's columns for a grid's axes."""
    return ["cell", *axes, *TAIL]


def read_rows(path: Path) -> Iterator[dict[str, str]]:
    """The rows of a table file, as strings."""
    with path.open(newline="", encoding="utf-8") as handle:
        yield from csv.DictReader(handle)


class TableWriter:
    """Appends each finished cell's rows to the CSV file, flushed, so a stop loses none.

    Opening an existing table keeps its rows: ``done`` holds the cells it has (their
    ids), which a resumed sweep skips. A table with other columns is an error.
    """

    def __init__(self, path: Path, axes: Sequence[str]) -> None:
        self.path = path
        self.columns = table_columns(axes)
        self.done: set[str] = set()
        self.failed: set[str] = set()
        if path.exists():
            self._drop_partial_cell()
        fresh = not path.exists() or path.stat().st_size == 0
        if not fresh:
            self._read_existing()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._handle: IO[str] = path.open("a", newline="", encoding="utf-8")
        if fresh:
            csv.writer(self._handle, lineterminator="\n").writerow(self.columns)
            self._handle.flush()

    def _read_existing(self) -> None:
        with self.path.open(newline="", encoding="utf-8") as handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            if header != self.columns:
                raise KschedError(
                    f"{self.path}: its columns ({', '.join(header or [])}) are not this "
                    f"sweep's ({', '.join(self.columns)}): give another --table"
                )
            for row in reader:
                self.done.add(row[0])
                if row[-2]:
                    self.failed.add(row[0])

    def _drop_partial_cell(self) -> None:
        """A stop in mid-write leaves a last line without its newline: that cell's rows
        are cut, so that it runs again (a cell's rows are written in one go, so only the
        last cell can be partial)."""
        data = self.path.read_bytes()
        if data.endswith(b"\n"):
            return
        lines = data.split(b"\n")
        cell = lines[-1].split(b",", 1)[0]
        keep = len(lines) - 1
        while keep > 1 and lines[keep - 1].split(b",", 1)[0] == cell:
            keep -= 1
        self.path.write_bytes(b"".join(line + b"\n" for line in lines[:keep]))

    def write(self, labels: Sequence[str], outcome: CellOutcome) -> None:
        """The cell's rows (one per metric, or its error), flushed."""
        seconds = f"{outcome.seconds:.3f}"
        head = [outcome.id, *labels]
        rows = io.StringIO()
        out = csv.writer(rows, lineterminator="\n")
        if outcome.error is not None:
            error = " | ".join(line for line in outcome.error.splitlines() if line.strip())
            out.writerow([*head, "", "", "", error, seconds])
            self.failed.add(outcome.id)
        for metric, at, value in outcome.metrics:
            at_text = "" if at is None else str(at)
            out.writerow([*head, metric, at_text, _number(value), "", seconds])
        if outcome.error is None and not outcome.metrics:
            out.writerow([*head, "", "", "", "", seconds])  # done, none of its metrics kept
        self._handle.write(rows.getvalue())
        self._handle.flush()
        self.done.add(outcome.id)

    def close(self) -> None:
        """Close the file."""
        self._handle.close()


def _number(value: float) -> str:
    if isinstance(value, int) or float(value).is_integer():
        return str(int(value))
    return repr(float(value))


def write_parquet(table: Path, parquet: Path, axes: Sequence[str]) -> int:
    """The CSV table as Parquet (typed: ``at`` int64, ``value``/``seconds`` float64).

    Returns the number of rows written.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns: dict[str, list[Any]] = {name: [] for name in table_columns(axes)}
    for row in read_rows(table):
        for name, values in columns.items():
            text = row.get(name, "")
            if name == "at":
                values.append(int(text) if text else None)
            elif name in ("value", "seconds"):
                values.append(float(text) if text else None)
            elif name in ("metric", "error"):
                values.append(text or None)
            else:
                values.append(text)
    types = {"at": pa.int64(), "value": pa.float64(), "seconds": pa.float64()}
    schema = pa.schema([(name, types.get(name, pa.string())) for name in columns])
    arrays = [pa.array(values, type=schema.field(name).type) for name, values in columns.items()]
    parquet.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_arrays(arrays, schema=schema), parquet)
    return len(columns["cell"])
