"""The Workload API through the CLI: a bad Workload, PodGroup or pod reference stops
``ksched simulate`` with exit 2 before anything runs; a good set loads and runs, from
plain manifests and from a Scenario file; ``ksched check`` can expect the refusal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ksched.cli import main

NODE = """apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""
WORKLOAD = """apiVersion: scheduling.k8s.io/v1beta1
kind: Workload
metadata: {name: train}
spec:
  podGroupTemplates: [{name: workers, schedulingPolicy: {gang: {minCount: 2}}}]
"""
POD_GROUP = """apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: train-workers}
spec:
  podGroupTemplateRef: {workload: {workloadName: train, podGroupTemplateName: workers}}
  schedulingPolicy: {gang: {minCount: 2}}
"""


def member(name: str, ref: str = "{podGroupName: train-workers}") -> str:
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\n"
        f"spec: {{containers: [{{name: c, resources: {{requests: {{cpu: '1'}}}}}}], "
        f"schedulingGroup: {ref}}}\n"
    )


GOOD = [NODE, WORKLOAD, POD_GROUP, member("w0"), member("w1")]

BAD = [
    ("first alpha with the newest list",
     WORKLOAD.replace("v1beta1", "v1alpha1"),
     "Workload default/train: spec.podGroupTemplates: Forbidden: not a field of Workload in "
     "scheduling.k8s.io/v1alpha1 (its pod groups are spec.podGroups)"),
    ("two policies",
     POD_GROUP.replace("{gang: {minCount: 2}}", "{gang: {minCount: 2}, basic: {}}"),
     'PodGroup default/train-workers: spec.schedulingPolicy: Invalid value: "{`basic`, `gang`}": '
     "exactly one of `basic`, `gang` is required, but multiple fields are set"),
    ("empty podGroupName", member("w0", "{podGroupName: ''}"),
     "Pod default/w0: spec.schedulingGroup.podGroupName: Required value"),
]  # fmt: skip


@pytest.mark.parametrize(("doc", "message"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_workload_api_manifest_exits_2_and_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], doc: str, message: str
) -> None:
    path = tmp_path / "train.yaml"
    path.write_text("---\n".join([NODE, doc]))
    assert main(["simulate", "-f", str(path), "-o", "json"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert f"{path}: document 2: {message}" in err


def test_workload_pod_group_and_members_load_and_run_from_manifests(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "train.yaml"
    path.write_text("---\n".join(GOOD))
    assert main(["simulate", "-f", str(path), "-o", "json"]) == 0
    pods = json.loads(capsys.readouterr().out)["pods"]
    assert {k: v["node"] for k, v in pods.items()} == {"default/w0": "n1", "default/w1": "n1"}


def _scenario(objects: list[str], expect: str = "") -> str:
    items = "".join(
        "  - " + doc.replace("\n", "\n    ").rstrip() + "\n" for doc in objects
    )  # each document as one list item
    head = "apiVersion: ksched/v1alpha1\nkind: Scenario\nmetadata: {name: gang}\nobjects:\n"
    return head + items + expect


def test_scenario_with_the_workload_api_loads_and_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "gang.yaml"
    path.write_text(_scenario(GOOD))
    assert main(["simulate", str(path), "-o", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert sorted(report["pods"]) == ["default/w0", "default/w1"]


def test_scenario_with_a_bad_workload_exits_2_and_check_can_expect_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = WORKLOAD.replace("minCount: 2", "minCount: -1")
    path = tmp_path / "bad.yaml"
    path.write_text(_scenario([NODE, bad]))
    assert main(["simulate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "objects[1]: Workload default/train: spec.podGroupTemplates[0].schedulingPolicy" in err
    assert "gang.minCount: Invalid value: -1: must be greater than zero" in err
    path.write_text(_scenario([NODE, bad], "expect:\n  error: 'must be greater than zero'\n"))
    assert main(["check", str(path)]) == 0


def test_explain_of_an_unknown_pod_is_still_refused_beside_a_workload(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Workload is no pod controller: the scenario's pods are still known up front."""
    path = tmp_path / "gang.yaml"
    path.write_text(_scenario(GOOD))
    assert main(["simulate", str(path), "-o", "table", "--explain", "nope"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "--explain default/nope: the scenario has no such pod" in captured.err
