"""``ksched replay`` and ``ksched trace convert`` on the command line: outputs, --compare,
bad input (exit 2, the message naming file, line and field), other sources."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ksched.cli import main
from ksched.simulate import load_scenario, run_scenario
from ksched.trace import Op, TraceWriter

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "examples/scenarios/demo.yaml"
MOST = REPO / "examples/manifests/binpack-config.yaml"


def _node(name: str, cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}},
    }


def _pod(name: str, cpu: str = "1") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "shop", "uid": f"u-{name}"},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
    }


@pytest.fixture
def trace_file(tmp_path: Path) -> Path:
    path = tmp_path / "day.jsonl.gz"
    with TraceWriter(path) as writer:
        writer.object(0, Op.INIT, _node("n1", "4"))
        writer.object(0, Op.INIT, _node("n2", "8"))
        for i in range(6):
            writer.object(1 + i, Op.CREATE, _pod(f"p{i}"))
            writer.bind(1.2 + i, f"shop/p{i}", "n1" if i < 3 else "n2", "default-scheduler")
        writer.object(8, Op.CREATE, _pod("huge", "64"))
        writer.delete(9, "Pod", "shop/p0")
        writer.end(20)
    return path


def _json(capsys: pytest.CaptureFixture[str], args: list[str]) -> dict[str, Any]:
    assert main(args) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def test_json_report_carries_agreement_and_every_pod(
    trace_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _json(capsys, ["replay", str(trace_file), "--follow-recorded", "-o", "json"])
    assert report["mode"] == "follow-recorded"
    assert set(report["agreement"]) == {"decisions", "agreed", "ratio"}
    assert report["agreement"]["decisions"] == 6
    assert len(report["pods"]) == 7
    assert report["pending"]["pods"] == ["shop/huge"]


def test_compare_reports_both_configurations_and_the_difference(
    trace_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _json(capsys, ["replay", str(trace_file), "--compare", str(MOST), "-o", "json"])
    assert out["a"]["config"] == "default" and out["b"]["config"] == str(MOST)
    moved = out["comparison"]["moved"]
    assert out["comparison"]["samePlacement"] + len(moved) == 7
    assert {"bound", "pending", "timeToSchedule.p50", "utilization.mean.cpu"} <= set(
        out["comparison"]["aggregate"]
    )


def test_table_output_names_the_disagreements(
    trace_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(trace_file), "-o", "table", "--compare", str(MOST)]) == 0
    text = capsys.readouterr().out
    for expected in ("recorded node", "agreement", "shop/huge", "placed differently"):
        assert expected in text, expected


def test_html_and_plot_are_written_to_files(trace_file: Path, tmp_path: Path) -> None:
    html, png = tmp_path / "r.html", tmp_path / "r.png"
    args = ["replay", str(trace_file), "-o", "html", "--report-file", str(html), "--plot", str(png)]
    assert main(args) == 0
    text = html.read_text()
    assert text.startswith("<!DOCTYPE html>") and "shop/p3" in text
    assert "http://" not in text and "https://" not in text  # nothing to fetch
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_bad_trace_is_exit_2_naming_file_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"apiVersion":"ksched.io/v1alpha1","kind":"Trace","version":1}\n'
        '{"t":1,"op":"bind","key":"a/b","node":"n1"}\n'
    )
    assert main(["replay", str(path), "-o", "json"]) == 2
    assert f"{path}:2: scheduler: expected a non-empty string" in capsys.readouterr().err


def test_a_missing_file_and_a_foreign_file_are_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(tmp_path / "none.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err
    other = tmp_path / "x.yaml"
    other.write_text("kind: ConfigMap\n")
    assert main(["replay", str(other)]) == 2
    assert "not a trace, a Scenario or a scheduler_perf workload" in capsys.readouterr().err


def test_a_scenario_replays_as_ksched_simulate_runs_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One trace reader: the demo scenario converted, written, read back and replayed
    places every pod where ``ksched simulate`` does."""
    converted = tmp_path / "demo.jsonl"
    assert main(["trace", "convert", str(DEMO), "-o", str(converted)]) == 0
    report = _json(capsys, ["replay", str(converted), "-o", "json"])
    simulated = run_scenario(load_scenario(DEMO))
    assert {p["pod"]: p["node"] for p in report["pods"]} == {
        key: pod["node"] for key, pod in simulated["pods"].items()
    }
    direct = _json(capsys, ["replay", str(DEMO), "-o", "json"])  # converted on the way
    assert [p["node"] for p in direct["pods"]] == [p["node"] for p in report["pods"]]


def test_a_scheduler_perf_workload_replays(capsys: pytest.CaptureFixture[str]) -> None:
    workloads = REPO / "benchmarks/workloads/misc/performance-config.yaml"
    name = "SchedulingBasic/500Nodes"
    report = _json(
        capsys, ["replay", str(workloads), "--workload", name, "-o", "json", "--no-explain"]
    )
    assert report["trace"]["source"] == "scheduler_perf"
    assert len(report["nodes"]) == 500
    assert report["summary"]["bound"] == report["summary"]["ours"] > 0


def test_the_example_recording_replays_in_agreement(capsys: pytest.CaptureFixture[str]) -> None:
    """examples/traces/small-day.jsonl.gz: kube-scheduler v1.24 on 24 nodes, recorded
    with --anonymize (benchmarks/replay_agreement.py --nodes 24 --pods 200)."""
    example = REPO / "examples/traces/small-day.jsonl.gz"
    config = REPO / "examples/kube/kube-scheduler-1.24.yaml"
    report = _json(
        capsys, ["replay", str(example), "--follow-recorded", "--config", str(config), "-o", "json"]
    )
    assert report["trace"]["anonymized"] is True and "cluster" not in report["trace"]
    agreement = report["agreement"]
    assert agreement["decisions"] >= 200
    assert agreement["agreed"] >= 0.99 * agreement["decisions"]
