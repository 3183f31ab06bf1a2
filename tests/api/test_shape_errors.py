"""A field holding the wrong shape (a mapping where a list belongs, a list where a mapping
does) is refused as kube-apiserver refuses to decode it, naming the field and the shapes;
the other checks, which would misread it, are not made."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ksched import ManifestError
from ksched.api import Pod, read_manifest, validate_object
from ksched.cli import main


def _pod(spec: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", **meta}, "spec": spec}


C = {"name": "c"}
CASES = [
    ("containers a mapping", _pod({"containers": {"name": "web"}}),
     "spec.containers: expected a list, got a mapping"),
    ("a container a string", _pod({"containers": ["web"]}),
     "spec.containers[0]: expected a mapping, got a string"),
    ("labels a list", _pod({"containers": [C]}, labels=["a"]),
     "metadata.labels: expected a mapping, got a list"),
    ("requests a string", _pod({"containers": [{"name": "c", "resources": {"requests": "1"}}]}),
     "spec.containers[0].resources.requests: expected a mapping, got a string"),
    ("command a string", _pod({"containers": [{"name": "c", "command": "sleep 1"}]}),
     "spec.containers[0].command: expected a list, got a string"),
    ("tolerations a mapping", _pod({"containers": [C], "tolerations": {"key": "k"}}),
     "spec.tolerations: expected a list, got a mapping"),
    ("nodeSelector a list", _pod({"containers": [C], "nodeSelector": ["zone=a"]}),
     "spec.nodeSelector: expected a mapping, got a list"),
    ("affinity a string", _pod({"containers": [C], "affinity": "zone-a"}),
     "spec.affinity: expected a mapping, got a string"),
    ("values a string",
     _pod({"containers": [C], "affinity": {"nodeAffinity": {
         "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
             {"matchExpressions": [{"key": "z", "operator": "In", "values": "a"}]}]}}}}),
     "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
     ".nodeSelectorTerms[0].matchExpressions[0].values: expected a list, got a string"),
    ("allocatable a list",
     {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
      "status": {"allocatable": [{"cpu": "4"}]}},
     "status.allocatable: expected a mapping, got a list"),
    ("a template's containers a mapping",
     {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
      "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": {
          "metadata": {"labels": {"app": "a"}}, "spec": {"containers": {"name": "c"}}}}},
     "spec.template.spec.containers: expected a list, got a mapping"),
]  # fmt: skip


@pytest.mark.parametrize(("data", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_wrong_shape_is_named_with_the_shapes(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ManifestError) as info:
        read_manifest(data)
    label = str(info.value).split(": ", 1)[0]
    assert str(info.value) == f"{label}: {message}"
    # still an error with unknown fields let pass: a wrong shape cannot be read at all
    with pytest.raises(ManifestError):
        read_manifest(data, strict=False)
    assert [str(p) for p in validate_object(data)] == [message]


def test_the_right_shapes_pass() -> None:
    pod = _pod(
        {"containers": [{"name": "c", "command": ["sleep"], "resources": {"requests": {}}}],
         "nodeSelector": {"zone": "a"}, "tolerations": [{"key": "k", "operator": "Exists"}]},
        labels={"app": "a"},
    )  # fmt: skip
    assert validate_object(pod) == []
    read = read_manifest(pod)
    assert isinstance(read, Pod)
    assert read.metadata.labels == {"app": "a"}


def test_simulate_names_file_object_field_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "web.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: {name: web}\n"
    )
    assert main(["simulate", "-f", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"ksched: error: {path}: Pod default/web: spec.containers: expected a list, got a mapping\n"
    )
