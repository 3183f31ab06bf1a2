"""Ctrl-C in the middle of a sweep: it stops at once, keeps the finished cells, resumes."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from .conftest import SLICE, table_cells, write_spec

KSCHED = [sys.executable, "-c", "import sys; from ksched.cli import main; sys.exit(main())"]


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a background job's may be ignored


def _cells_in(table: Path) -> int:
    if not table.exists():
        return 0
    return len({line.split(",", 1)[0] for line in table.read_text().splitlines()[1:]})


def test_interrupted_sweep_keeps_its_cells_and_resumes(tmp_path: Path) -> None:
    spec = write_spec(
        tmp_path,
        f"""\
        kind: Sweep
        run: gpu
        trace: {SLICE}
        grid:
          input: [default]
          policy: [Random, DotProd, GpuClustering, GpuPacking, BestFit, FGD]
          seed: [42, 43]
        """,
    )
    table = tmp_path / "sweep.csv"
    process = subprocess.Popen(
        [*KSCHED, "sweep", str(spec), "-j", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )
    try:
        deadline = time.monotonic() + 60
        while _cells_in(table) < 2 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert _cells_in(table) >= 2, process.stderr.read() if process.stderr else ""
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, err
    assert f"interrupted: run it again to resume from {table}" in err
    kept = _cells_in(table)
    assert 2 <= kept < 12
    resumed = subprocess.run(
        [*KSCHED, "sweep", str(spec), "-j", "2"], capture_output=True, text=True, timeout=120
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"12 cells ({kept} already there, {12 - kept} run, 0 failed)" in resumed.stdout
    fresh = subprocess.run(
        [*KSCHED, "sweep", str(spec), "-j", "2", "--table", str(tmp_path / "fresh.csv")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert fresh.returncode == 0, fresh.stderr
    assert table_cells(table) == table_cells(tmp_path / "fresh.csv")
