"""Victims decided by the Fit comparisons give what the Filter-run dry runs give.

When the Filters that run for the preemptor are NodeResourcesFit and node-only ones
(NodeUnschedulable, NodeName, TaintToleration, NodeAffinity) and no PreFilter extension
runs, DefaultPreemption decides each node's victims by arithmetic over the node's
resources. Random clusters (node sizes, taints, labels, an extended resource, running
pods of random priorities, requests, start times and host ports, PodDisruptionBudgets,
pods nominated to nodes, random candidate-count args) are preempted on three times through
the real Scheduler framework: with the arithmetic, without it (every dry run a Filter
run, with the Fit pass-over and reprieve comparisons), and with no shortcut at all. The
PostFilter result and status, the candidates (order, victims, PDB violations), the dry-run
statuses and errors and the evicted pods must be the same. Preemptors in turn on full
clusters check the outcomes kept between attempts, read node by node and by table row.

# pkg/scheduler/framework/preemption/preemption.go (DryRunPreemption, SelectCandidate)
# pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go
# (SelectVictimsOnNode)
"""

from __future__ import annotations

import random
from typing import Any

import anyio
import attrs
import pytest
from _preemption_clusters import full_nodes
from trio.testing import MockClock

from ksched import FitError, InMemoryCluster, Scheduler, parse_config
from ksched.api import LabelSelector, ObjectMeta, Pod, PodDisruptionBudget
from ksched.framework import CycleState, NodeToStatus, PodInfo
from ksched.framework._fast._nominated_verdicts import NominatedVerdicts, Sweep
from ksched.plugins import default_preemption
from ksched.plugins.default_preemption import (
    Candidate,
    DefaultPreemption,
    _dry_run,  # noqa: F401  (patched below)
)
from ksched.plugins.default_preemption import _dry_run as preemption_dry_run
from ksched.plugins.default_preemption import _plugin as preemption_plugin
from ksched.scheduler._observer import UNOBSERVED
from ksched.testing import make_node, make_pod

pytestmark = pytest.mark.anyio

GPU = "example.com/gpu"
SEEDS = range(240)


@pytest.fixture(
    params=[
        pytest.param("asyncio", id="asyncio"),
        pytest.param(("trio", {"clock": MockClock(autojump_threshold=0)}), id="trio"),
    ]
)
def anyio_backend(request: pytest.FixtureRequest) -> Any:
    return request.param


# ---- random clusters -------------------------------------------------------------------


