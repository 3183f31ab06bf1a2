"""YAML that cannot be taken as written: a syntax error names the file and line; a key a
mapping repeats is an error naming the file, line and key (``--no-strict``: a warning, the
last value kept) in manifests, scenarios and KubeSchedulerConfiguration files alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ksched import ConfigError, ManifestError
from ksched._yaml import YamlInputError, read_yaml
from ksched.api import Pod, load_manifests
from ksched.cli import main
from ksched.config import load_config

NODE = """apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""
POD_TWO_NAMES = """apiVersion: v1
kind: Pod
metadata: {name: a, name: b}
spec:
  containers: [{name: c}]
"""
SCENARIO = """apiVersion: ksched/v1alpha1
kind: Scenario
metadata:
  name: dup
  name: dup-again
objects:
  - {apiVersion: v1, kind: Node, metadata: {name: n1},
     status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}}
  - {apiVersion: v1, kind: Pod, metadata: {name: web},
     spec: {containers: [{name: c}]}}
expect:
  placements: {default/web: n1}
"""
CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    schedulerName: other-scheduler
"""


def test_repeated_key_in_a_manifest_exits_2_naming_file_line_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "app.yaml"
    path.write_text(NODE + "---\n" + POD_TWO_NAMES)
    assert main(["simulate", "-f", str(path), "-o", "json"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f'ksched: error: {path}: line 8: key "name" already set in map\n'


def test_no_strict_warns_of_the_repeated_key_and_keeps_the_last_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "app.yaml"
    path.write_text(NODE + "---\n" + POD_TWO_NAMES)
    assert main(["simulate", "-f", str(path), "-o", "json", "--no-strict"]) == 0
    out, err = capsys.readouterr()
    assert err == f'ksched: warning: {path}: line 8: key "name" already set in map\n'
    assert set(json.loads(out)["pods"]) == {"default/b"}


def test_repeated_key_in_a_scenario_fails_simulate_and_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "dup.yaml"
    path.write_text(SCENARIO)
    assert main(["simulate", str(path), "-o", "json"]) == 2
    assert capsys.readouterr().err == (
        f'ksched: error: {path}: line 5: key "name" already set in map\n'
    )
    assert main(["check", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == (
        f'FAIL dup: cannot read: {path}: line 5: key "name" already set in map\n'
        "0 passed, 1 failed\n"
    )
    assert main(["check", "--no-strict", str(path)]) == 0
    out, err = capsys.readouterr()
    assert out == "PASS dup-again\n1 passed, 0 failed\n"
    assert err == f'ksched: warning: {path}: line 5: key "name" already set in map\n'


def test_repeated_key_in_a_scheduler_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "sched.yaml"
    config.write_text(CONFIG)
    message = f'{config}: line 5: key "schedulerName" already set in map'
    assert main(["config", "validate", str(config)]) == 2
    assert capsys.readouterr().err == f"ksched: error: {message}\n"
    manifests = tmp_path / "app.yaml"
    manifests.write_text(NODE)
    assert main(["simulate", "-f", str(manifests), "--config", str(config)]) == 2
    assert capsys.readouterr().err == f"ksched: error: {message}\n"
    with pytest.raises(ConfigError) as info:
        load_config(CONFIG, source="sched.yaml")
    assert str(info.value) == 'sched.yaml: line 5: key "schedulerName" already set in map'


def test_repeated_key_in_a_json_manifest_is_found_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "pod.json"
    path.write_text(
        '{"apiVersion": "v1", "kind": "Pod",\n'
        ' "metadata": {"name": "a",\n'
        '              "name": "b"},\n'
        ' "spec": {"containers": [{"name": "c"}]}}\n'
    )
    assert main(["simulate", "-f", str(path), "-o", "json"]) == 2
    assert capsys.readouterr().err == (
        f'ksched: error: {path}: line 3: key "name" already set in map\n'
    )


def test_every_repeated_key_is_reported_and_merge_keys_are_not_repeats() -> None:
    text = "a: 1\nb: {x: 1, x: 2}\na: 3\n---\nbase: &base {p: 1}\nuse: {<<: *base, p: 2}\n"
    with pytest.raises(YamlInputError) as info:
        read_yaml(text, "f.yaml")
    assert str(info.value) == (
        'f.yaml: line 2: key "x" already set in map\nf.yaml: line 3: key "a" already set in map'
    )
    warnings: list[str] = []
    docs = read_yaml(text, "f.yaml", strict=False, warnings=warnings)
    assert docs == [{"a": 3, "b": {"x": 2}}, {"base": {"p": 1}, "use": {"p": 2}}]
    assert len(warnings) == 2


def test_load_manifests_refuses_a_repeated_key_unless_told() -> None:
    with pytest.raises(ManifestError) as info:
        load_manifests(POD_TWO_NAMES, source="pod.yaml")
    assert str(info.value) == 'pod.yaml: line 3: key "name" already set in map'
    (pod,) = load_manifests(POD_TWO_NAMES, source="pod.yaml", strict=False)
    assert isinstance(pod, Pod)
    assert pod.metadata.name == "b"


SYNTAX = [
    (
        "a mapping value inside a plain scalar",
        "apiVersion: v1\nkind: Node\nmetadata: name: n1\n",
        "invalid YAML: line 3, column 15: mapping values are not allowed in this context",
    ),
    (
        "an unclosed flow sequence",
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: [a\n",
        "invalid YAML: line 4, column 1: did not find expected ',' or ']' "
        "(while parsing a flow sequence at line 3, column 30)",
    ),
]


@pytest.mark.parametrize(("text", "message"), [c[1:] for c in SYNTAX], ids=[c[0] for c in SYNTAX])
def test_syntax_error_names_the_file_and_line_not_a_unicode_string(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    assert main(["simulate", "-f", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == f"ksched: error: {path}: {message}\n"
    assert "<unicode string>" not in err
    assert main(["config", "validate", str(path)]) == 2
    assert capsys.readouterr().err == f"ksched: error: {path}: {message}\n"
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert out == f"FAIL bad: cannot read: {path}: {message}\n0 passed, 1 failed\n"
