"""The example app in examples/manifests runs as the README says: every workload's pods
made by its controller and bound."""

from __future__ import annotations

from pathlib import Path

from ksched.cli._inputs import load_inputs
from ksched.simulate import run_scenario

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "manifests"


def test_workloads_example_runs_every_controller() -> None:
    scenario = load_inputs([EXAMPLES / "cluster", EXAMPLES / "workloads.yaml"])
    report = run_scenario(scenario, explain=False, events=False)
    owners: dict[str, int] = {}
    for entry in report["pods"].values():
        assert entry["phase"] == "Bound", entry
        owners[entry["owner"].split(" ")[0]] = owners.get(entry["owner"].split(" ")[0], 0) + 1
    assert owners == {"ReplicaSet": 4, "StatefulSet": 2, "DaemonSet": 3, "Job": 2}
    assert sorted(k for k in report["pods"] if k.startswith("shop/db-")) == [
        "shop/db-0",
        "shop/db-1",
    ]
    # the DaemonSet tolerates everything, so the tainted worker-3 runs an exporter too
    exporters = {v["node"] for k, v in report["pods"].items() if "node-exporter" in k}
    assert exporters == {"worker-1", "worker-2", "worker-3"}


def _nodes_of_web_pods(config: Path | None) -> dict[str, int]:
    scenario = load_inputs([EXAMPLES / "cluster", EXAMPLES / "web.yaml"], config=config)
    report = run_scenario(scenario, explain=False, events=False)
    counts: dict[str, int] = {}
    for entry in report["pods"].values():
        assert entry["phase"] == "Bound", entry
        counts[entry["node"]] = counts.get(entry["node"], 0) + 1
    return counts


def test_binpack_config_packs_what_the_default_spreads() -> None:
    assert _nodes_of_web_pods(None) == {"worker-1": 3, "worker-2": 3}
    packed = _nodes_of_web_pods(EXAMPLES / "binpack-config.yaml")
    assert list(packed.values()) == [6]  # one worker (tainted worker-3 is never a choice)
    assert set(packed) <= {"worker-1", "worker-2"}