def _objects(rng: random.Random) -> tuple[list[Any], Pod, dict[str, Any]]:
    """Nodes, running and nominated pods, PDBs; the preemptor; DefaultPreemption args."""
    objects: list[Any] = []
    num_nodes = rng.randint(2, 16)
    names = [f"n{i}" for i in range(num_nodes)]
    for name in names:
        capacity: dict[str, str | int] = {
            "cpu": rng.choice(["1", "2", "4", "8"]),
            "memory": rng.choice(["2Gi", "4Gi", "8Gi"]),
            "pods": rng.choice([2, 3, 5, 110]),
        }
        if rng.random() < 0.3:
            capacity[GPU] = rng.randint(0, 4)
        b = make_node(name).capacity(**capacity).label("zone", rng.choice("ab"))
        if rng.random() < 0.2:
            b = b.taint("dedicated", "x", rng.choice(["NoSchedule", "NoExecute"]))
        if rng.random() < 0.1:
            b = b.unschedulable()
        objects.append(b.obj())
    apps = ["a", "b", "c"]
    for name in names:
        for j in range(rng.randint(1, 9)):
            p = make_pod(f"{name}-p{j}").node(name).priority(rng.choice([0, 5, 10, 50, 100]))
            p = p.req(
                cpu=rng.choice(["100m", "250m", "500m", "1", "2"]),
                memory=rng.choice(["128Mi", "512Mi", "1Gi"]),
            )
            if rng.random() < 0.2:
                p = p.req(cpu=rng.choice(["250m", "1"]), memory="128Mi", **{GPU: rng.randint(1, 2)})
            if rng.random() < 0.7:
                p = p.start_time(float(rng.randint(1, 4)))
            if rng.random() < 0.6:
                p = p.label("app", rng.choice(apps))
            if rng.random() < 0.1:
                p = p.host_port(8080)
            objects.append(p.obj())
    for k in range(rng.randint(0, 3)):
        selector = LabelSelector(match_labels={"app": rng.choice(apps)})
        meta = ObjectMeta(name=f"pdb{k}", namespace="default")
        kind = rng.randrange(3)
        if kind == 0:
            pdb = PodDisruptionBudget(
                metadata=meta, selector=selector, disruptions_allowed=rng.randint(0, 2)
            )
        elif kind == 1:
            pdb = PodDisruptionBudget(metadata=meta, selector=selector, min_available=1)
        else:
            pdb = PodDisruptionBudget(metadata=meta, selector=selector, max_unavailable="50%")
        objects.append(pdb)
    for k in range(rng.randint(0, 3)):
        q = make_pod(f"nom{k}").priority(rng.choice([5, 50, 100, 1000]))
        q = q.req(cpu=rng.choice(["250m", "1", "2"]), memory="256Mi")
        objects.append(q.nominated(rng.choice(names)).obj())
    p = make_pod("preemptor").priority(rng.choice([10, 50, 100, 1000]))
    p = p.req(cpu=rng.choice(["500m", "1", "2", "3"]), memory=rng.choice(["256Mi", "2Gi"]))
    if rng.random() < 0.2:
        p = p.req(cpu="1", memory="256Mi", **{GPU: rng.randint(1, 3)})
    if rng.random() < 0.3:
        p = p.toleration("dedicated", "x", "NoSchedule")
    if rng.random() < 0.2:
        p = p.node_selector({"zone": "a"})
    if rng.random() < 0.1:
        p = p.host_port(8080)  # NodePorts runs: no arithmetic
    if rng.random() < 0.05:
        p = p.pod_affinity("zone", {"app": "a"}, anti=True)  # extensions run
    args: dict[str, Any] = {
        "minCandidateNodesPercentage": rng.choice([0, 10, 50]),
        "minCandidateNodesAbsolute": rng.choice([1, 3, 100, 100]),
    }
    return objects, p.obj(), args


def _config(args: dict[str, Any], node_only_last: bool) -> Any:
    """The default profile; with ``node_only_last`` TaintToleration and NodeAffinity
    filter after NodeResourcesFit, so a node they reject can be a potential node."""
    profile: dict[str, Any] = {
        "schedulerName": "default-scheduler",
        "pluginConfig": [{"name": "DefaultPreemption", "args": args}],
    }
    if node_only_last:
        moved = [{"name": "TaintToleration"}, {"name": "NodeAffinity"}]
        profile["plugins"] = {"filter": {"disabled": moved, "enabled": moved}}
    return parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [profile],
        }
    )


# ---- one preemption attempt ------------------------------------------------------------


def _candidates(candidates: list[Candidate]) -> list[tuple[str, list[str], int]]:
    return [
        (c.name, [p.key for p in c.victims.pods], c.victims.num_pdb_violations) for c in candidates
    ]


def _statuses(statuses: NodeToStatus | None) -> list[tuple[str, Any, tuple[str, ...], str]]:
    if statuses is None:
        return []
    return [(n, s.code, s.reasons, s.plugin) for n, s in statuses.items()]


