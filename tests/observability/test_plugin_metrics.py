"""Per-plugin metrics: sampled plugin_execution_duration_seconds and plugin_evaluation_total.

Upstream: schedule_one.go (pluginMetricsSamplePercent = 10,
state.SetRecordPluginMetrics(rand.Intn(100) < 10)), framework/runtime/framework.go
(run*Plugin observes only when the state is sampled), instrumented_plugins.go
(plugin_evaluation_total), metrics/metrics.go (names, labels, buckets).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from prometheus_client import generate_latest

from ksched import ConfigError, InMemoryCluster, Scheduler, SchedulerMetrics
from ksched.framework import (
    Code,
    CycleState,
    NodeInfo,
    NodeToStatus,
    PodInfo,
    PostFilterResult,
    Status,
)
from ksched.framework.runtime import Framework, WaitingPods
from ksched.observability._metrics import PLUGIN_METRICS_SAMPLE_PERCENT, exponential_buckets
from ksched.testing import make_node, make_pod

pytestmark = pytest.mark.anyio

PROFILE = "default-scheduler"
DURATION = "scheduler_plugin_execution_duration_seconds"
EVALUATIONS = "scheduler_plugin_evaluation_total"
POD = make_pod("p").obj()
NODES = [NodeInfo.of(make_node(f"n{i}").obj()) for i in range(3)]


def observations(metrics: SchedulerMetrics) -> dict[tuple[str, str, str], float]:
    """(plugin, extension_point, status) -> number of observed calls."""
    out: dict[tuple[str, str, str], float] = {}
    for family in metrics.registry.collect():
        for sample in family.samples:
            if sample.name == f"{DURATION}_count":
                labels = sample.labels
                out[labels["plugin"], labels["extension_point"], labels["status"]] = sample.value
    return out


def evaluations(metrics: SchedulerMetrics) -> dict[tuple[str, str], float]:
    """(plugin, extension_point) -> plugin_evaluation_total (profile checked)."""
    out: dict[tuple[str, str], float] = {}
    for family in metrics.registry.collect():
        for sample in family.samples:
            if sample.name == EVALUATIONS:
                labels = sample.labels
                assert labels["profile"] in (PROFILE, "test")
                out[labels["plugin"], labels["extension_point"]] = sample.value
    return out


# ---- sampling -----------------------------------------------------------------------


class ScriptedRandom(random.Random):
    """A random source whose randrange answers from a script."""

    def __init__(self, values: Sequence[int]) -> None:
        super().__init__(0)
        self.values = list(values)
        self.asked: list[int] = []

    def randrange(self, *args: Any, **kwargs: Any) -> int:
        self.asked.append(args[0])
        return self.values.pop(0)


def test_an_attempt_is_sampled_when_intn_100_is_below_the_percent() -> None:
    assert PLUGIN_METRICS_SAMPLE_PERCENT == 10  # schedule_one.go pluginMetricsSamplePercent
    rng = ScriptedRandom([0, 9, 10, 99])
    metrics = SchedulerMetrics(rng=rng)
    assert [metrics.sample_plugin_metrics() for _ in range(4)] == [True, True, False, False]
    assert rng.asked == [100] * 4


@pytest.mark.parametrize(("percent", "sampled"), [(0, False), (100, True)], ids=["0", "100"])
def test_zero_and_hundred_percent_do_not_draw(percent: int, sampled: bool) -> None:
    rng = ScriptedRandom([])
    metrics = SchedulerMetrics(plugin_sample_percent=percent, rng=rng)
    assert {metrics.sample_plugin_metrics() for _ in range(50)} == {sampled}
    assert rng.asked == []


def test_the_default_source_is_seeded_so_runs_repeat() -> None:
    first, second = SchedulerMetrics(), SchedulerMetrics()
    picks = [first.sample_plugin_metrics() for _ in range(1000)]
    assert picks == [second.sample_plugin_metrics() for _ in range(1000)]
    assert 60 < sum(picks) < 140  # about 10 %


@pytest.mark.parametrize("percent", [-1, 101, 10.5, True, "10"])
def test_bad_percent_is_a_config_error_naming_the_field(percent: Any) -> None:
    with pytest.raises(ConfigError, match="plugin_sample_percent: must be an integer from 0"):
        SchedulerMetrics(plugin_sample_percent=percent)


def test_cycle_state_for_attempt_and_its_clone_carry_the_choice() -> None:
    metrics = SchedulerMetrics(plugin_sample_percent=100)
    state = CycleState.for_attempt(metrics)
    assert state.metrics is metrics and state.record_plugin_metrics
    clone = state.clone()  # preemption's dry runs time their calls like the attempt
    assert clone.metrics is metrics and clone.record_plugin_metrics
    plain = CycleState.for_attempt(None)
    assert plain.metrics is None and not plain.record_plugin_metrics


def test_upstream_buckets_and_help() -> None:
    bounds = exponential_buckets(0.00001, 1.5, 20)
    # client_golang ExponentialBuckets multiplies in turn: Go's bounds, digit for digit.
    assert bounds[:3] == [1e-05, 1.5000000000000002e-05, 2.2500000000000005e-05]
    assert bounds[-1] == pytest.approx(0.0221683, rel=1e-5)  # "[~22ms, Inf)"
    metrics = SchedulerMetrics()
    metrics.plugin_execution("NodeName", "Filter", "Success", 0.00002)
    text = generate_latest(metrics.registry).decode()
    assert (
        "# HELP scheduler_plugin_execution_duration_seconds Duration for running a plugin at "
        "a specific extension point." in text
    )
    assert (
        "# HELP scheduler_plugin_evaluation_total Number of attempts to schedule pods by each "
        "plugin and the extension point (available only in PreFilter, Filter, PreScore, and "
        "Score)." in text
    )
    bucket = (
        "scheduler_plugin_execution_duration_seconds_bucket"
        '{extension_point="Filter",le="1.5000000000000002e-05",plugin="NodeName",'
        'status="Success"} 0.0'
    )
    assert bucket in text
    assert bucket.replace("1.5000000000000002e-05", "2.2500000000000005e-05")[:-3] + "1.0" in text


def test_evaluation_groups_of_equal_plugins_add_up() -> None:
    metrics = SchedulerMetrics()
    kept = ("NodeName", "NodeResourcesFit")
    for _ in range(3):
        metrics.plugin_evaluations("Filter", PROFILE, kept, 100)
    metrics.plugin_evaluations("Filter", PROFILE, tuple(["NodeName", "NodeResourcesFit"]), 7)
    metrics.plugin_evaluations("Score", PROFILE, kept, 5)
    metrics.plugin_evaluations("PreScore", PROFILE, (), 1)  # nothing evaluated
    assert evaluations(metrics) == {
        ("NodeName", "Filter"): 307,
        ("NodeResourcesFit", "Filter"): 307,
        ("NodeName", "Score"): 5,
        ("NodeResourcesFit", "Score"): 5,
    }


# ---- the framework, plugin by plugin ------------------------------------------------


def framework(plugins: Sequence[Any], points: Mapping[str, Sequence[str]]) -> Framework:
    return Framework(
        profile_name="test",
        plugins={p.name: p for p in plugins},
        points=points,
        weights={},
        percentage_of_nodes_to_score=None,
        parallelism=4,
        waiting_pods=WaitingPods(),
    )


class Plugin:
    """Filter rejecting ``reject``; PreFilter/Permit answering ``pre``/``permit``; Score 1."""

    def __init__(
        self,
        name: str,
        *,
        reject: Sequence[str] = (),
        pre: Status | None = None,
        permit: Status | None = None,
        raises: bool = False,
    ) -> None:
        self.name = name
        self.reject = set(reject)
        self.pre, self.permit_status, self.raises = pre, permit, raises
        self.filtered: list[str] = []

    def pre_filter(self, state: CycleState, pod: Any, nodes: Any) -> Status | None:
        return self.pre

    def filter(self, state: CycleState, pod: Any, node_info: NodeInfo) -> Status | None:
        self.filtered.append(node_info.name)
        if self.raises:
            raise RuntimeError("boom")
        if node_info.name in self.reject:
            return Status(Code.UNSCHEDULABLE, (f"{self.name} says no",))
        return None

    def score(self, state: CycleState, pod: Any, node_info: NodeInfo) -> int:
        return 1

    def score_extensions(self) -> Plugin:
        return self

    def normalize_score(self, state: CycleState, pod: Any, scores: dict[str, int]) -> None:
        return None

    def reserve(self, state: CycleState, pod: Any, node_name: str) -> None:
        return None

    def unreserve(self, state: CycleState, pod: Any, node_name: str) -> None:
        return None

    def permit(self, state: CycleState, pod: Any, node_name: str) -> Status | None:
        return self.permit_status


class AsyncPlugin(Plugin):
    async def filter(  # type: ignore[override]  # the async twin of Plugin.filter
        self, state: CycleState, pod: Any, node_info: NodeInfo
    ) -> Status | None:
        return super().filter(state, pod, node_info)

    async def score(  # type: ignore[override]  # the async twin of Plugin.score
        self, state: CycleState, pod: Any, node_info: NodeInfo
    ) -> int:
        return 1


@pytest.mark.parametrize("cls", [Plugin, AsyncPlugin], ids=["sync", "async"])
async def test_sampled_per_node_calls_are_observed_one_by_one(cls: type[Plugin]) -> None:
    metrics = SchedulerMetrics(plugin_sample_percent=100)
    a, b = cls("A", reject=["n1"]), cls("B")
    fw = framework([a, b], {"filter": ["A", "B"], "score": ["A"]})
    state = CycleState.for_attempt(metrics)
    outcome = await fw.find_feasible(state, POD, NODES, start=0, limit=3)
    assert [i.name for i in outcome.feasible] == ["n0", "n2"]
    scored = await fw.run_score(state, POD, outcome.feasible)
    assert scored.error is None
    assert observations(metrics) == {
        # Upstream observes each Filter call: B never runs on n1, which A rejected.
        ("A", "Filter", "Success"): 2,
        ("A", "Filter", "Unschedulable"): 1,
        ("B", "Filter", "Success"): 2,
        ("A", "Score", "Success"): 2,
        ("A", "ScoreExtensionNormalize", "Success"): 1,
    }
    # Every Filter plugin counts each node examined; Score each node scored.
    assert evaluations(metrics) == {("A", "Filter"): 3, ("B", "Filter"): 3, ("A", "Score"): 2}


async def test_an_unsampled_attempt_observes_nothing_but_still_counts() -> None:
    metrics = SchedulerMetrics(plugin_sample_percent=0)
    fw = framework([Plugin("A", reject=["n1"])], {"preFilter": ["A"], "filter": ["A"]})
    state = CycleState.for_attempt(metrics)
    await fw.run_pre_filter(state, POD, NODES)
    await fw.find_feasible(state, POD, NODES, start=0, limit=3)
    assert observations(metrics) == {}
    assert evaluations(metrics) == {("A", "PreFilter"): 1, ("A", "Filter"): 3}


async def test_status_labels_follow_each_calls_code() -> None:
    metrics = SchedulerMetrics(plugin_sample_percent=100)
    fw = framework(
        [
            Plugin("Skipper", pre=Status(Code.SKIP)),
            Plugin("Waiter", permit=Status.wait(10)),
            Plugin("Boom", raises=True),
        ],
        {
            "preFilter": ["Skipper", "Waiter"],
            "filter": ["Skipper", "Boom"],
            "reserve": ["Waiter"],
            "permit": ["Waiter"],
        },
    )
    state = CycleState.for_attempt(metrics)
    await fw.run_pre_filter(state, POD, NODES)
    outcome = await fw.find_feasible(state, POD, NODES, start=0, limit=3)
    assert outcome.error is not None and outcome.error.plugin == "Boom"  # contained
    assert (await fw.run_reserve(state, POD, "n0")).is_success
    status, waiting = await fw.run_permit(state, POD, "n0", 0.0)
    assert status.code is Code.WAIT and waiting is not None
    await fw.run_unreserve(state, POD, "n0")
    assert observations(metrics) == {
        ("Skipper", "PreFilter", "Skip"): 1,
        ("Waiter", "PreFilter", "Success"): 1,
        ("Boom", "Filter", "Error"): 1,
        ("Waiter", "Reserve", "Success"): 1,
        ("Waiter", "Permit", "Wait"): 1,
        ("Waiter", "Unreserve", "Success"): 1,
    }
    # A PreFilter that returns SKIP is not an evaluation (instrumented_plugins.go).
    counted = evaluations(metrics)
    assert counted["Waiter", "PreFilter"] == 1
    assert ("Skipper", "PreFilter") not in counted


class Extensions:
    """PreFilter with AddPod/RemovePod, PostFilter nominating n0, PreBind, Bind, PostBind."""

    def __init__(self, name: str, bind: Status | None) -> None:
        self.name, self.bind_status = name, bind

    def pre_filter(self, state: CycleState, pod: Any, nodes: Any) -> None:
        return None

    def pre_filter_extensions(self) -> Extensions:
        return self

    def add_pod(self, state: CycleState, pod: Any, to_add: PodInfo, info: NodeInfo) -> None:
        return None

    def remove_pod(self, state: CycleState, pod: Any, gone: PodInfo, info: NodeInfo) -> Status:
        return Status(Code.UNSCHEDULABLE, ("no",))

    async def post_filter(
        self, state: CycleState, pod: Any, statuses: NodeToStatus
    ) -> tuple[PostFilterResult, None]:
        return PostFilterResult("n0"), None

    def pre_bind(self, state: CycleState, pod: Any, node_name: str) -> None:
        return None

    async def bind(self, state: CycleState, pod: Any, node_name: str) -> Status | None:
        return self.bind_status

    def post_bind(self, state: CycleState, pod: Any, node_name: str) -> None:
        return None


async def test_extensions_post_filter_and_binding_points_are_observed() -> None:
    metrics = SchedulerMetrics(plugin_sample_percent=100)
    fw = framework(
        [Extensions("X", Status(Code.SKIP)), Extensions("Binder", None)],
        {
            "preFilter": ["X"],
            "postFilter": ["X"],
            "preBind": ["X"],
            "bind": ["X", "Binder"],
            "postBind": ["X"],
        },
    )
    state = CycleState.for_attempt(metrics)
    await fw.run_pre_filter(state, POD, NODES)
    other = PodInfo.of(make_pod("other").obj())
    assert fw.run_pre_filter_extension_add_pod(state, POD, other, NODES[0]).is_success
    assert not fw.run_pre_filter_extension_remove_pod(state, POD, other, NODES[0]).is_success
    result, status = await fw.run_post_filter(state, POD, NodeToStatus())
    assert status.is_success and result is not None
    assert (await fw.run_pre_bind(state, POD, "n0")).is_success
    assert (await fw.run_bind(state, POD, "n0")).is_success
    await fw.run_post_bind(state, POD, "n0")
    assert observations(metrics) == {
        ("X", "PreFilter", "Success"): 1,
        ("X", "PreFilterExtensionAddPod", "Success"): 1,
        ("X", "PreFilterExtensionRemovePod", "Unschedulable"): 1,
        ("X", "PostFilter", "Success"): 1,
        ("X", "PreBind", "Success"): 1,
        ("X", "Bind", "Skip"): 1,  # the next Bind plugin decides
        ("Binder", "Bind", "Success"): 1,
        ("X", "PostBind", "Success"): 1,
    }


async def test_calls_made_inside_post_filter_are_part_of_its_observation() -> None:
    metrics = SchedulerMetrics(plugin_sample_percent=100)
    dry_run = Plugin("Fit")

    class Preempt:
        """A PostFilter that replays Filter on every node, as preemption's dry runs do."""

        name = "Preempt"

        async def post_filter(
            self, state: CycleState, pod: Any, statuses: NodeToStatus
        ) -> tuple[None, Status]:
            for info in NODES:
                await fw.run_filter(state, pod, info)
            return None, Status(Code.UNSCHEDULABLE, ("no victims",))

    fw = framework([dry_run, Preempt()], {"filter": ["Fit"], "postFilter": ["Preempt"]})
    state = CycleState.for_attempt(metrics)
    _, status = await fw.run_post_filter(state, POD, NodeToStatus())
    assert status.code is Code.UNSCHEDULABLE
    assert dry_run.filtered == ["n0", "n1", "n2"]
    assert observations(metrics) == {("Preempt", "PostFilter", "Unschedulable"): 1}
    assert state.record_plugin_metrics  # the attempt's later points are timed again


