"""``ksched simulate`` rejects what kube-apiserver rejects: exit 2, nothing runs, and the
message names the file, the document, the object and the field path."""

from __future__ import annotations

from pathlib import Path

import pytest

from ksched.cli import main

NODE = """apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""


def pod(spec: str, name: str = "web") -> str:
    return f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n{spec}"


CASES = [
    ("unknown field", pod("  containers:\n  - name: c\n    resoures: {requests: {cpu: '1'}}\n"),
     'Pod default/web: unknown field "spec.containers[0].resoures"'),
    ("requests over limits",
     pod("  containers:\n  - name: c\n    resources: {requests: {cpu: '2'}, limits: {cpu: '1'}}\n"),
     'Pod default/web: spec.containers[0].resources.requests: Invalid value: "2": must be less '
     "than or equal to cpu limit of 1"),
    ("no containers", pod("  containers: []\n"),
     "Pod default/web: spec.containers: Required value"),
    ("bad name", pod("  containers: [{name: c}]\n", name="Web"),
     'Pod default/Web: metadata.name: Invalid value: "Web": a lowercase RFC 1123 subdomain'),
    ("toleration Exists with a value",
     pod("  containers: [{name: c}]\n  tolerations: [{key: k, operator: Exists, value: v}]\n"),
     "Pod default/web: spec.tolerations[0].operator: Invalid value: \"v\": value must be empty "
     "when `operator` is 'Exists'"),
    ("empty nodeSelectorTerms",
     pod("  containers: [{name: c}]\n  affinity: {nodeAffinity: "
         "{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: []}}}\n"),
     "Pod default/web: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
     ".nodeSelectorTerms: Required value: must have at least one node selector term"),
    ("missing PriorityClass", pod("  containers: [{name: c}]\n  priorityClassName: gold\n"),
     'Pod default/web: spec.priorityClassName: pods "web" is forbidden: no PriorityClass with '
     "name gold was found"),
]  # fmt: skip


@pytest.mark.parametrize(("manifest", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_manifest_exits_2_naming_file_document_object_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], manifest: str, message: str
) -> None:
    path = tmp_path / "app.yaml"
    path.write_text(NODE + "---\n" + manifest)
    assert main(["simulate", "-f", str(path), "-o", "json"]) == 2
    out, err = capsys.readouterr()
    assert out == ""  # nothing ran
    assert f"{path}: document 2: {message}" in err


def test_no_strict_downgrades_unknown_fields_to_warnings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "app.yaml"
    path.write_text(NODE + "---\n" + pod("  containers:\n  - name: c\n    imagePolicy: Always\n"))
    assert main(["simulate", "-f", str(path), "-o", "json", "--no-strict"]) == 0
    out, err = capsys.readouterr()
    assert '"default/web"' in out
    assert err == (
        f"ksched: warning: {path}: document 2: Pod default/web: unknown field "
        '"spec.containers[0].imagePolicy"\n'
    )


def test_no_strict_keeps_other_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "app.yaml"
    path.write_text(NODE + "---\n" + pod("  containers: []\n"))
    assert main(["simulate", "-f", str(path), "--no-strict"]) == 2
    assert "spec.containers: Required value" in capsys.readouterr().err


def test_duplicate_objects_across_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.yaml").write_text(NODE)
    (tmp_path / "b.yaml").write_text(NODE)
    assert main(["simulate", "-f", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'b.yaml'}: Node n1: already defined at {tmp_path / 'a.yaml'}" in err


def test_priority_class_in_another_file_is_found(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.yaml").write_text(NODE + "---\n" + pod("  containers: [{name: c}]\n"
                                     "  priorityClassName: gold\n"))  # fmt: skip
    (tmp_path / "b.yaml").write_text(
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: gold}\n"
        "value: 1000\n"
    )
    assert main(["simulate", "-f", str(tmp_path), "-o", "json"]) == 0


def test_check_rejects_unknown_fields_in_scenarios_unless_told(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "apiVersion: ksched/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nobjects:\n"
        "  - {apiVersion: v1, kind: Node, metadata: {name: nodeA}, spec: {unschedulabel: true},"
        " status: {allocatable: {cpu: '1'}}}\n"
        "expect: {placements: {}}\n"
    )
    assert main(["check", str(path)]) == 1
    assert 'unknown field "spec.unschedulabel"' in capsys.readouterr().out
    assert main(["check", "--no-strict", str(path)]) == 0


def test_workload_naming_a_missing_priority_class(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "app.yaml"
    path.write_text(
        NODE + "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n"
        "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
        "    spec: {priorityClassName: gold, containers: [{name: c}]}\n"
    )
    assert main(["simulate", "-f", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"ksched: error: {path}: document 2: Deployment default/web: "
        "spec.template.spec.priorityClassName: its pods would be refused: "
        'pods "web-..." is forbidden: no PriorityClass with name gold was found\n'
    )


def test_a_typo_in_expect_fails_the_check_instead_of_passing_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "apiVersion: ksched/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nobjects: []\n"
        "expect: {placement: {default/p: n1}}\n"
    )
    assert main(["check", str(path)]) == 1
    assert f'{path}: expect: unknown field "placement"' in capsys.readouterr().out
