"""The same sweeps on a real Dask cluster (2 worker processes on loopback): the same table.

The cluster (conftest's ``dask_cluster``) is started once for these tests and closed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ksched.cli import main
from ksched.sweep import SweepSpec, run_sweep

from .conftest import SLICE, table_cells, write_cluster, write_spec

pytest.importorskip("distributed")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SIMULATE = """\
kind: Sweep
run: simulate
grid:
  input:
    four: [four/nodes.yaml, four/pods.yaml]
    six: [six/nodes.yaml, six/pods.yaml]
  config:
    default: {}
    packed: {overrides: [{plugin: NodeResourcesFit, scoringStrategy: MostAllocated}]}
  NodeResourcesBalancedAllocation.weight: [1, 10]
  seed: [0, 1]
"""

GPU = f"""\
kind: Sweep
run: gpu
trace: {SLICE}
grid:
  input: [default]
  policy: [Random, FGD]
  seed: [42, 43]
"""


def _bundle_loads() -> list[str]:
    from ksched.sweep import _bundle

    return list(_bundle._FOLDERS)


@pytest.mark.parametrize("kind", ["simulate", "gpu"])
def test_dask_gives_the_local_table_cell_by_cell(
    tmp_path: Path, dask_cluster: Any, kind: str
) -> None:
    distributed = pytest.importorskip("distributed")
    if kind == "simulate":
        write_cluster(tmp_path / "four", nodes=4, pods=6)
        write_cluster(tmp_path / "six", nodes=6, pods=9)
    spec = SweepSpec.load(write_spec(tmp_path, SIMULATE if kind == "simulate" else GPU))
    local = run_sweep(spec, jobs=2, table=tmp_path / "local.csv")
    with distributed.Client(dask_cluster) as client:
        before = client.run(_bundle_loads)
    dask = run_sweep(
        spec, dask=dask_cluster.scheduler_address, table=tmp_path / "dask.csv", backend="trio"
    )
    assert local.failed == dask.failed == 0
    assert dask.ran == len(spec.cells())
    assert table_cells(dask.table) == table_cells(local.table)
    # Each worker wrote each input bundle out once at most, however many of its cells it
    # ran: 16 simulate cells of 2 inputs, 4 gpu cells of 1.
    with distributed.Client(dask_cluster) as client:
        after = client.run(_bundle_loads)
    assert sorted(after) == sorted(before) and len(after) == 2
    new = {worker: len(after[worker]) - len(before[worker]) for worker in after}
    bundles = 2 if kind == "simulate" else 1
    assert all(count <= bundles for count in new.values()), new
    assert sum(new.values()) >= bundles


def test_cli_dask_local_starts_and_stops_its_cluster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_cluster(tmp_path / "four", nodes=4, pods=6)
    spec = write_spec(
        tmp_path,
        "kind: Sweep\nrun: simulate\ngrid:\n  input: [four]\n  seed: [0, 1]\n",
    )
    assert main(["sweep", str(spec), "--dask", "local:1", "--no-plot"]) == 0
    assert "2 cells (0 already there, 2 run, 0 failed)" in capsys.readouterr().out
    assert main(["sweep", str(spec), "--table", str(tmp_path / "b.csv"), "-j", "1"]) == 0
    assert table_cells(tmp_path / "b.csv") == table_cells(tmp_path / "sweep.csv")
