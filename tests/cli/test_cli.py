"""The ``ksched`` command: exit codes (0 ok, 1 check failures, 2 bad input), the JSON
and table output of ``simulate``, its inputs and options, ``config``, ``plugins``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

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


@pytest.mark.parametrize(
    ("gates", "message"),
    [
        ("Batching=true", "unknown feature gate 'Batching' (known: OpportunisticBatching)"),
        ("OpportunisticBatching=maybe", "expected OpportunisticBatching=true or"),
        ("OpportunisticBatching", "expected OpportunisticBatching=true or"),
    ],
)
def test_simulate_bad_feature_gate_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], gates: str, message: str
) -> None:
    path = write(tmp_path, "s.yaml", SCENARIO)
    assert main(["simulate", str(path), "--feature-gates", gates]) == 2
    assert message in capsys.readouterr().err


def test_simulate_with_batching_off_gives_the_same_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "s.yaml", SCENARIO)
    assert main(["simulate", str(path), "-o", "json"]) == 0
    on = json.loads(capsys.readouterr().out)
    off_gate = "OpportunisticBatching=false"
    assert main(["simulate", str(path), "-o", "json", "--feature-gates", off_gate]) == 0
    assert json.loads(capsys.readouterr().out)["pods"] == on["pods"]


def test_simulate_unknown_kind_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = SCENARIO.replace("kind: Node,", "kind: Gizmo,")
    assert main(["simulate", str(write(tmp_path, "k.yaml", text))]) == 2
    assert "Gizmo n1: kind: unsupported kind 'Gizmo'" in capsys.readouterr().err


def test_simulate_invalid_config_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = SCENARIO.replace("  profiles:", "  percentageOfNodesToScore: 120\n  profiles:")
    assert main(["simulate", str(write(tmp_path, "c.yaml", text))]) == 2
    assert (
        "percentageOfNodesToScore: Invalid value: 120: not in valid range [0-100]"
        in capsys.readouterr().err
    )


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


def test_check_missing_file_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, "s.yaml", SCENARIO)
    missing = tmp_path / "missing.yaml"
    assert main(["check", str(tmp_path / "s.yaml"), str(missing)]) == 2
    out, err = capsys.readouterr()
    assert err == f"ksched: error: check: {missing}: no such file or directory\n"
    assert out == ""  # nothing ran: the scenario that exists is not checked either


def test_check_of_a_directory_without_scenarios_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, "notes.txt", "not a scenario")
    assert main(["check", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert err == f"ksched: error: check: {tmp_path}: no .yaml or .yml files in this directory\n"
    assert out == ""


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
        main(["simulate", "s.yaml", "--output", "xml"])
    assert info.value.code == 2


# ---- inputs: -f, manifests, --config ------------------------------------------------------

NODES = """
apiVersion: v1
kind: List
items:
  - {apiVersion: v1, kind: Node, metadata: {name: n1},
     status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}}
  - {apiVersion: v1, kind: Node, metadata: {name: n2},
     status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
"""

PODS = """
apiVersion: v1
kind: Pod
metadata: {name: web-0}
spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: big}
spec: {containers: [{name: c, resources: {requests: {cpu: "8"}}}]}
"""

FIT_ONLY = CONFIG.replace("config:\n", "").replace("\n  ", "\n")


def test_simulate_plain_manifests(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cluster = tmp_path / "cluster"
    cluster.mkdir()
    write(cluster, "nodes.yaml", NODES)
    pods = write(tmp_path, "pods.yaml", PODS)
    assert main(["simulate", "-f", str(cluster), "-f", str(pods), "-o", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["scenario"] == "manifests"
    assert report["pods"]["default/web-0"]["node"] == "n2"
    assert report["pods"]["default/big"]["message"] == (
        # 8 cpu is more than any node has: evicting cannot help (Unresolvable).
        "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, "
        "preemption: 0/2 nodes are available: "
        "2 Preemption is not helpful for scheduling."
    )
    assert report["nodes"]["n2"]["requested"] == {"cpu": 1.0, "memory": 0, "pods": 1}


def test_simulate_config_option_replaces_the_scenarios(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes, pods = write(tmp_path, "n.yaml", NODES), write(tmp_path, "p.yaml", PODS)
    config = write(tmp_path, "fit.yaml", FIT_ONLY)
    argv = ["simulate", "-f", str(nodes), "-f", str(pods), "--config", str(config)]
    assert main([*argv, "--explain", "web-0"]) == 0
    report = json.loads(capsys.readouterr().out)
    # Only NodeResourcesFit scores, and no DefaultPreemption: the plain FitError message.
    assert set(report["explain"]["default/web-0"]["weights"]) == {"NodeResourcesFit"}
    assert report["pods"]["default/big"]["message"] == (
        "0/2 nodes are available: 2 Insufficient cpu."
    )


def test_simulate_bad_manifest_exits_2_naming_file_document_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pods = write(tmp_path, "p.yaml", PODS.replace('cpu: "8"', "cpu: lots"))
    assert main(["simulate", "-f", str(pods)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"ksched: error: {pods}: document 2: Pod default/big: "
        "spec.containers[0].resources.requests.cpu: invalid quantity 'lots'\n"
    )


def test_simulate_bad_config_file_exits_2_naming_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes = write(tmp_path, "n.yaml", NODES)
    config = write(tmp_path, "c.yaml", FIT_ONLY.replace("profiles:", "parallelism: 0\nprofiles:"))
    assert main(["simulate", "-f", str(nodes), "--config", str(config)]) == 2
    assert capsys.readouterr().err == (
        f"ksched: error: {config}: KubeSchedulerConfiguration: parallelism: "
        "Invalid value: 0: should be an integer value greater than zero\n"
    )


def test_simulate_without_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate"]) == 2
    assert "no input" in capsys.readouterr().err
    empty = write(tmp_path, "empty.yaml", "# nothing\n---\n")
    assert main(["simulate", "-f", str(empty)]) == 2
    assert f"{empty}: no Kubernetes objects" in capsys.readouterr().err


# ---- table output, --explain, --events --------------------------------------------------


def test_simulate_table_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "s.yaml", SCENARIO)
    assert main(["simulate", str(path), "--output", "table"]) == 0
    out = capsys.readouterr().out
    assert "scenario two-pods at t=0s" in out
    row = next(line for line in out.splitlines() if "default/web-0" in line).split()
    assert row == ["default/web-0", "n1", "Bound", "1"]
    assert "0/1 nodes are available: 1" in out
    assert "node utilization (requested / allocatable)" in out
    assert "1/2" in next(line for line in out.splitlines() if line.strip().startswith("n1 "))


def test_simulate_explain_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nodes, pods = write(tmp_path, "n.yaml", NODES), write(tmp_path, "p.yaml", PODS)
    argv = ["simulate", "-f", str(nodes), "-f", str(pods), "-o", "table"]
    assert main([*argv, "--explain", "web-0", "--explain", "default/big"]) == 0
    out = capsys.readouterr().out
    assert "explain default/web-0" in out
    assert "selected: n2" in out
    assert "explain default/big" in out
    big = out[out.index("explain default/big") :]
    n1 = next(line for line in big.splitlines() if line.strip().startswith("n1 "))
    assert n1.split()[1:] == ["✗", "unresolvable", "NodeResourcesFit", "Insufficient", "cpu"]
    assert "selected: no node (the attempt failed)" in big


def test_simulate_explain_unknown_pod_exits_2_before_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "s.yaml", SCENARIO)
    assert main(["simulate", str(path), "-o", "table", "--explain", "nope"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "--explain default/nope: the scenario has no such pod" in captured.err


def test_simulate_explain_limits_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nodes, pods = write(tmp_path, "n.yaml", NODES), write(tmp_path, "p.yaml", PODS)
    assert main(["simulate", "-f", str(nodes), "-f", str(pods), "--explain", "big"]) == 0
    assert set(json.loads(capsys.readouterr().out)["explain"]) == {"default/big"}


def test_simulate_events_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "s.yaml", SCENARIO)
    assert main(["simulate", str(path), "-o", "table", "--events"]) == 0
    lines = [" ".join(line.split()) for line in capsys.readouterr().out.splitlines()]
    assert "00:00:00.000 default/web-0 queued" in lines
    assert "00:00:00.000 default/web-0 bound to n1" in lines
    assert any(
        line.startswith("00:00:00.000 default/big unschedulable 0/1 nodes") for line in lines
    )


def test_simulate_json_stays_clean_with_a_terminal_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    path = write(tmp_path, "s.yaml", SCENARIO)
    assert main(["simulate", str(path), "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["scenario"] == "two-pods"


# ---- --plot -------------------------------------------------------------------------------


def test_plot_without_matplotlib_exits_2_before_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    path = write(tmp_path, "s.yaml", SCENARIO)
    png = tmp_path / "out.png"
    assert main(["simulate", str(path), "--plot", str(png)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "--plot needs matplotlib" in captured.err
    assert "pip install 'ksched[plot]'" in captured.err
    assert not png.exists()


def test_plot_writes_a_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    path = write(tmp_path, "s.yaml", SCENARIO)
    png = tmp_path / "out.png"
    assert main(["simulate", str(path), "-o", "json", "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "history" not in json.loads(capsys.readouterr().out)


# ---- config -----------------------------------------------------------------------------


def test_config_defaults_round_trips(capsys: pytest.CaptureFixture[str]) -> None:
    from ksched.cluster import InMemoryCluster
    from ksched.config import SchedulerConfig, config_yaml, parse_config
    from ksched.scheduler import Scheduler

    assert main(["config", "defaults"]) == 0
    text = capsys.readouterr().out
    data = yaml.safe_load(text)
    assert data["kind"] == "KubeSchedulerConfiguration"
    parsed = parse_config(data)
    assert config_yaml(parsed, plugin_args=True) == text
    # Same plugins, order and weights as the built-in defaults, upstream's:
    # TaintToleration 3, NodeAffinity 2, PodTopologySpread 2, InterPodAffinity 2, others 1.
    ours = Scheduler(parsed, InMemoryCluster()).frameworks["default-scheduler"]
    builtin = Scheduler(SchedulerConfig(), InMemoryCluster()).frameworks["default-scheduler"]
    assert ours.points == builtin.points
    assert (
        ours.weights
        == builtin.weights
        == {
            "TaintToleration": 3,
            "NodeAffinity": 2,
            "NodeResourcesFit": 1,
            "VolumeBinding": 1,
            "PodTopologySpread": 2,
            "InterPodAffinity": 2,
            "DynamicResources": 1,
            "NodeResourcesBalancedAllocation": 1,
            "ImageLocality": 1,
        }
    )


def test_config_defaults_plugin_args_are_the_defaults() -> None:
    import importlib

    from ksched.config import DEFAULT_PLUGIN_ARGS
    from ksched.plugins import IN_TREE

    for name, args in DEFAULT_PLUGIN_ARGS.items():
        module = importlib.import_module(f"ksched.plugins.{IN_TREE[name].partition(':')[0]}")
        readers = [
            v for k, v in vars(module).items() if k == f"{name}Args" and hasattr(v, "from_dict")
        ]
        assert len(readers) == 1, name
        assert readers[0].from_dict(args) == readers[0].from_dict(None), name


def test_config_validate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write(tmp_path, "good.yaml", FIT_ONLY)
    assert main(["config", "validate", str(good)]) == 0
    assert capsys.readouterr().out == f"{good}: valid (1 profile(s): default-scheduler)\n"


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (
            ("profiles:", "percentageOfNodesToScore: 101\nprofiles:"),
            "KubeSchedulerConfiguration: percentageOfNodesToScore: Invalid value: 101: "
            "not in valid range [0-100]",
        ),
        (
            ("multiPoint:", "sorting:"),
            'KubeSchedulerConfiguration: unknown field "profiles[0].plugins.sorting"',
        ),
        (
            ("{name: NodeResourcesFit}", "{name: NodeResourcesFit, weight: -1}"),
            "profiles[0].plugins.multiPoint.enabled[1].weight: must be at least 0",
        ),
        (
            ("{name: NodeResourcesFit}", "{name: Fancy}"),
            "KubeSchedulerConfiguration: profiles[0].plugins.multiPoint.enabled[1].name: "
            'plugin "Fancy" is not registered\n',
        ),
        (
            ("{name: PrioritySort}, ", ""),
            "profile 'default-scheduler': plugins.queueSort: no queue sort plugin is enabled",
        ),
    ],
    ids=["range", "unknown-point", "weight", "unknown-plugin", "no-queue-sort"],
)
def test_config_validate_errors_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: tuple[str, str], error: str
) -> None:
    bad = write(tmp_path, "bad.yaml", FIT_ONLY.replace(*change))
    assert main(["config", "validate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ksched: error: {bad}: ")
    assert error in err


def test_config_validate_invalid_yaml(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = write(tmp_path, "bad.yaml", "profiles: [")
    assert main(["config", "validate", str(bad)]) == 2
    assert f"{bad}: invalid YAML" in capsys.readouterr().err


# ---- plugins, --plugin ------------------------------------------------------------------

PLUGIN_MODULE = '''
from ksched.framework import Code, Status


class AvoidN1:
    """Keeps pods off n1."""

    name = "AvoidN1"

    @classmethod
    def new(cls, args, handle):
        return cls()

    def filter(self, state, pod, node_info):
        if node_info.name == "n1":
            return Status(Code.UNSCHEDULABLE, ("node n1 is avoided",))
        return None
'''


@pytest.fixture
def avoid_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    package = tmp_path / "plugin_src"
    package.mkdir()
    write(package, "ksched_test_avoid_n1.py", PLUGIN_MODULE)
    monkeypatch.syspath_prepend(str(package))
    return "ksched_test_avoid_n1:AvoidN1"


def test_plugins_lists_in_tree_with_extension_points(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plugins", "-o", "json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["NodeResourcesFit"] == {
        "name": "NodeResourcesFit",
        "source": "in-tree",
        "extensionPoints": ["preFilter", "filter", "preScore", "score"],
        "fastPaths": {
            "batchForms": [
                "filter_batch",
                "filter_batch_statuses",
                "filter_batch_status_groups",
                "score_batch",
            ],
            "nodeLocal": ["filter", "score"],
            "podFields": ["v1.Pod.Spec.ContainerRequestsAndOverheads()"],
            "signsPods": True,
            "async": [],
        },
        "turnsOff": [],
    }
    assert rows["PrioritySort"]["extensionPoints"] == ["queueSort"]
    assert rows["DefaultBinder"]["extensionPoints"] == ["bind"]
    assert rows["SchedulingGates"]["extensionPoints"] == ["preEnqueue"]


def test_plugins_lists_a_plugin_option(
    avoid_plugin: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plugins", "-o", "table", "--plugin", avoid_plugin]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "AvoidN1" in line)
    assert row.split() == ["AvoidN1", "--plugin", "filter", "-"]
    # It promises the fast paths nothing, and the listing says what that turns off.
    assert "  AvoidN1: opportunistic batching, for its whole profile: it does not sign pods" in out
    assert "  AvoidN1: kept Filter masks and verdicts, for pods it filters: not node-local" in out


def test_bad_plugin_option_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plugins", "--plugin", "no_such_module_here:Plugin"]) == 2
    assert "no_such_module_here" in capsys.readouterr().err


AVOID_SCENARIO = """
apiVersion: ksched/v1alpha1
kind: Scenario
metadata: {name: avoid-n1}
config:
  apiVersion: kubescheduler.config.k8s.io/v1
  kind: KubeSchedulerConfiguration
  profiles:
    - plugins:
        multiPoint:
          enabled: [{name: PrioritySort}, {name: NodeResourcesFit}, {name: AvoidN1},
                    {name: DefaultBinder}]
          disabled: [{name: "*"}]
