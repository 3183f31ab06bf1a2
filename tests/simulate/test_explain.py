"""``explain`` on request: none by default, attempts recorded only for the pods asked for,
streamed to a sink as each first attempt ends, and ``check`` asking only for the pods its
``expect.explain`` names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from ksched import InMemoryCluster, Scheduler
from ksched.simulate import _check as check_module
from ksched.simulate import check_scenario, parse_scenario, run_scenario
from ksched.testing import make_node, make_pod

SCENARIO = """
apiVersion: ksched/v1alpha1
kind: Scenario
metadata: {name: three-pods}
objects:
  - {apiVersion: v1, kind: Node, metadata: {name: n1},
     status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}}
  - {apiVersion: v1, kind: Node, metadata: {name: n2},
     status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}}
  - {apiVersion: v1, kind: Pod, metadata: {name: web},
     spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
  - {apiVersion: v1, kind: Pod, metadata: {name: api},
     spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
  - {apiVersion: v1, kind: Pod, metadata: {name: huge},
     spec: {containers: [{name: c, resources: {requests: {cpu: "16"}}}]}}
"""


def scenario() -> Any:
    return parse_scenario(yaml.safe_load(SCENARIO))


def test_no_explain_unless_asked() -> None:
    assert run_scenario(scenario())["explain"] == {}


def test_explain_all_covers_every_pod_that_had_an_attempt() -> None:
    explain = run_scenario(scenario(), explain=True)["explain"]
    assert list(explain) == ["default/web", "default/api", "default/huge"]
    assert explain["default/huge"]["filter"]["n2"]["reasons"] == ["Insufficient cpu"]
    assert explain["default/huge"]["selected"] is None


@pytest.mark.anyio
async def test_the_engine_records_attempts_only_of_the_named_pods() -> None:
    cluster = InMemoryCluster()
    await cluster.add_node(make_node("n1").capacity(cpu="4", memory="8Gi", pods=10).obj())
    async with Scheduler.open(cluster=cluster, explain=["default/b"]) as sched:
        for name in ("a", "b", "c"):
            await cluster.add_pod(make_pod(name).req(cpu="1").obj())
        for name in ("a", "b", "c"):
            await cluster.wait_bound(f"default/{name}", timeout=10)
        recorded = {key: record.first_attempt is not None for key, record in sched.records.items()}
    assert recorded == {"default/a": False, "default/b": True, "default/c": False}


def test_a_sink_takes_each_explanation_as_the_attempt_ends() -> None:
    in_memory = run_scenario(scenario(), explain=True)["explain"]
    streamed: list[tuple[str, dict[str, Any]]] = []
    bound_when_streamed: list[int] = []
    bound = 0

    def on_event(event: Any) -> None:
        nonlocal bound
        bound += event.kind == "Bound"

    def sink(pod: str, entry: dict[str, Any]) -> None:
        streamed.append((pod, entry))
        bound_when_streamed.append(bound)

    report = run_scenario(scenario(), explain=True, explain_sink=sink, on_event=on_event)
    assert report["explain"] == {}
    assert dict(streamed) == in_memory
    # web's explanation went out as it was bound, not at the end of the run.
    assert streamed[0][0] == "default/web"
    assert bound_when_streamed[0] == 0


def test_a_sink_gets_only_the_named_pods() -> None:
    seen: list[str] = []
    run_scenario(scenario(), explain=["default/huge"], explain_sink=lambda p, e: seen.append(p))
    assert seen == ["default/huge"]


def test_explain_rejects_a_bare_string() -> None:
    with pytest.raises(TypeError, match="not a str"):
        run_scenario(scenario(), explain="default/huge")


def test_check_asks_only_for_the_pods_its_expect_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[Any] = []
    real = run_scenario  # what _check calls, patched below

    def spy(*args: Any, **kwargs: Any) -> dict[str, Any]:
        asked.append(kwargs.get("explain"))
        return real(*args, **kwargs)

    monkeypatch.setattr(check_module, "run_scenario", spy)
    text = SCENARIO + "expect:\n  explain:\n    default/huge:\n      selected: null\n"
    path = tmp_path / "s.yaml"
    path.write_text(text)
    assert check_scenario(path).passed
    path.write_text(SCENARIO + "expect:\n  placements: {default/web: n2}\n")
    assert check_scenario(path).passed
    assert asked == [["default/huge"], []]


def test_check_names_a_pod_without_an_attempt(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO + "expect:\n  explain:\n    default/nope: {selected: n1}\n")
    result = check_scenario(path)
    assert not result.passed
    assert result.detail == "explain.default/nope: the pod has no recorded attempt"


def test_check_rejects_an_explain_that_is_not_a_mapping(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO + "expect:\n  explain: [default/web]\n")
    result = check_scenario(path)
    assert not result.passed
    assert "expect.explain: expected a mapping" in result.detail


def test_a_failing_sink_stops_the_run() -> None:
    """A reader that went away (``| head``) ends the run at once; inside the engine's cycle
    the error would otherwise be taken for a fault of the cycle and the pod retried."""
    calls: list[str] = []

    def sink(pod: str, entry: dict[str, Any]) -> None:
        calls.append(pod)
        raise BrokenPipeError(32, "Broken pipe")

    with pytest.raises(BrokenPipeError):
        run_scenario(scenario(), explain=True, explain_sink=sink)
    assert calls == ["default/web"]
