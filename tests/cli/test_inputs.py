"""``ksched simulate -f``: plain manifests (multi-document, ``kind: List``), Scenario
files, directories and configurations, read whole before anything runs; errors name the
file, the document, the object and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from ksched._errors import ConfigError
from ksched.api import Node, Pod
from ksched.cli._inputs import InputError, input_files, load_config_file, load_inputs
from ksched.cluster import object_key
from ksched.simulate import ScenarioError

NODES_LIST = """
apiVersion: v1
kind: List
items:
  - {apiVersion: v1, kind: Node, metadata: {name: n1},
     status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}}
  - {apiVersion: v1, kind: Node, metadata: {name: n2},
     status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}}
"""

PODS = """
apiVersion: v1
kind: Pod
metadata: {name: a}
spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: team}
spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
"""

SCENARIO = """
apiVersion: ksched/v1alpha1
kind: Scenario
metadata: {name: with-steps}
objects:
  - {apiVersion: v1, kind: Pod, metadata: {name: s}, spec: {containers: [{name: c}]}}
steps:
  - advance: 5s
"""

CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 30
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_plain_manifests_make_one_settling_scenario(tmp_path: Path) -> None:
    nodes = write(tmp_path, "nodes.yaml", NODES_LIST)
    pods = write(tmp_path, "pods.yaml", PODS)
    scenario = load_inputs([nodes, pods])
    assert [type(o) for o in scenario.objects] == [Node, Node, Pod, Pod]
    assert [o.key for o in scenario.objects if isinstance(o, Pod)] == ["default/a", "team/b"]
    assert [(s.kind, s.seconds) for s in scenario.steps] == [("settle", 3600.0)]
    assert scenario.name == "manifests"
    assert scenario.config.percentage_of_nodes_to_score == 0


def test_directory_is_read_in_name_order(tmp_path: Path) -> None:
    write(tmp_path, "cluster/2-pods.yml", PODS)
    write(tmp_path, "cluster/1-nodes.yaml", NODES_LIST)
    write(tmp_path, "cluster/notes.txt", "not yaml: [")
    files = input_files([tmp_path / "cluster"])
    assert [f.name for f in files] == ["1-nodes.yaml", "2-pods.yml"]
    scenario = load_inputs([tmp_path / "cluster"])
    assert scenario.name == "cluster"
    assert len(scenario.objects) == 4


def test_manifests_next_to_a_scenario_join_its_objects(tmp_path: Path) -> None:
    scenario = load_inputs(
        [write(tmp_path, "s.yaml", SCENARIO), write(tmp_path, "nodes.yaml", NODES_LIST)]
    )
    assert scenario.name == "with-steps"
    assert [object_key(o) for o in scenario.objects] == ["default/s", "n1", "n2"]
    assert [s.kind for s in scenario.steps] == ["advance"]


def test_configuration_document_and_config_option(tmp_path: Path) -> None:
    nodes = write(tmp_path, "nodes.yaml", NODES_LIST)
    cfg_doc = write(tmp_path, "cfg.yaml", CONFIG)
    assert load_inputs([nodes, cfg_doc]).config.percentage_of_nodes_to_score == 30
    override = write(tmp_path, "other.yaml", CONFIG.replace("30", "70"))
    scenario = load_inputs([nodes, cfg_doc], config=override)
    assert scenario.config.percentage_of_nodes_to_score == 70


def test_bad_object_names_file_document_object_and_field(tmp_path: Path) -> None:
    pods = write(tmp_path, "pods.yaml", PODS)
    bad_text = PODS.replace("name: a", "name: c").replace("name: b", "name: d")
    head, _, tail = bad_text.rpartition('cpu: "1"')  # break the second pod only
    bad = write(tmp_path, "bad.yaml", f'{head}cpu: "2x"{tail}')
    load_inputs([pods])  # the good one reads
    with pytest.raises(InputError) as info:
        load_inputs([pods, bad])
    message = str(info.value)
    assert message.startswith(f"{bad}: document 2: Pod team/d: ")
    assert "spec.containers[0].resources.requests.cpu: invalid quantity '2x'" in message


def test_bad_list_item_is_named_by_index(tmp_path: Path) -> None:
    text = NODES_LIST.replace(
        'pods: "10"}}}\n  - ', 'pods: "10"}}}\n  - {kind: Node, metadata: {}}\n  - ', 1
    )
    path = write(tmp_path, "nodes.yaml", text)
    with pytest.raises(InputError, match=r"nodes\.yaml: items\[1\]: .*metadata\.name: required"):
        load_inputs([path])


def test_unsupported_kind(tmp_path: Path) -> None:
    path = write(tmp_path, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    with pytest.raises(
        InputError, match=r"cm\.yaml: ConfigMap x: kind: unsupported kind 'ConfigMap'"
    ):
        load_inputs([path])


def test_duplicate_objects_are_rejected(tmp_path: Path) -> None:
    a = write(tmp_path, "a.yaml", PODS)
    b = write(tmp_path, "b.yaml", PODS)
    with pytest.raises(InputError) as info:
        load_inputs([a, b])
    assert str(info.value) == (
        f"{b}: document 1: Pod default/a: already defined at {a}: document 1"
    )
    s = write(tmp_path, "s.yaml", SCENARIO)
    dup = write(tmp_path, "dup.yaml", "{apiVersion: v1, kind: Pod, metadata: {name: s}}")
    with pytest.raises(InputError, match=r"dup\.yaml: Pod default/s: already defined in .*s\.yaml"):
        load_inputs([s, dup])


def test_one_scenario_and_one_configuration_at_a_time(tmp_path: Path) -> None:
    s1 = write(tmp_path, "s1.yaml", SCENARIO)
    s2 = write(tmp_path, "s2.yaml", SCENARIO)
    with pytest.raises(InputError, match=r"one Scenario at a time, got 2: .*s1\.yaml, .*s2"):
        load_inputs([s1, s2])
    c1 = write(tmp_path, "c1.yaml", CONFIG)
    c2 = write(tmp_path, "c2.yaml", CONFIG)
    with pytest.raises(InputError, match="one KubeSchedulerConfiguration at a time"):
        load_inputs([s1, c1, c2])


def test_missing_path_empty_directory_and_bad_yaml(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nope\.yaml: no such file or directory"):
        load_inputs([tmp_path / "nope.yaml"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"empty: no \.yaml, \.yml, \.json files"):
        load_inputs([tmp_path / "empty"])
    bad = write(tmp_path, "bad.yaml", "kind: [")
    with pytest.raises(InputError, match=r"bad\.yaml: invalid YAML"):
        load_inputs([bad])


def test_scenario_errors_keep_their_path(tmp_path: Path) -> None:
    path = write(tmp_path, "s.yaml", SCENARIO.replace("advance: 5s", "advance: soon"))
    with pytest.raises(ScenarioError, match=r"s\.yaml: steps\[0\]\.advance: invalid duration"):
        load_inputs([path])


def test_load_config_file(tmp_path: Path) -> None:
    assert load_config_file(write(tmp_path, "c.yaml", CONFIG)).percentage_of_nodes_to_score == 30
    scenario = write(
        tmp_path,
        "s.yaml",
        SCENARIO + "config: {apiVersion: kubescheduler.config.k8s.io/v1, parallelism: 4}\n",
    )
    assert load_config_file(scenario).parallelism == 4
    bad = write(tmp_path, "bad.yaml", CONFIG.replace("30", "130"))
    with pytest.raises(ConfigError) as info:
        load_config_file(bad)
    assert str(info.value) == (
        f"{bad}: KubeSchedulerConfiguration: percentageOfNodesToScore: "
        "must be between 0 and 100, got 130"
    )
