"""A plugin name no registry knows, wherever the configuration comes from: the message
names the file and the field path and suggests the nearest registered name; exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from ksched import ConfigError
from ksched.cli import main
from ksched.config import check_plugin_names, load_config, nearest_name
from ksched.plugins import IN_TREE

MANIFESTS = """apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: web}
spec: {containers: [{name: c}]}
"""
CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      multiPoint:
        enabled:
          - name: PrioritySort
          - name: NodeResourceFit
"""
MISSPELT = (
    "KubeSchedulerConfiguration: profiles[0].plugins.multiPoint.enabled[1].name: "
    'plugin "NodeResourceFit" is not registered; did you mean "NodeResourcesFit"?'
)


def _scenario(config: str) -> str:
    indented = "".join(f"  {line}\n" for line in config.splitlines())
    return (
        "apiVersion: ksched/v1alpha1\nkind: Scenario\nmetadata: {name: typo}\n"
        f"config:\n{indented}"
        "objects:\n"
        "  - {apiVersion: v1, kind: Node, metadata: {name: n1},\n"
        '     status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}}\n'
        "expect:\n  placements: {}\n"
    )


def test_simulate_with_a_config_file_naming_an_unknown_plugin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "good.yaml").write_text(MANIFESTS)
    (tmp_path / "bad.yaml").write_text(CONFIG)
    argv = ["simulate", "-f", str(tmp_path / "good.yaml"), "--config", str(tmp_path / "bad.yaml")]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"ksched: error: {tmp_path / 'bad.yaml'}: {MISSPELT}\n"


def test_a_configuration_document_among_the_manifests(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "all.yaml"
    path.write_text(MANIFESTS + "---\n" + CONFIG)
    assert main(["simulate", "-f", str(path)]) == 2
    assert capsys.readouterr().err == f"ksched: error: {path}: document 3: {MISSPELT}\n"


def test_a_scenarios_embedded_config_in_simulate_and_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text(_scenario(CONFIG))
    assert main(["simulate", str(path)]) == 2
    assert capsys.readouterr().err == f"ksched: error: {path}: {MISSPELT}\n"
    assert main(["check", str(path)]) == 1
    assert (
        capsys.readouterr().out == f"FAIL typo: rejected: {path}: {MISSPELT}\n0 passed, 1 failed\n"
    )


def test_config_validate_names_the_file_field_and_nearest_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(CONFIG)
    assert main(["config", "validate", str(path)]) == 2
    assert capsys.readouterr().err == f"ksched: error: {path}: {MISSPELT}\n"


@pytest.mark.parametrize(
    ("plugins", "message"),
    [
        (
            "plugins:\n      filter:\n        enabled: [{name: TaintToleration}, "
            "{name: nodeaffinity}]",
            "profiles[0].plugins.filter.enabled[1].name: "
            'plugin "nodeaffinity" is not registered; did you mean "NodeAffinity"?',
        ),
        (
            "pluginConfig:\n      - {name: InterPodAfinity, args: {}}",
            "profiles[0].pluginConfig[0].name: "
            'pluginConfig for unknown plugin "InterPodAfinity"; did you mean "InterPodAffinity"?',
        ),
        (
            "plugins:\n      score:\n        enabled: [{name: Fancy}]",
            'profiles[0].plugins.score.enabled[0].name: plugin "Fancy" is not registered',
        ),
    ],
    ids=["case", "plugin-config", "nothing-near"],
)
def test_every_place_a_profile_names_a_plugin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], plugins: str, message: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        f"profiles:\n  - schedulerName: default-scheduler\n    {plugins}\n"
    )
    assert main(["config", "validate", str(path)]) == 2
    expected = f"ksched: error: {path}: KubeSchedulerConfiguration: {message}\n"
    assert capsys.readouterr().err == expected


def test_check_plugin_names_reads_the_path_of_the_first_mention() -> None:
    config = load_config(CONFIG.replace("NodeResourceFit", "NodeResourcesFit"))
    check_plugin_names(config, IN_TREE)  # every name known: no error
    with pytest.raises(ConfigError) as info:
        check_plugin_names(load_config(CONFIG), IN_TREE)
    assert str(info.value) == MISSPELT


def test_nearest_name() -> None:
    known = ["NodeResourcesFit", "NodeResourcesBalancedAllocation", "NodeAffinity"]
    assert nearest_name("NodeResourceFit", known) == "NodeResourcesFit"
    assert nearest_name("noderesourcesfit", known) == "NodeResourcesFit"
    assert nearest_name("Volumes", known) is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ("    plugins:\n", "    plugin:\n"),
            'unknown field "profiles[0].plugin"; did you mean "plugins"?',
        ),
        (
            ("      multiPoint:\n", "      multipoint:\n"),
            'unknown field "profiles[0].plugins.multipoint"; did you mean "multiPoint"?',
        ),
        (
            ("profiles:\n", "parallelizm: 4\nprofiles:\n"),
            'unknown field "parallelizm"; did you mean "parallelism"?',
        ),
        (("profiles:\n", "colour: blue\nprofiles:\n"), 'unknown field "colour"'),
    ],
    ids=["profile-field", "extension-point", "top-level", "nothing-near"],
)
def test_unknown_fields_suggest_the_nearest_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: tuple[str, str], message: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(CONFIG.replace(*change))
    assert main(["config", "validate", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"ksched: error: {path}: KubeSchedulerConfiguration: {message}\n"
    )