async def _attempt(seed: int, mode: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The preemptor's first attempt, up to and including its PostFilter, in ``mode``:
    "fast" (arithmetic), "filter" (dry runs run the Filters) or "none" (no shortcut)."""
    with monkeypatch.context() as patch:
        if mode != "fast":
            patch.setattr(DefaultPreemption, "arithmetic_dry_runs", False)
        if mode == "none":
            patch.setattr(
                DefaultPreemption,
                "_context",
                lambda self, state: default_preemption._dry_run.DryRunContext(None, True),
            )
        dry_runs: list[tuple[Any, ...]] = []
        original = DefaultPreemption.dry_run_preemption

        async def recording(self: DefaultPreemption, *args: Any) -> Any:
            candidates, statuses, error = await original(self, *args)
            dry_runs.append((_candidates(candidates), _statuses(statuses), error))
            return candidates, statuses, error

        patch.setattr(DefaultPreemption, "dry_run_preemption", recording)
        fast_runs = [0, 0]  # arithmetic dry runs decided / handed back
        fast = DefaultPreemption._dry_run_by_fit

        def counting(self: DefaultPreemption, *args: Any) -> Any:
            outcome = fast(self, *args)
            fast_runs[outcome is None] += 1
            return outcome

        patch.setattr(DefaultPreemption, "_dry_run_by_fit", counting)
        rng = random.Random(seed)
        objects, preemptor, args = _objects(rng)
        cluster = InMemoryCluster()
        for obj in objects:
            cluster.apply(obj)
        cluster.apply(preemptor)
        scheduler = Scheduler(_config(args, seed % 3 == 0), cluster, seed=seed)
        fw = scheduler.frameworks["default-scheduler"]
        scheduler.cache.update_snapshot(scheduler.snapshot)
        state = CycleState()
        found = await scheduler.algorithm.schedule_pod(fw, state, preemptor, UNOBSERVED)
        if not isinstance(found, FitError):
            return {"scheduled": found, "fast_runs": fast_runs}
        result, status = await fw.run_post_filter(state, preemptor, found.statuses)
        return {
            "nominated": None if result is None else result.nominated_node_name,
            "status": (status.code, status.reasons, status.plugin),
            "dry_runs": dry_runs,
            "evicted": list(cluster.evicted),
            "fast_runs": fast_runs,
        }


async def test_arithmetic_dry_runs_match_filter_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    decided = handed_back = preempted = no_candidate = 0
    for seed in SEEDS:
        fast = await _attempt(seed, "fast", monkeypatch)
        filtered = await _attempt(seed, "filter", monkeypatch)
        bare = await _attempt(seed, "none", monkeypatch)
        decided += fast["fast_runs"][0]
        handed_back += fast["fast_runs"][1]
        assert filtered["fast_runs"] == bare["fast_runs"] == [0, 0]
        for got in (fast, filtered, bare):
            got.pop("fast_runs")
        if "scheduled" in fast:
            assert fast == filtered == bare, seed
            continue
        assert fast == filtered, seed
        # Without the pass-over, statuses also name the nodes passed over; the rest agrees.
        assert fast["nominated"] == bare["nominated"], seed
        assert fast["status"] == bare["status"], seed
        assert fast["evicted"] == bare["evicted"], seed
        assert [d[0] for d in fast["dry_runs"]] == [d[0] for d in bare["dry_runs"]], seed
        assert [d[2] for d in fast["dry_runs"]] == [d[2] for d in bare["dry_runs"]], seed
        if fast["dry_runs"] and not fast["dry_runs"][0][0]:
            assert fast["dry_runs"] == bare["dry_runs"], seed
            no_candidate += 1
        preempted += bool(fast["evicted"])
    # The sample exercises the arithmetic, its hand-backs, preemptions and failures.
    assert decided > 80
    assert handed_back > 5
    assert preempted > 40
    assert no_candidate > 30


async def test_benchmark_shape_takes_the_arithmetic_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """PreemptionBasic's shape (4-cpu nodes holding four 900m pods, a 3-cpu preemptor):
    every dry run is arithmetic, and each candidate keeps one low pod (upstream: 3
    victims per preemptor)."""
    cluster = InMemoryCluster()
    for i in range(20):
        cluster.apply(make_node(f"node-{i}").capacity(cpu="4", memory="32Gi", pods=110).obj())
        for j in range(4):
            low = make_pod(f"low-{i}-{j}").req(cpu="900m", memory="500Mi").node(f"node-{i}")
            cluster.apply(low.obj())
    high = make_pod("high").priority(10).req(cpu="3000m", memory="500Mi").obj()
    cluster.apply(high)
    calls: list[bool] = []
    fast = DefaultPreemption._dry_run_by_fit
    one_pass = preemption_dry_run.fit_outcome  # the function _plugin calls, patched below

    def counting(self: DefaultPreemption, *args: Any) -> Any:
        outcome = fast(self, *args)
        calls.append(outcome is not None)
        return outcome

    def counting_one_pass(*args: Any) -> Any:
        outcome = one_pass(*args)
        calls.append(outcome[0] is not None)
        return outcome

    monkeypatch.setattr(DefaultPreemption, "_dry_run_by_fit", counting)
    monkeypatch.setattr(preemption_plugin, "fit_outcome", counting_one_pass)
    scheduler = Scheduler(cluster=cluster, seed=1)
    fw = scheduler.frameworks["default-scheduler"]
    scheduler.cache.update_snapshot(scheduler.snapshot)
    state = CycleState()
    found = await scheduler.algorithm.schedule_pod(fw, state, high, UNOBSERVED)
    assert isinstance(found, FitError)
    result, status = await fw.run_post_filter(state, high, found.statuses)
    assert status.is_success
    assert result is not None and result.nominated_node_name
    assert len(calls) == 20 and all(calls)
    node = result.nominated_node_name
    assert len(cluster.evicted) == 3
    assert all(key.startswith(f"default/low-{node.split('-')[1]}-") for key in cluster.evicted)


# ---- many preemptors in turn: victims kept per node between attempts -----------------------


def _sometimes(rng: random.Random, pod: Any) -> Any:
    """Most running pods have a start time, of a few seconds."""
    return pod.start_time(float(rng.randint(1, 6))) if rng.random() < 0.8 else pod


def _full_cluster(rng: random.Random) -> tuple[list[Any], Pod, dict[str, Any]]:
    """PreemptionBasic's kind, randomised: every node merely short of room (no taints,
    cordons or selectors), running pods of random priorities, requests and start times
    (some not started), a few nominated pods, small candidate counts."""
    objects = full_nodes(rng, most_nodes=24, leave_room=[0, 300, 600, 1200], started=_sometimes)
    args: dict[str, Any] = {
        "minCandidateNodesPercentage": rng.choice([0, 10, 50]),
        "minCandidateNodesAbsolute": rng.choice([1, 2, 3, 100]),
    }
    return objects, make_pod("unused").obj(), args


def _started_later(obj: Any, origin: float) -> Any:
    """A running pod's start time moved on by ``origin``; other objects as they are."""
    if not isinstance(obj, Pod) or obj.status.start_time is None:
        return obj
    return attrs.evolve(
        obj, status=attrs.evolve(obj.status, start_time=obj.status.start_time + origin)
    )