# ---- a scheduler, default profile ---------------------------------------------------

# One pod placed on one of two nodes with room: each plugin once per extension point it
# ran at (the default profile has no Permit or PostBind plugin; a PreFilter that says
# SKIP also skips its Filter, a PreScore that says SKIP its Score, a PreBindPreFlight that
# says SKIP its PreBind: runtime/framework.go RunPreBindPreFlights, on by default since
# 1.35 with NominatedNodeNameForExpectation).
SCHEDULED_ON_TWO_NODES = {
    **{
        (plugin, "PreFilter", "Skip"): 1
        for plugin in (
            "NodeAffinity",
            "NodePorts",
            "VolumeRestrictions",
            "NodeVolumeLimits",
            "VolumeBinding",
            "VolumeZone",
            "PodTopologySpread",
            "InterPodAffinity",
            "DynamicResources",
        )
    },
    ("NodeResourcesFit", "PreFilter", "Success"): 1,
    **{
        (plugin, "Filter", "Success"): 1
        for plugin in ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeResourcesFit")
    },
    **{
        (plugin, "PreScore", "Skip"): 1
        for plugin in (
            "NodeAffinity",
            "VolumeBinding",
            "PodTopologySpread",
            "InterPodAffinity",
            "DynamicResources",
        )
    },
    **{
        (plugin, point, "Success"): 1
        for plugin in (
            "TaintToleration",
            "NodeResourcesFit",
            "NodeResourcesBalancedAllocation",
            "ImageLocality",
        )
        for point in ("PreScore", "Score")
    },
    ("TaintToleration", "ScoreExtensionNormalize", "Success"): 1,
    ("VolumeBinding", "Reserve", "Success"): 1,
    ("DynamicResources", "Reserve", "Success"): 1,
    ("VolumeBinding", "PreBindPreFlight", "Skip"): 1,
    ("DynamicResources", "PreBindPreFlight", "Skip"): 1,
    ("DefaultBinder", "Bind", "Success"): 1,
}


