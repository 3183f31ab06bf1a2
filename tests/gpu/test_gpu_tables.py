"""The artifact's tables (analysis_*_discrete.csv): rows written and read back, compared
cell by cell; ``ksched gpu`` writing and plotting them."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from ksched.cli import main
from ksched.gpu import TraceError
from ksched.gpu._table import TableRow, compare_tables, mean_rows, read_table, write_table

TRACE = Path(__file__).resolve().parents[3] / "shared" / "traces" / "openb"
HEADER = "workload,sc_policy,tune,seed,total_gpus," + ",".join(map(str, range(131)))


def row(policy: str, seed: int, values: dict[int, float]) -> TableRow:
    return TableRow(
        workload="openb_pod_list_default",
        policy=policy,
        tune="1.3",
        seed=seed,
        total_gpus=6212,
        values=values,
    )


def test_rows_round_trip_in_the_artifacts_spelling(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    write_table(path, [row("06-FGD", 42, {0: 0.25, 1: 1.0, 130: 95.3})])
    lines = path.read_text().splitlines()
    assert lines[0] == HEADER
    assert lines[1].startswith("openb_pod_list_default,06-FGD,1.3,42,6212,0.25,1.0,,")
    assert lines[1].endswith(",95.3")
    [back] = read_table(path)
    assert back == row("06-FGD", 42, {0: 0.25, 1: 1.0, 130: 95.3})


def test_compare_per_seed_and_means() -> None:
    ours = [row("06-FGD", 42, {0: 1.0, 1: 2.0}), row("06-FGD", 43, {0: 1.0, 1: 2.5})]
    theirs = [
        row("06-FGD", 42, {0: 1.0, 1: 2.25}),
        row("06-FGD", 43, {0: 1.5, 1: 2.25}),
        row("05-BestFit", 42, {0: 9.0}),
    ]
    [d] = compare_tables(ours, theirs)  # BestFit has no row of ours: not compared
    assert (d.policy, d.seeds, d.points_compared) == ("06-FGD", (42, 43), 4)
    assert d.max_per_seed == 0.5 and d.where == (43, 0)
    assert d.max_of_means == 0.25  # point 0: 1.0 against 1.25
    assert mean_rows(ours) == {0: 1.0, 1: 2.25}


def test_bad_tables_are_named(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("workload,sc_policy\nx,y\n")
    with pytest.raises(TraceError, match=r"bad.csv: header has no column tune"):
        read_table(path)
    path.write_text(HEADER + "\nw,p,1.3,42,6212," + ",".join(["x"] * 131) + "\n")
    with pytest.raises(TraceError, match=r"bad.csv:2: column 0: not a number: 'x'"):
        read_table(path)


def test_gpu_run_rejects_bad_input_with_status_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["gpu", "run", "--trace", str(tmp_path)]) == 2
    assert "openb_node_list_gpu_node.csv: cannot be read" in capsys.readouterr().err
    assert main(["gpu", "run", "--policy", "Tetris", "--trace", str(tmp_path)]) == 2
    assert "policy: 'Tetris' is none of" in capsys.readouterr().err


@pytest.mark.skipif(not TRACE.is_dir(), reason="no shared/traces/openb beside it")
def test_gpu_run_writes_the_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nodes = tmp_path / "nodes.csv"
    rows = (TRACE / "openb_node_list_gpu_node.csv").read_text().splitlines()
    nodes.write_text("\n".join([rows[0], *rows[1::30]]) + "\n")
    table = tmp_path / "alloc.csv"
    code = main(
        [
            "gpu",
            "run",
            "--trace",
            str(TRACE),
            "--nodes",
            str(nodes),
            "--policy",
            "BestFit",
            "--tune",
            "0.5",
            "--table",
            str(table),
            "-o",
            "json",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert '"policy": "05-BestFit"' in out and '"clones": 0' in out
    [written] = read_table(table)
    assert written.policy == "05-BestFit" and written.total_gpus == 188
    assert max(written.values) == 51 and written.values[51] == written.values[50]  # 50..52


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="no matplotlib")
def test_gpu_plot_draws_a_table(tmp_path: Path) -> None:
    table = tmp_path / "t.csv"
    write_table(
        table,
        [
            row(p, s, {a: min(a, 95.0) for a in range(131)})
            for p in ("05-BestFit", "06-FGD")
            for s in (42, 43)
        ],
    )
    image = tmp_path / "alloc.png"
    assert main(["gpu", "plot", str(table), "--plot", str(image)]) == 0
    assert image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["gpu", "plot", str(table), "--workload", "other", "--plot", str(image)]) == 2


def test_fragmentation_tables_have_no_total_gpus(tmp_path: Path) -> None:
    path = tmp_path / "frag.csv"
    frag = TableRow(
        workload="openb_pod_list_default",
        policy="06-FGD",
        tune="1.3",
        seed=42,
        total_gpus=None,
        values={0: 13.91},
    )
    write_table(path, [frag])
    assert path.read_text().splitlines()[0] == HEADER.replace(",total_gpus", "")
    assert read_table(path) == [frag]