async def _sequence(
    seed: int,
    fast: bool,
    monkeypatch: pytest.MonkeyPatch,
    *,
    objects_of: Any = _objects,
    row_visits: bool = True,
    clock_steps: bool = False,
) -> dict[str, Any]:
    """Several preemptors, two rounds (as the scheduler retries them): each attempt
    nominates, evicts, binds as the Scheduler would. The trace of every attempt, the
    Filter statuses of the failed ones included. Not ``fast``: no arithmetic dry runs,
    no kept verdicts on nominated nodes, the nominator asked about every node. With
    ``clock_steps`` (a virtual clock) time moves on by a few seconds between some
    attempts, past the running pods' start times."""
    with monkeypatch.context() as patch:
        if not fast:
            patch.setattr(DefaultPreemption, "arithmetic_dry_runs", False)
            patch.setattr(DefaultPreemption, "fast_nominated_lookup", False)
        patch.setattr(DefaultPreemption, "row_visits", row_visits)
        counts = {"decided": 0, "reprieves": 0, "verdicts_kept": 0, "row_visits": 0}
        by_rows = DefaultPreemption._visit_by_rows

        async def counting_rows(self: DefaultPreemption, *args: Any) -> Any:
            counts["row_visits"] += 1
            return await by_rows(self, *args)

        patch.setattr(DefaultPreemption, "_visit_by_rows", counting_rows)
        trace: list[Any] = []
        dry_run = DefaultPreemption.dry_run_preemption

        async def recording(self: DefaultPreemption, *args: Any) -> Any:
            candidates, statuses, error = await dry_run(self, *args)
            trace.append((_candidates(candidates), _statuses(statuses), error))
            return candidates, statuses, error

        patch.setattr(DefaultPreemption, "dry_run_preemption", recording)
        kept_verdict = NominatedVerdicts.get
        swept_verdict = Sweep.get

        def counting_verdicts(self: NominatedVerdicts, *args: Any) -> Any:
            status = kept_verdict(self, *args)
            counts["verdicts_kept"] += status is not None
            return status

        def counting_swept(self: Sweep, name: str) -> Any:
            status = swept_verdict(self, name)
            counts["verdicts_kept"] += status is not None
            return status

        patch.setattr(NominatedVerdicts, "get", counting_verdicts)
        patch.setattr(Sweep, "get", counting_swept)
        by_fit = DefaultPreemption._dry_run_by_fit
        reprieve = default_preemption._dry_run.FitBound.reprieve

        def counting(self: DefaultPreemption, *args: Any) -> Any:
            outcome = by_fit(self, *args)
            counts["decided"] += outcome is not None
            return outcome

        def counting_reprieve(self: Any, *args: Any) -> Any:
            counts["reprieves"] += 1
            return reprieve(self, *args)

        patch.setattr(DefaultPreemption, "_dry_run_by_fit", counting)
        patch.setattr(default_preemption._dry_run.FitBound, "reprieve", counting_reprieve)
        rng = random.Random(seed)
        objects, _, args = objects_of(rng)
        if clock_steps:  # start times from the run's start: every run sees the same story
            origin = anyio.current_time()
            objects = [_started_later(obj, origin) for obj in objects]
        cluster = InMemoryCluster()
        for obj in objects:
            cluster.apply(obj)
        keys = []
        for i in range(rng.randint(6, 12)):
            p = make_pod(f"pre{i}").priority(rng.choice([50, 100, 100]))
            p = p.req(cpu=rng.choice(["1", "1", "2"]), memory="256Mi")
            if rng.random() < 0.2:
                p = p.toleration("dedicated", "x", "NoSchedule")
            cluster.apply(p.obj())
            keys.append(f"default/pre{i}")
        scheduler = Scheduler(_config(args, seed % 3 == 0), cluster, seed=seed)
        fw = scheduler.frameworks["default-scheduler"]
        fw.fast.verdict_cache = fast
        steps = random.Random(seed + 1)
        for _ in range(2):
            for key in keys:
                if clock_steps:
                    await anyio.sleep(steps.choice([0.0, 0.0, 2.0, 5.0]))
                pod = cluster.get_pod(key)
                if pod is None or pod.spec.node_name:
                    continue
                scheduler.cache.update_snapshot(scheduler.snapshot)
                state = CycleState()
                found = await scheduler.algorithm.schedule_pod(fw, state, pod, UNOBSERVED)
                if isinstance(found, str):
                    scheduler.queue.delete_nominated_pod_if_exists(pod)
                    await cluster.bind(pod, found)
                    trace.append((key, "bound", found))
                    continue
                assert isinstance(found, FitError)
                trace.append((key, _statuses(found.statuses)))
                result, status = await fw.run_post_filter(state, pod, found.statuses)
                node = None if result is None else result.nominated_node_name
                trace.append((key, node, status.code, status.reasons, list(cluster.evicted)))
                if node:
                    current = cluster.get_pod(key)
                    assert current is not None
                    scheduler.queue.add_nominated_pod(PodInfo.of(current), node)
                    await cluster.update_pod_status(
                        current, nominated_node_name=node, condition=None
                    )
        return {"trace": trace, "counts": counts}