async def schedule_one_pod(metrics: SchedulerMetrics, *, batching: bool = True) -> None:
    cluster = InMemoryCluster()
    async with Scheduler.open(cluster=cluster, metrics=metrics) as sched:
        sched.frameworks[PROFILE].fast.batching = batching
        for name in ("n1", "n2"):
            await cluster.add_node(make_node(name).capacity(cpu="2", memory="4Gi", pods=10).obj())
        await cluster.add_pod(make_pod("web").req(cpu="1").obj())
        await cluster.wait_bound("default/web", timeout=5)
    # Leaving the scheduler drained the binding cycle: every extension point has run.


async def test_sampled_attempt_observes_each_plugin_at_each_point_it_ran() -> None:
    metrics = SchedulerMetrics(plugin_sample_percent=100)
    await schedule_one_pod(metrics)
    # The Filter and Score plugins ran their batch forms: one call over both nodes.
    assert observations(metrics) == SCHEDULED_ON_TWO_NODES
    assert evaluations(metrics) == {
        ("NodeResourcesFit", "PreFilter"): 1,
        **{
            (plugin, "Filter"): 2
            for plugin in ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeResourcesFit")
        },
        **{
            (plugin, point): count
            for plugin in (
                "TaintToleration",
                "NodeResourcesFit",
                "NodeResourcesBalancedAllocation",
                "ImageLocality",
            )
            for point, count in (("PreScore", 1), ("Score", 2))
        },
    }


async def test_without_batch_forms_filter_and_score_observe_each_node() -> None:
    metrics = SchedulerMetrics(plugin_sample_percent=100)
    await schedule_one_pod(metrics, batching=False)
    expected = {key: (2 if key[1] in ("Filter", "Score") else 1) for key in SCHEDULED_ON_TWO_NODES}
    assert observations(metrics) == expected


async def test_unsampled_attempt_observes_no_plugin() -> None:
    metrics = SchedulerMetrics(plugin_sample_percent=0)
    await schedule_one_pod(metrics)
    assert observations(metrics) == {}
    assert evaluations(metrics)["NodeResourcesFit", "Filter"] == 2
    point = "scheduler_framework_extension_point_duration_seconds_count"
    labels = {"extension_point": "Bind", "status": "Success", "profile": PROFILE}
    assert metrics.registry.get_sample_value(point, labels) == 1
