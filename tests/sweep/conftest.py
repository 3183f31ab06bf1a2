"""Small sweeps: specs written into tmp_path over tiny inputs, and a real Dask cluster."""

from __future__ import annotations

import csv
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SLICE = EXAMPLES / "sweeps" / "openb-slice"

NODES = """\
apiVersion: v1
kind: List
items:
{items}
"""


def write_cluster(folder: Path, nodes: int = 4, pods: int = 6) -> Path:
    """A manifest set: ``nodes`` equal nodes and ``pods`` pods of 1 cpu / 1Gi."""
    folder.mkdir(parents=True, exist_ok=True)
    node_items = "\n".join(
        f"  - {{apiVersion: v1, kind: Node, metadata: {{name: n{i}, labels: "
        f"{{kubernetes.io/hostname: n{i}}}}}, status: {{allocatable: {{cpu: '4', "
        f"memory: 8Gi, pods: '20'}}}}}}"
        for i in range(nodes)
    )
    pod_items = "\n".join(
        f"  - {{apiVersion: v1, kind: Pod, metadata: {{name: p{i}}}, spec: {{containers: "
        f"[{{name: c, image: i, resources: {{requests: {{cpu: '1', memory: 1Gi}}}}}}]}}}}"
        for i in range(pods)
    )
    (folder / "nodes.yaml").write_text(NODES.format(items=node_items))
    (folder / "pods.yaml").write_text(NODES.format(items=pod_items))
    return folder


def write_spec(folder: Path, body: str, name: str = "sweep.yaml") -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(body))
    return path


def table_cells(path: Path) -> dict[tuple[str, str, str], tuple[str, ...]]:
    """(cell, metric, at) -> the rest of the row but ``seconds`` (which differs run to run)."""
    out = {}
    with path.open(newline="") as handle:
        for row in csv.DictReader(handle):
            key = (row["cell"], row["metric"], row["at"])
            assert key not in out, f"row {key} twice"
            out[key] = tuple(v for k, v in row.items() if k != "seconds")
    return out


def metric_values(path: Path, metric: str, **labels: str) -> dict[str, float]:
    """cell -> value of ``metric`` (no ``at``) in the cells with these labels."""
    out = {}
    with path.open(newline="") as handle:
        for row in csv.DictReader(handle):
            wanted = row["metric"] == metric and not row["at"]
            if wanted and all(row[k] == v for k, v in labels.items()):
                out[row["cell"]] = float(row["value"])
    return out


@pytest.fixture(scope="session")
def dask_cluster() -> Iterator[Any]:
    """A real LocalCluster: 2 single-threaded worker processes on loopback, closed after."""
    distributed = pytest.importorskip("distributed")
    import logging

    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},  # its HTTP server: a free port
        silence_logs=logging.ERROR,
    )
    try:
        yield cluster
    finally:
        cluster.close()