objects:
  - {apiVersion: v1, kind: Node, metadata: {name: n0},
     status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}}
  - {apiVersion: v1, kind: Node, metadata: {name: n1},
     status: {allocatable: {cpu: "2", memory: 8Gi, pods: "110"}}}
  - {apiVersion: v1, kind: Pod, metadata: {name: web-0},
     spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
  - {apiVersion: v1, kind: Pod, metadata: {name: web-1},
     spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
  - {apiVersion: v1, kind: Pod, metadata: {name: web-2},
     spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
expect:
  placements: {default/web-0: n0, default/web-1: n0, default/web-2: null}
"""


def test_simulate_and_check_with_a_plugin_option(
    tmp_path: Path, avoid_plugin: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "s.yaml", AVOID_SCENARIO)
    argv = ["simulate", str(path), "--plugin", avoid_plugin, "-o", "json", "--explain", "web-2"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["pods"]["default/web-2"]["message"] == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node n1 is avoided."
    )
    assert report["explain"]["default/web-2"]["filter"]["n1"] == {
        "code": "Unschedulable",
        "plugin": "AvoidN1",
        "reasons": ["node n1 is avoided"],
    }
    assert main(["check", str(path), "--plugin", avoid_plugin]) == 0
    assert "1 passed, 0 failed" in capsys.readouterr().out
    # Without the plugin the profile names an unknown plugin: bad input.
    assert main(["simulate", str(path)]) == 2
    assert 'plugin "AvoidN1" is not registered' in capsys.readouterr().err


# ---- bench ------------------------------------------------------------------------------


def test_bench_is_a_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    assert "bench" in capsys.readouterr().out
    with pytest.raises(SystemExit) as info:
        main(["bench", "--help"])
    assert info.value.code == 0
    assert "usage: ksched bench" in capsys.readouterr().out


def test_simulate_writes_its_final_metrics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--metrics FILE: the scheduler's metrics in Prometheus text, comparable with a
    cluster's (the demo: five pods bound, one unschedulable)."""
    out = tmp_path / "metrics.txt"
    demo = Path(__file__).resolve().parents[2] / "examples" / "scenarios" / "demo.yaml"
    assert main(["simulate", str(demo), "--output", "json", "--metrics", str(out)]) == 0
    capsys.readouterr()
    text = out.read_text()
    profile = 'profile="default-scheduler"'
    assert f'scheduler_schedule_attempts_total{{{profile},result="scheduled"}} 5.0' in text
    assert f'scheduler_schedule_attempts_total{{{profile},result="unschedulable"}} 1.0' in text
    assert 'scheduler_pending_pods{queue="unschedulable"} 1.0' in text
    assert main(["simulate", str(demo), "--metrics", str(tmp_path / "no" / "m.txt")]) == 2
    assert "--metrics" in capsys.readouterr().err
