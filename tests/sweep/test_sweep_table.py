"""The table: appended a cell at a time, resumed past a cut line; Parquet typed; progress."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from ksched._errors import KschedError
from ksched.sweep import CellOutcome, write_parquet
from ksched.sweep._progress import SweepProgress, format_eta
from ksched.sweep._table import TableWriter, read_rows

AXES = ("input", "seed")


def outcome(cell: str, *values: float) -> CellOutcome:
    return CellOutcome(
        id=cell, metrics=tuple((f"m{i}", None, v) for i, v in enumerate(values)), seconds=0.25
    )


def test_rows_per_cell_and_metric_and_an_error_row(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    writer = TableWriter(path, AXES)
    writer.write(("a", "0"), outcome("c1", 3, 0.5))
    writer.write(("a", "1"), CellOutcome(id="c2", error="TraceError: line 3\nbad", seconds=0.1))
    writer.write(("b", "0"), CellOutcome(id="c3", metrics=(("alloc", 130, 98.06),), seconds=1.0))
    writer.close()
    assert path.read_text().splitlines() == [
        "cell,input,seed,metric,at,value,error,seconds",
        "c1,a,0,m0,,3,,0.250",
        "c1,a,0,m1,,0.5,,0.250",
        "c2,a,1,,,,TraceError: line 3 | bad,0.100",  # one line, so a cut line is found
        "c3,b,0,alloc,130,98.06,,1.000",
    ]
    again = TableWriter(path, AXES)
    assert again.done == {"c1", "c2", "c3"} and again.failed == {"c2"}
    again.close()


def test_a_cut_last_line_drops_that_cells_rows(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    writer = TableWriter(path, AXES)
    writer.write(("a", "0"), outcome("c1", 1, 2))
    writer.write(("a", "1"), outcome("c2", 1, 2, 3))
    writer.close()
    whole = path.read_bytes()
    path.write_bytes(whole[:-5])  # stopped while writing c2's last row
    resumed = TableWriter(path, AXES)
    assert resumed.done == {"c1"}
    resumed.write(("a", "1"), outcome("c2", 1, 2, 3))
    resumed.close()
    assert path.read_bytes() == whole


def test_a_table_cut_in_its_header_starts_afresh(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("cell,inp")  # stopped while writing the header
    writer = TableWriter(path, AXES)
    writer.write(("a", "0"), outcome("c1", 1))
    writer.close()
    assert path.read_text().splitlines() == [
        "cell,input,seed,metric,at,value,error,seconds",
        "c1,a,0,m0,,1,,0.250",
    ]


def test_a_table_of_another_grid_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    TableWriter(path, AXES).close()
    with pytest.raises(KschedError, match=r"t.csv: its columns .* are not this sweep's"):
        TableWriter(path, ("input", "config", "seed"))


def test_parquet_has_the_csv_rows_typed(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "t.csv"
    writer = TableWriter(path, AXES)
    writer.write(("a", "0"), CellOutcome(id="c1", metrics=(("alloc", 130, 98.06),)))
    writer.write(("a", "1"), CellOutcome(id="c2", error="boom"))
    writer.close()
    assert write_parquet(path, tmp_path / "t.parquet", AXES) == 2
    table = pq.read_table(tmp_path / "t.parquet")
    assert str(table.schema.field("at").type) == "int64"
    assert str(table.schema.field("value").type) == "double"
    assert table.to_pylist() == [
        {"cell": "c1", "input": "a", "seed": "0", "metric": "alloc", "at": 130,
         "value": 98.06, "error": None, "seconds": 0.0},
        {"cell": "c2", "input": "a", "seed": "1", "metric": None, "at": None,
         "value": None, "error": "boom", "seconds": 0.0},
    ]  # fmt: skip
    assert [r["cell"] for r in read_rows(path)] == ["c1", "c2"]


def test_progress_counts_and_eta_on_a_fake_clock() -> None:
    now = [100.0]
    out = io.StringIO()
    meter = SweepProgress(10, 2, out, every=5.0, clock=lambda: now[0])
    assert meter.line() == "sweep: 2/10 cells done (2 from the table), 0 failed, ETA -"
    now[0] = 104.0
    meter.cell_done(failed=False)  # 4 s for one cell, 7 left: 28 s
    now[0] = 106.0
    meter.cell_done(failed=True)  # 6 s for two, 6 left: 18 s
    assert meter.line() == "sweep: 4/10 cells done (2 from the table), 1 failed, ETA 0:18"
    # One line per 5 s at most when not on a terminal (the first at once).
    assert out.getvalue().splitlines() == [
        "sweep: 3/10 cells done (2 from the table), 0 failed, ETA 0:28"
    ]
    meter.close()
    assert out.getvalue().splitlines()[-1] == meter.line()
    assert (format_eta(3725), format_eta(59.6), format_eta(None)) == ("1:02:05", "1:00", "-")
