"""Sweeps: a grid of independent, seeded simulations, run where the work fits.

A spec (``kind: Sweep``, docs/sweeps.md) crosses inputs (scenario files, manifest sets,
recorded traces, the openb GPU trace), configurations (whole files, a plugin's weight or
``scoringStrategy``), seeds and the parameters of ``simulate``, ``replay`` and ``gpu run``.
``run_sweep`` runs its cells on local processes or a Dask cluster and writes one tidy
table (a row per cell and metric) as they finish; a resumed sweep skips the cells the
table has. The same spec gives the same table on every executor.
"""

from ._cells import CellOutcome as CellOutcome
from ._cells import CellTask as CellTask
from ._cells import run_cell as run_cell
from ._overrides import Override as Override
from ._overrides import apply_overrides as apply_overrides
from ._prepare import PreparedCell as PreparedCell
from ._prepare import prepare as prepare
from ._run import SweepResult as SweepResult
from ._run import default_jobs as default_jobs
from ._run import run_sweep as run_sweep
from ._run import sweep_async as sweep_async
from ._spec import Cell as Cell
from ._spec import SpecError as SpecError
from ._spec import SweepSpec as SweepSpec
from ._table import read_rows as read_rows
from ._table import write_parquet as write_parquet

__all__ = [
    "Cell",
    "CellOutcome",
    "CellTask",
    "Override",
    "PreparedCell",
    "SpecError",
    "SweepResult",
    "SweepSpec",
    "apply_overrides",
    "default_jobs",
    "prepare",
    "read_rows",
    "run_cell",
    "run_sweep",
    "sweep_async",
    "write_parquet",
]
