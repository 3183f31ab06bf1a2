"""The example specs of docs/sweeps.md: they load, and pack-or-spread shows what it says."""

from __future__ import annotations

from pathlib import Path

import pytest

from ksched.sweep import SweepSpec, run_sweep

from .conftest import EXAMPLES, metric_values

SWEEPS = EXAMPLES / "sweeps"


@pytest.mark.parametrize("name", ["fgd-slice.yaml", "pack-or-spread.yaml"])
def test_example_specs_load(name: str) -> None:
    spec = SweepSpec.load(SWEEPS / name)
    assert len(spec.cells()) == {"fgd-slice.yaml": 24, "pack-or-spread.yaml": 18}[name]
    assert spec.plots and all(p.file.parent == SWEEPS / "out" for p in spec.plots)


def test_pack_or_spread_packs_until_balanced_allocation_weighs_more(tmp_path: Path) -> None:
    spec = SweepSpec.load(SWEEPS / "pack-or-spread.yaml")
    result = run_sweep(spec, table=tmp_path / "t.csv", plots=False, jobs=2)
    assert result.failed == 0 and result.parquet == tmp_path / "t.parquet"

    def nodes_used(strategy: str, weight: str) -> set[float]:
        labels = {
            "NodeResourcesFit.scoringStrategy": strategy,
            "NodeResourcesBalancedAllocation.weight": weight,
        }
        return set(metric_values(result.table, "nodes_used", **labels).values())

    # Six 8-core nodes, 19 pods asking for 15.5 cores: spread over all six; packed on 3
    # (MostAllocated) or 4 (the shape peaking at half full); a BalancedAllocation weight
    # of 10 outweighs NodeResourcesFit's 1 and spreads them again. The same on every seed.
    assert nodes_used("LeastAllocated", "1") == {6.0}
    assert nodes_used("MostAllocated", "1") == {3.0}
    assert nodes_used("RequestedToCapacityRatio", "1") == {4.0}
    assert nodes_used("MostAllocated", "10") == {6.0}


@pytest.mark.parametrize(
    ("name", "rng"), [("fgd_grid.yaml", "go"), ("fgd_grid_ksched.yaml", "ksched")]
)
def test_the_fgd_study_grid_specs_are_its_1020_experiments(name: str, rng: str) -> None:
    spec = SweepSpec.load(EXAMPLES.parent / "benchmarks" / name)
    cells = spec.cells()
    assert len(cells) == 1020 == 17 * 6 * 10
    assert {dict(c.labels)["rng"] for c in cells} == {rng}
    assert {dict(c.labels)["seed"] for c in cells} == {str(s) for s in range(42, 52)}
