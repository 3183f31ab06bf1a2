"""The artifact's result tables (``analysis_{allo,frag,frag_ratio}_discrete.csv``): rows
written in its format, read back, and two tables compared cell by cell.

# experiments/analysis/merge_alloc_discrete.py (the header, pandas' float spelling)

A row is ``workload, sc_policy, tune, seed, total_gpus, 0 .. 130``: ``openb_pod_list_default,
06-FGD, 1.3, 42, 6212`` then a value per percent of arrived workload (empty where the run
had no sample within a percent); the fragmentation tables have no ``total_gpus`` column.
Values are written as pandas writes floats (``repr``).
"""

from __future__ import annotations

import csv
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import attrs

from ._openb import TraceError

__all__ = [
    "POINTS",
    "TableRow",
    "compare_tables",
    "mean_rows",
    "read_table",
    "write_table",
]

POINTS = tuple(range(131))
"""The percents of arrived workload (of GPU capacity) a row has a value for."""
_KEYS = ("workload", "sc_policy", "tune", "seed")
_HEADER = (*_KEYS, "total_gpus", *map(str, POINTS))


@attrs.frozen(kw_only=True)
class TableRow:
    """One experiment's curve (workload as the artifact names it: ``openb_pod_list_<x>``)."""

    workload: str
    policy: str
    tune: str
    seed: int
    total_gpus: int | None
    """None in the fragmentation tables, which have no such column."""
    values: Mapping[int, float]
    """Point -> value; a point without a value is absent."""

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.workload, self.policy, self.tune, self.seed)


def write_table(path: str | Path, rows: Iterable[TableRow]) -> None:
    """Write rows with the artifact's header (``total_gpus`` when the rows have it)."""
    rows = list(rows)
    with_total = any(r.total_gpus is not None for r in rows)
    with Path(path).open("w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle, lineterminator="\n")
        out.writerow(_HEADER if with_total else (*_KEYS, *map(str, POINTS)))
        for row in rows:
            cells = [repr(row.values[p]) if p in row.values else "" for p in POINTS]
            keys = [row.workload, row.policy, row.tune, row.seed]
            out.writerow([*keys, row.total_gpus, *cells] if with_total else [*keys, *cells])


def read_table(path: str | Path) -> list[TableRow]:
    """Read a table in the artifact's format. Raises TraceError naming file, row, column."""
    path = Path(path)
    try:
        handle = path.open(newline="", encoding="utf-8")
    except OSError as exc:
        raise TraceError(f"{path}: cannot be read: {exc.strerror or exc}") from exc
    rows: list[TableRow] = []
    with handle:
        reader = csv.DictReader(handle)
        missing = [c for c in (*_KEYS, *map(str, POINTS)) if c not in (reader.fieldnames or [])]
        if missing:
            raise TraceError(f"{path}: header has no column {', '.join(missing[:5])}")
        for record in reader:
            where = f"{path}:{reader.line_num}"
            rows.append(_row(record, where))
    return rows


def _row(record: Mapping[str, str], where: str) -> TableRow:
    values: dict[int, float] = {}
    for point in POINTS:
        text = (record.get(str(point)) or "").strip()
        if not text:
            continue
        try:
            values[point] = float(text)
        except ValueError:
            raise TraceError(f"{where}: column {point}: not a number: {text[:20]!r}") from None
    try:
        seed = int(record["seed"])
        total = int(record["total_gpus"]) if record.get("total_gpus") else None
    except ValueError:
        raise TraceError(f"{where}: seed or total_gpus: not an integer") from None
    return TableRow(
        workload=record["workload"],
        policy=record["sc_policy"],
        tune=record["tune"],
        seed=seed,
        total_gpus=total,
        values=values,
    )


def mean_rows(rows: Sequence[TableRow]) -> dict[int, float]:
    """The mean over rows at each point every row has a value for."""
    out: dict[int, float] = {}
    for point in POINTS:
        cells = [r.values[point] for r in rows if point in r.values]
        if cells and len(cells) == len(rows):
            out[point] = statistics.fmean(cells)
    return out


@attrs.frozen(kw_only=True)
class Difference:
    """How two tables differ for one (workload, policy)."""

    workload: str
    policy: str
    seeds: tuple[int, ...]
    """The seeds both tables have."""
    max_per_seed: float
    """The largest |ours - theirs| over the seeds and points (NaN without common seeds)."""
    where: tuple[int, int] | None
    """(seed, point) of that largest difference."""
    max_of_means: float
    """The largest |mean(ours) - mean(theirs)| over the points, means over ``seeds``."""
    points_compared: int


def compare_tables(ours: Sequence[TableRow], theirs: Sequence[TableRow]) -> list[Difference]:
    """Per (workload, policy): the largest cell difference and the largest difference of the
    means over the seeds both have (the points both have)."""
    mine = {r.key: r for r in ours}
    other = {r.key: r for r in theirs}
    groups: dict[tuple[str, str], list[tuple[TableRow, TableRow]]] = {}
    for key, row in mine.items():
        if key in other:
            groups.setdefault((key[0], key[1]), []).append((row, other[key]))
    out: list[Difference] = []
    for (workload, policy), pairs in sorted(groups.items()):
        worst, where, compared = 0.0, None, 0
        for a, b in pairs:
            for point in POINTS:
                if point in a.values and point in b.values:
                    compared += 1
                    diff = abs(a.values[point] - b.values[point])
                    if diff > worst or where is None:
                        worst, where = diff, (a.seed, point)
        means_a = mean_rows([a for a, _ in pairs])
        means_b = mean_rows([b for _, b in pairs])
        of_means = [abs(means_a[p] - means_b[p]) for p in means_a if p in means_b]
        out.append(
            Difference(
                workload=workload,
                policy=policy,
                seeds=tuple(sorted(a.seed for a, _ in pairs)),
                max_per_seed=round(worst, 6) if where is not None else math.nan,
                where=where,
                max_of_means=round(max(of_means), 6) if of_means else math.nan,
                points_compared=compared,
            )
        )
    return out