async def test_kept_victims_match_filter_runs_across_attempts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    decided = reprieves = verdicts_kept = 0
    for seed in range(60):
        fast = await _sequence(seed, True, monkeypatch)
        filtered = await _sequence(seed, False, monkeypatch)
        assert fast["trace"] == filtered["trace"], seed
        assert filtered["counts"] == {
            "decided": 0,
            "reprieves": 0,
            "verdicts_kept": 0,
            "row_visits": 0,
        }
        decided += fast["counts"]["decided"]
        reprieves += fast["counts"]["reprieves"]
        verdicts_kept += fast["counts"]["verdicts_kept"]
    # Some arithmetic dry runs reuse a node's victims from an earlier attempt, and some
    # Filter verdicts on nominated nodes are read back from an earlier cycle.
    assert decided - reprieves > 30
    assert reprieves > 300
    assert verdicts_kept > 30


async def test_row_visits_match_node_by_node_visits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Outcomes read by table row (array passes, the pick by arrays) give the trace of
    node-by-node visits and of Filter-run dry runs, preemptor after preemptor."""
    row_visits = 0
    for seed in range(80):
        by_rows = await _sequence(seed, True, monkeypatch, objects_of=_full_cluster)
        by_node = await _sequence(
            seed, True, monkeypatch, objects_of=_full_cluster, row_visits=False
        )
        filtered = await _sequence(seed, False, monkeypatch, objects_of=_full_cluster)
        assert by_rows["trace"] == by_node["trace"] == filtered["trace"], seed
        assert by_node["counts"]["row_visits"] == filtered["counts"]["row_visits"] == 0
        row_visits += by_rows["counts"]["row_visits"]
    assert row_visits > 300


async def test_row_visits_follow_the_clock(
    anyio_backend: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Time moving on between preemptors changes the victims' order on nodes where pods
    of one priority have started and not started (an unstarted pod counts as starting
    now): such outcomes are never read back from the rows, as they are from none."""
    if anyio_backend == "asyncio":
        pytest.skip("needs the virtual clock")
    for seed in range(60):
        runs = [
            await _sequence(
                seed, fast, monkeypatch, objects_of=_full_cluster, row_visits=rows, clock_steps=True
            )
            for fast, rows in ((True, True), (True, False), (False, False))
        ]
        assert runs[0]["trace"] == runs[1]["trace"] == runs[2]["trace"], seed


