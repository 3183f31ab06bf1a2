"""The spec: fields checked with the file and field named, the grid crossed, overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from ksched.cli import main
from ksched.cluster import InMemoryCluster
from ksched.config import SchedulerConfig
from ksched.scheduler import Scheduler
from ksched.sweep import SpecError, SweepSpec, apply_overrides, prepare
from ksched.sweep._overrides import parse_override

from .conftest import EXAMPLES, write_cluster, write_spec

SPEC = """\
kind: Sweep
run: simulate
grid:
  input: {{small: [cluster/nodes.yaml, cluster/pods.yaml]}}
  config:
    default: {{}}
    packed: {{overrides: [{{plugin: NodeResourcesFit, scoringStrategy: MostAllocated}}]}}
  seed: [0, 1, 2]
{extra}
"""


def spec_file(tmp_path: Path, extra: str = "") -> Path:
    write_cluster(tmp_path / "cluster")
    return write_spec(tmp_path, SPEC.format(extra=extra))


def test_grid_is_the_cross_product_in_axis_order(tmp_path: Path) -> None:
    spec = SweepSpec.load(spec_file(tmp_path))
    cells = spec.cells()
    assert spec.axis_names == ("input", "config", "seed")
    assert [tuple(label for _, label in c.labels) for c in cells] == [
        ("small", config, seed) for config in ("default", "packed") for seed in ("0", "1", "2")
    ]
    assert len({c.id for c in cells}) == 6
    # The id is the cell's labels: the same in a spec read again, another order of files.
    assert [c.id for c in SweepSpec.load(spec.path).cells()] == [c.id for c in cells]
    assert spec.table == tmp_path / "sweep.csv"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("colour: red", r"sweep.yaml: colour: unknown field"),
        ("metrics: bound", r"sweep.yaml: metrics: expected a list of metric names"),
        (
            "plots: [{metric: bound, x: weight, file: a.png}]",
            r"sweep.yaml: plots\[0\].x: 'weight': expected an axis \(input, config, seed\) or at",
        ),
        (
            "plots: [{metric: bound, x: seed, by: policy, file: a.png}]",
            r"plots\[0\].by: 'policy': expected an axis",
        ),
    ],
)
def test_a_bad_field_is_named(tmp_path: Path, extra: str, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        SweepSpec.load(spec_file(tmp_path, extra))


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        ("  input: [nothere.yaml]", r"grid.input\[0\]: .*nothere.yaml: no such file"),
        ("  input: [a.yaml]\n  seed: [1, two]", r"grid.seed\[1\]: 'two': expected an integer"),
        (
            "  input: [a.yaml]\n  policy: [FGD]",
            r"grid.policy: unknown axis for run: simulate \(known: input, config",
        ),
        (
            "  input: [a.yaml]\n  NodeResourcesFit.weight: [0]",
            r"grid.NodeResourcesFit.weight\[0\].weight: 0: expected a positive integer",
        ),
        ("  seed: [1]", r"grid.input: every sweep needs its inputs"),
        ("  input: [a.yaml, a.yaml]", r"grid.input\[1\]: 'a.yaml' is there twice"),
        (
            '  input: [a.yaml]\n  seed: {"two\\nlines": 2}',
            r"grid.seed\[0\]: 'two\\nlines': a label is one line of 1 to 200 characters",
        ),
        (
            "  input: [a.yaml]\n  seed: "
            + str(list(range(1001)))
            + "\n  opportunisticBatching: [true, false]"
            + "\n  NodeResourcesFit.weight: "
            + str(list(range(1, 502))),
            r"grid: 1003002 cells, more than 1000000: split the sweep",
        ),
        (
            "  input: [a.yaml]\n  config: {x: {file: a.yaml, weight: 2}}",
            r"grid.config.x: weight: unknown field \(known: file, overrides\)",
        ),
    ],
)
def test_a_bad_axis_is_named(tmp_path: Path, grid: str, message: str) -> None:
    (tmp_path / "a.yaml").write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n}\n")
    path = write_spec(tmp_path, f"kind: Sweep\nrun: simulate\ngrid:\n{grid}\n")
    with pytest.raises(SpecError, match=message):
        SweepSpec.load(path)


def test_gpu_cells_take_policies_not_configurations(tmp_path: Path) -> None:
    path = write_spec(
        tmp_path,
        f"kind: Sweep\nrun: gpu\ntrace: {EXAMPLES / 'sweeps' / 'openb-slice'}\n"
        "grid:\n  input: [default]\n  config: [a.yaml]\n",
    )
    with pytest.raises(SpecError, match=r"grid.config: a gpu cell's configuration is its policy"):
        SweepSpec.load(path)


def test_every_cell_is_checked_before_any_runs(tmp_path: Path) -> None:
    # A plugin that does not exist fails the whole sweep before a cell runs, naming the
    # cell and the plugin (the message of ksched config validate).
    write_cluster(tmp_path / "cluster")
    path = write_spec(
        tmp_path,
        "kind: Sweep\nrun: simulate\ngrid:\n  input: [cluster]\n  NoSuchPlugin.weight: [2]\n",
    )
    spec = SweepSpec.load(path)
    with pytest.raises(SpecError, match=r"sweep.yaml: cell input=cluster, NoSuchPlugin.weight=2: "):
        prepare(spec)


def test_weight_override_is_the_score_weight() -> None:
    config = apply_overrides(
        SchedulerConfig(), [parse_override({"plugin": "ImageLocality", "weight": 7}, "o")]
    )
    ours = Scheduler(config, InMemoryCluster()).frameworks["default-scheduler"]
    default = Scheduler(SchedulerConfig(), InMemoryCluster()).frameworks["default-scheduler"]
    assert ours.weights["ImageLocality"] == 7
    assert {k: v for k, v in ours.weights.items() if k != "ImageLocality"} == {
        k: v for k, v in default.weights.items() if k != "ImageLocality"
    }
    assert default.weights["TaintToleration"] == 3  # upstream's default weights stand
    assert ours.points["score"] == default.points["score"]  # in its place among them


def test_scoring_strategy_override_defaults_its_resources() -> None:
    config = apply_overrides(
        SchedulerConfig(),
        [parse_override({"plugin": "NodeResourcesFit", "scoringStrategy": "MostAllocated"}, "o")],
    )
    assert config.profiles[0].plugin_config["NodeResourcesFit"]["scoringStrategy"] == {
        "type": "MostAllocated",
        # NodeResourcesFitArgs' defaults (pkg/scheduler/apis/config/v1/defaults.go)
        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
    }


def test_cli_bad_spec_exits_2_naming_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = spec_file(tmp_path, "plots: [")
    code = main(["sweep", str(path)])
    assert code == 2
    assert f"{path}: invalid YAML" in capsys.readouterr().err
    bad = write_spec(tmp_path, "kind: Sweep\nrun: kubectl\ngrid: {}\n", "bad.yaml")
    assert main(["sweep", str(bad)]) == 2
    assert "bad.yaml: run: expected one of simulate, replay, gpu, got 'kubectl'" in (
        capsys.readouterr().err
    )
    assert main(["sweep", str(bad), "--dask", "local:zero"]) == 2
    assert "--dask local:zero: expected local:N" in capsys.readouterr().err
    assert main(["sweep", str(bad), "--dask", "local:2", "-j", "2"]) == 2
    assert "--jobs and --dask: give one" in capsys.readouterr().err


def test_cli_list_shows_the_cells(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = spec_file(tmp_path)
    assert main(["sweep", str(path), "--list"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0] == "cell\tinput\tconfig\tseed\tin table"
    assert len(lines) == 7 and all(line.endswith("\tno") for line in lines[1:])
    assert "6 cells, 0 in" in err


def test_replay_inputs_are_read_as_replay_reads_them(tmp_path: Path) -> None:
    # A trace, or a scenario file converted on the way; anything else stops the sweep.
    notes = tmp_path / "notes.yaml"
    notes.write_text("hello: world\n")
    scenario = EXAMPLES / "scenarios" / "demo.yaml"
    trace = EXAMPLES / "traces" / "small-day.jsonl.gz"
    good = write_spec(
        tmp_path,
        f"kind: Sweep\nrun: replay\ngrid:\n  input: [{scenario}, {trace}]\n",
        "good.yaml",
    )
    assert len(prepare(SweepSpec.load(good))) == 2
    bad = write_spec(tmp_path, f"kind: Sweep\nrun: replay\ngrid:\n  input: [{notes}]\n", "bad.yaml")
    with pytest.raises(SpecError, match=r"bad.yaml: cell input=.*notes.yaml: .*notes.yaml"):
        prepare(SweepSpec.load(bad))
