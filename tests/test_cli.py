"""The ``ksched`` command: exit codes (0 ok, 1 check failures, 2 bad input) and the
JSON report of ``simulate``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ksched.cli import main

CONFIG = """
config:
  apiVersion: kubescheduler.config.k8s.io/v1
  kind: KubeSchedulerConfiguration
  profiles:
    - schedulerName: default-scheduler
      plugins:
        multiPoint:
          enabled: [{name: PrioritySort}, {name: NodeResourcesFit}, {name: DefaultBinder}]
          disabled: [{name: "*"}]
"""

SCENARIO = (
    """
apiVersion: ksched/v1alpha1
kind: Scenario
metadata: {name: two-pods}
"""
    + CONFIG
    + """
objects:
  - {apiVersion: v1, kind: Node, metadata: {name: n1},
     status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}}
  - {apiVersion: v1, kind: Pod, metadata: {name: web-0},
     spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
  - {apiVersion: v1, kind: Pod, metadata: {name: big},
     spec: {containers: [{name: c, resources: {requests: {cpu: "3"}}}]}}
expect:
  placements:
    default/web-0: n1
    default/big: null
  pods:
    default/big: {phase: Unschedulable}
"""
)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_simulate_json_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "s.yaml", SCENARIO)
    assert main(["simulate", str(path), "--output", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {"scenario", "settled", "time", "pods", "evicted", "explain"} <= set(report)
    assert "events" not in report
    assert report["scenario"] == "two-pods"
    assert report["settled"] is True
    assert isinstance(report["time"], int | float)
    assert report["evicted"] == []
    web = report["pods"]["default/web-0"]
    assert web["node"] == "n1" and web["phase"] == "Bound"
    assert web["attempts"] == 1
    big = report["pods"]["default/big"]
    assert big["node"] is None
    assert big["phase"] == "Unschedulable"
    assert big["message"] == "0/1 nodes are available: 1 Insufficient cpu."
    assert isinstance(report["explain"], dict)


def test_simulate_events_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "s.yaml", SCENARIO)
    assert main(["simulate", str(path), "--output", "json", "--events"]) == 0
    report = json.loads(capsys.readouterr().out)
    kinds = {e["kind"] for e in report["events"]}
    assert {"Queued", "Bound", "Unschedulable"} <= kinds


def test_simulate_defaults_to_json_when_not_a_tty(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "s.yaml", SCENARIO)
    assert main(["simulate", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["scenario"] == "two-pods"


def test_simulate_bad_quantity_exits_2_naming_object_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "bad.yaml", SCENARIO.replace('cpu: "1"}', 'cpu: "1.5x"}'))
    assert main(["simulate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ksched: error: ")
    assert (
        "Pod default/web-0: spec.containers[0].resources.requests.cpu: invalid quantity '1.5x'"
        in err
    )
    assert "objects[1]" in err


def test_simulate_unknown_kind_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = SCENARIO.replace("kind: Node,", "kind: Gizmo,")
    assert main(["simulate", str(write(tmp_path, "k.yaml", text))]) == 2
    assert "Gizmo n1: kind: unsupported kind 'Gizmo'" in capsys.readouterr().err


def test_simulate_invalid_config_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = SCENARIO.replace("  profiles:", "  percentageOfNodesToScore: 120\n  profiles:")
    assert main(["simulate", str(write(tmp_path, "c.yaml", text))]) == 2
    assert "percentageOfNodesToScore: must be between 0 and 100" in capsys.readouterr().err


def test_simulate_invalid_yaml_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(write(tmp_path, "y.yaml", "objects: ["))]) == 2
    assert "invalid YAML" in capsys.readouterr().err


def test_simulate_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(tmp_path / "nope.yaml")]) == 2
    assert capsys.readouterr().err.startswith("ksched: error: ")


def test_check_pass_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "s.yaml", SCENARIO)
    assert main(["check", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "PASS two-pods" in out
    assert out.rstrip().endswith("1 passed, 0 failed")


def test_check_failure_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "a.yaml", SCENARIO)
    write(tmp_path, "b.yaml", SCENARIO.replace("default/web-0: n1", "default/web-0: n9"))
    assert main(["check", str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")]) == 1
    out = capsys.readouterr().out
    assert "PASS two-pods" in out
    assert "FAIL two-pods" in out
    assert "1 passed, 1 failed" in out


def test_check_missing_file_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path / "missing.yaml")]) == 1
    assert "no such file" in capsys.readouterr().out


def test_check_expected_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = SCENARIO.replace('cpu: "1"}', 'cpu: "1.5x"}').replace(
        "expect:\n", "expect:\n  error: \"invalid quantity '1.5x'\"\n"
    )
    write(tmp_path, "e.yaml", text)
    assert main(["check", str(tmp_path)]) == 0


def test_usage_error_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([])
    assert info.value.code == 2
    with pytest.raises(SystemExit) as info:
        main(["simulate"])
    assert info.value.code == 2