def _sparse_cluster(rng: random.Random) -> tuple[list[Any], Pod, dict[str, Any]]:
    """1500 full nodes, only a few of them running pods a preemptor may evict: the row
    visit's first window from the offset holds too few candidates and widens."""
    objects: list[Any] = []
    evictable = set(rng.sample(range(1500), rng.randint(1, 4)))
    for i in range(1500):
        objects.append(make_node(f"n{i}").capacity(cpu="2", memory="8Gi", pods=110).obj())
        priority = 0 if i in evictable else 1000
        for j in range(2):
            p = make_pod(f"n{i}-p{j}").node(f"n{i}").priority(priority)
            objects.append(_sometimes(rng, p.req(cpu="1", memory="256Mi")).obj())
    args = {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": rng.choice([1, 2])}
    return objects, make_pod("unused").obj(), args


async def test_row_visits_widen_their_window(
    anyio_backend: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Candidates far apart: the windows widen, and the trace is the node-by-node one."""
    if anyio_backend != "asyncio":
        pytest.skip("pure computation: one backend is enough")
    for seed in range(3):
        by_rows = await _sequence(seed, True, monkeypatch, objects_of=_sparse_cluster)
        by_node = await _sequence(
            seed, True, monkeypatch, objects_of=_sparse_cluster, row_visits=False
        )
        assert by_rows["trace"] == by_node["trace"], seed
        assert by_rows["counts"]["row_visits"] > 0
