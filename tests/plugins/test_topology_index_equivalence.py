"""PodTopologySpread and InterPodAffinity read the snapshot's pod index exactly as they
would recount every pod: random clusters under random churn, random incoming pods, both
paths compared state by state and node by node."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import attrs
import numpy as np
import pytest

from ksched.api import (
    Affinity,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodAntiAffinity,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from ksched.cache import Cache, Snapshot
from ksched.framework import CycleState, NodeInfo, Status
from ksched.framework.batch import NodeRows, PodIndex
from ksched.plugins.inter_pod_affinity import InterPodAffinity
from ksched.plugins.inter_pod_affinity._filtering import PRE_FILTER_STATE_KEY as IPA_PF
from ksched.plugins.inter_pod_affinity._scoring import PRE_SCORE_STATE_KEY as IPA_PS
from ksched.plugins.pod_topology_spread import PodTopologySpread
from ksched.plugins.pod_topology_spread._plugin import PRE_FILTER_STATE_KEY as PTS_PF
from ksched.plugins.pod_topology_spread._plugin import PRE_SCORE_STATE_KEY as PTS_PS
from ksched.testing import FakeHandle, make_node, make_pod

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
RACK = "rack"
KEYS = (HOSTNAME, ZONE, RACK)
NAMESPACES = {"ns0": {"team": "a"}, "ns1": {"team": "b"}, "ns2": {"team": "a", "env": "x"}}
LABEL_VALUES = {"app": ("a", "b", "c"), "tier": ("web", "db"), "color": ("blue",)}


def _handle(snapshot: Snapshot) -> FakeHandle:
    """The real snapshot (its pod index on), a cluster with no services and no owners."""
    return FakeHandle(snapshot=snapshot, namespaces=NAMESPACES)


# ---- random objects -------------------------------------------------------------------------


def _node(rng: random.Random, name: str) -> Node:
    b = make_node(name)
    if rng.random() < 0.9:
        b = b.label(HOSTNAME, name)
    if rng.random() < 0.85:
        b = b.label(ZONE, f"z{rng.randrange(4)}")
    if rng.random() < 0.5:
        b = b.label(RACK, rng.choice(("r1", "r2", "")))
    if rng.random() < 0.2:
        b = b.taint("dedicated", "x", rng.choice(("NoSchedule", "NoExecute", "PreferNoSchedule")))
    return b.obj()


def _labels(rng: random.Random) -> dict[str, str]:
    return {k: rng.choice(v) for k, v in LABEL_VALUES.items() if rng.random() < 0.6}


def _selector(rng: random.Random) -> LabelSelector | None:
    roll = rng.random()
    if roll < 0.05:
        return None
    if roll < 0.1:
        return LabelSelector()
    key = rng.choice(list(LABEL_VALUES))
    if roll < 0.6:
        return LabelSelector(match_labels={key: rng.choice(LABEL_VALUES[key])})
    op = rng.choice(("In", "NotIn", "Exists", "DoesNotExist"))
    values = tuple(rng.sample(LABEL_VALUES[key], 1)) if op in ("In", "NotIn") else ()
    expr = LabelSelectorRequirement(key=key, operator=op, values=values)
    extra = {"app": rng.choice(LABEL_VALUES["app"])} if rng.random() < 0.3 else {}
    return LabelSelector(match_labels=extra, match_expressions=(expr,))


def _term(rng: random.Random) -> PodAffinityTerm:
    roll = rng.random()
    namespaces: tuple[str, ...] = ()
    ns_selector = None
    if roll < 0.3:
        namespaces = tuple(rng.sample(sorted(NAMESPACES), 2))
    elif roll < 0.45:
        ns_selector = LabelSelector(match_labels={"team": "a"})
    elif roll < 0.5:
        ns_selector = LabelSelector()
    selector = _selector(rng)
    return PodAffinityTerm(
        topology_key=rng.choice(KEYS),
        label_selector=selector,
        namespaces=namespaces,
        namespace_selector=ns_selector,
    )


def _affinity(rng: random.Random) -> Affinity | None:
    if rng.random() < 0.4:
        return None

    def terms() -> tuple[PodAffinityTerm, ...]:
        return tuple(_term(rng) for _ in range(rng.choice((0, 0, 1, 2))))

    def weighted() -> tuple[WeightedPodAffinityTerm, ...]:
        return tuple(
            WeightedPodAffinityTerm(weight=rng.randint(1, 100), term=_term(rng))
            for _ in range(rng.choice((0, 0, 1, 2)))
        )

    return Affinity(
        pod_affinity=PodAffinity(required=terms(), preferred=weighted()),
        pod_anti_affinity=PodAntiAffinity(required=terms(), preferred=weighted()),
    )


def _spread(rng: random.Random, labels: Mapping[str, str]) -> tuple[TopologySpreadConstraint, ...]:
    out = []
    for _ in range(rng.choice((0, 1, 1, 2))):
        out.append(
            TopologySpreadConstraint(
                max_skew=rng.randint(1, 3),
                topology_key=rng.choice(KEYS),
                when_unsatisfiable=rng.choice(("DoNotSchedule", "ScheduleAnyway")),
                label_selector=_selector(rng),
                min_domains=rng.choice((None, None, 2, 5)),
                node_affinity_policy=rng.choice((None, "Honor", "Ignore")),
                node_taints_policy=rng.choice((None, "Honor", "Ignore")),
                match_label_keys=("tier",) if rng.random() < 0.2 and "tier" in labels else (),
            )
        )
    return tuple(out)


def _pod(rng: random.Random, name: str, node: str | None) -> Pod:
    labels = _labels(rng)
    b = make_pod(name, rng.choice(sorted(NAMESPACES))).labels(labels)
    if node is not None:
        b = b.node(node)
    if rng.random() < 0.1:
        b = b.terminating()
    if rng.random() < 0.25:
        b = b.node_selector({ZONE: rng.choice(("z0", "z1", "z2"))})
    if rng.random() < 0.2:
        b = b.toleration("dedicated", "x", "NoSchedule")
    affinity = _affinity(rng)
    if affinity is not None:
        b = b.affinity(affinity)
    pod = b.obj()
    spec = attrs.evolve(pod.spec, topology_spread_constraints=_spread(rng, labels))
    return attrs.evolve(pod, spec=spec)


# ---- both paths ----------------------------------------------------------------------------


def _pts_view(plugin: PodTopologySpread, pod: Pod, snapshot: Snapshot, rng_seed: int) -> Any:
    nodes = snapshot.list()
    state = CycleState()
    out: list[Any] = []
    status = plugin.pre_filter(state, pod, nodes)
    out.append(_status(status))
    s = state.get(PTS_PF)
    if s is not None:
        out.append([list(m.items()) for m in s.tp_value_to_match_num])
        out.append([p.as_tuple() for p in s.critical_paths])
        out.append(s.self_match)
        out.append([_status(plugin.filter(state, pod, info)) for info in nodes])
        out.append(_passing(plugin, state, pod, snapshot))
        out.append(_preempting(plugin, state, pod, snapshot))
    rng = random.Random(rng_seed)
    rows = [row for row in range(len(nodes)) if rng.random() < 0.6] or list(range(len(nodes)))
    rng.shuffle(rows)
    filtered: Sequence[NodeInfo] = [nodes[row] for row in rows]
    if rng.random() < 0.5:
        # As the batch Filter hands them over: rows of the snapshot's table.
        filtered = NodeRows(nodes, np.array(rows, dtype=np.int64))
    state = CycleState()
    out.append(_status(plugin.pre_score(state, pod, filtered)))
    ps = state.get(PTS_PS)
    if ps is not None:
        out.append([list(m.items()) for m in ps.topology_value_to_pod_counts])
        out.append(sorted(ps.ignored_nodes))
        out.append(ps.topology_normalizing_weight)
        scores = {info.name: plugin.score(state, pod, info) for info in filtered}
        out.append(dict(scores))
        out.append(_batch_scores(plugin, state, pod, snapshot, rows, scores))
        plugin.normalize_score(state, pod, scores)
        out.append(scores)
    return out


def _ipa_view(plugin: InterPodAffinity, pod: Pod, snapshot: Snapshot) -> Any:
    nodes = snapshot.list()
    state = CycleState()
    out: list[Any] = [_status(plugin.pre_filter(state, pod, nodes))]
    s = state.get(IPA_PF)
    if s is not None:
        out.append(s.existing_anti_affinity_counts)
        out.append(s.affinity_counts)
        out.append(s.anti_affinity_counts)
        out.append([_status(plugin.filter(state, pod, info)) for info in nodes])
        out.append(_passing(plugin, state, pod, snapshot))
        out.append(_preempting(plugin, state, pod, snapshot))
    state = CycleState()
    out.append(_status(plugin.pre_score(state, pod, nodes)))
    ps = state.get(IPA_PS)
    if ps is not None:
        out.append(ps.topology_score)
        scores = {info.name: plugin.score(state, pod, info) for info in nodes}
        out.append(dict(scores))
        rows = list(range(len(nodes)))
        batch = _batch_scores(plugin, state, pod, snapshot, rows, scores)
        out.append(batch)
        plugin.normalize_score(state, pod, scores)
        out.append(scores)
        normalized = np.array(batch, dtype=np.int64)
        if plugin.use_index:  # the recount compares with NormalizeScore's dict form
            plugin.normalize_score_batch(state, pod, normalized)
            out.append(dict(zip(scores, normalized.tolist(), strict=True)))
        else:
            out.append(scores)
    return out


def _batch_scores(
    plugin: Any,
    state: CycleState,
    pod: Pod,
    snapshot: Snapshot,
    rows: list[int],
    scores: Mapping[str, int],
) -> list[int]:
    """Scores of ``rows``: the batch form's when it gives them, else Score's."""
    batch = plugin.score_batch(state, pod, snapshot.table, np.array(rows, dtype=np.int64))
    if batch is None:
        return list(scores.values())
    return [int(v) for v in batch.tolist()]


def _preempting(plugin: Any, state: CycleState, pod: Pod, snapshot: Snapshot) -> list[Any]:
    """Filter after a dry run removes the first pod of every other node that has pods and
    adds the first one back (as preemption does), on a copy of the state, then on the
    state itself."""
    busy = [info for info in snapshot.list() if info.pods][::2]
    out = []
    for target in (state.clone(), state):
        for info in busy:
            plugin.remove_pod(target, pod, info.pods[0], info)
        if busy:
            plugin.add_pod(target, pod, busy[0].pods[0], busy[0])
        out.append(_passing(plugin, target, pod, snapshot))
    return out


def _passing(plugin: Any, state: CycleState, pod: Pod, snapshot: Snapshot) -> list[bool]:
    """Which nodes Filter passes: the batch form's mask when it gives one."""
    mask = plugin.filter_batch(state, pod, snapshot.table)
    if mask is not None:
        return [bool(b) for b in mask.tolist()]
    passing = []
    for info in snapshot.list():
        status = plugin.filter(state, pod, info)
        passing.append(status is None or status.is_success)
    return passing


def _status(status: Any) -> Any:
    if isinstance(status, Status):
        return (status.code, status.reasons)
    return status


def _churn(rng: random.Random, cache: Cache, steps: int, seq: Iterator[int]) -> None:
    nodes = [n.metadata.name for n in _nodes(cache)]
    for _ in range(steps):
        roll = rng.random()
        pods = list(cache.pods())
        if roll < 0.55 or not pods:
            node = rng.choice(nodes) if nodes and rng.random() < 0.97 else "ghost"
            pod = _pod(rng, f"p{next(seq)}", node)
            if rng.random() < 0.3:
                cache.assume_pod(pod)
            else:
                cache.add_pod(pod)
        elif roll < 0.7:
            cache.remove_pod(rng.choice(pods))
        elif roll < 0.8:
            old = rng.choice(pods)
            meta = attrs.evolve(old.metadata, labels=_labels(rng))
            cache.update_pod(old, attrs.evolve(old, metadata=meta))
        elif roll < 0.85:
            old = rng.choice(pods)
            if cache.is_assumed(old.uid):
                cache.add_pod(old)  # the bind confirms the assumed pod
            else:
                cache.forget_pod(old)
        elif roll < 0.93 and nodes:
            name = rng.choice(nodes)
            cache.update_node(_node(rng, name))
        elif roll < 0.96 and nodes:
            name = nodes.pop(rng.randrange(len(nodes)))
            info = cache.node_info(name)
            assert info is not None
            cache.remove_node(info.node)
        else:
            name = f"n{next(seq)}"
            cache.add_node(_node(rng, name))
            nodes.append(name)


def _nodes(cache: Cache) -> list[Node]:
    out = []
    for name in cache.node_names():
        info = cache.node_info(name)
        if info is not None:
            out.append(info.node)
    return out


def _guarded(fn: Callable[..., Any], *args: Any) -> Any:
    """The indexed path's answer, or the error it raised (a mismatch too)."""
    try:
        return fn(*args)
    except Exception as exc:
        return f"raised {exc!r}"


def _run(seed: int, rounds: int = 6, probes: int = 6) -> list[str]:
    """Mismatches between the indexed and the recounting paths (empty: none)."""
    rng = random.Random(seed)
    cache = Cache()
    seq = iter(range(10**9))
    for i in range(rng.randint(3, 25)):
        cache.add_node(_node(rng, f"n{i}"))
    snapshot = Snapshot()
    handle = _handle(snapshot)
    pts_args = rng.choice(({"defaultingType": "List"}, None))
    pts_indexed = PodTopologySpread.new(pts_args, handle)
    pts_walk = PodTopologySpread.new(pts_args, handle)
    pts_walk.use_index = False
    ipa_args = rng.choice((None, {"hardPodAffinityWeight": 0}, {"hardPodAffinityWeight": 7}))
    ipa_indexed = InterPodAffinity.new(ipa_args, handle)
    ipa_walk = InterPodAffinity.new(ipa_args, handle)
    ipa_walk.use_index = False
    mismatches = []
    for r in range(rounds):
        _churn(rng, cache, rng.randint(5, 60), seq)
        cache.update_snapshot(snapshot)
        for p in range(probes):
            pod = _pod(rng, f"incoming-{r}-{p}", None)
            seed_scored = rng.randrange(1 << 30)
            a = _guarded(_pts_view, pts_indexed, pod, snapshot, seed_scored)
            b = _pts_view(pts_walk, pod, snapshot, seed_scored)
            if a != b:
                mismatches.append(f"seed {seed} round {r} PTS {pod.name}: {a} != {b}")
            a = _guarded(_ipa_view, ipa_indexed, pod, snapshot)
            b = _ipa_view(ipa_walk, pod, snapshot)
            if a != b:
                mismatches.append(f"seed {seed} round {r} IPA {pod.name}: {a} != {b}")
    return mismatches


@pytest.mark.parametrize("seed", range(40))
def test_indexed_counts_equal_recount(seed: int) -> None:
    assert _run(seed) == []


def test_index_path_is_taken() -> None:
    """The comparison above is between two paths: the index answers for the snapshot."""
    cache = Cache()
    for i in range(4):
        cache.add_node(make_node(f"n{i}").label(ZONE, f"z{i % 2}").obj())
    for i in range(6):
        cache.add_pod(make_pod(f"p{i}").labels({"app": "a"}).node(f"n{i % 4}").obj())
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    plugin = PodTopologySpread.new({"defaultingType": "List"}, _handle(snapshot))
    pod = make_pod("in").labels({"app": "a"}).spread(1, ZONE, {"app": "a"}).obj()
    before = snapshot.pod_index.view_builds
    state = CycleState()
    assert plugin.pre_filter(state, pod, snapshot.list()) is None
    assert snapshot.pod_index.view_builds == before + 1
    assert list(state.read(PTS_PF).tp_value_to_match_num[0].items()) == [("z0", 3), ("z1", 3)]
    assert plugin.filter_batch(state, pod, snapshot.table) is not None
    # A bound pod is counted without rebuilding the view.
    cache.add_pod(make_pod("p9").labels({"app": "a"}).node("n1").obj())
    cache.update_snapshot(snapshot)
    state = CycleState()
    assert plugin.pre_filter(state, pod, snapshot.list()) is None
    assert snapshot.pod_index.view_builds == before + 1
    assert list(state.read(PTS_PF).tp_value_to_match_num[0].items()) == [("z0", 3), ("z1", 4)]


def _broken(
    monkeypatch: pytest.MonkeyPatch, name: str, make: Callable[[Any], Callable[..., Any]]
) -> None:
    monkeypatch.setattr(PodIndex, name, make(getattr(PodIndex, name)))


@pytest.mark.parametrize("defect", ["forget removals", "drop terminating", "ghost term groups"])
def test_differential_check_catches_a_broken_index(
    monkeypatch: pytest.MonkeyPatch, defect: str
) -> None:
    if defect == "forget removals":
        _broken(monkeypatch, "_remove", lambda orig: lambda self, pod_info: None)
    elif defect == "drop terminating":
        from ksched.framework import _pod_index

        def live_only(orig: Any) -> Any:
            def count(self: Any, pod_info: Any, row: int, size: int, delta: int) -> None:
                if pod_info.pod.metadata.deletion_timestamp is None:
                    orig(self, pod_info, row, size, delta)

            return count

        monkeypatch.setattr(
            _pod_index.SelectorView,
            "_count",
            live_only(_pod_index.SelectorView._count),
        )
    else:

        def never_forget(orig: Any) -> Any:
            def group(groups: Any, term: Any, weight: int, node: str, delta: int) -> None:
                orig(groups, term, weight, node, max(delta, 0))

            return staticmethod(group)

        _broken(monkeypatch, "_group", never_forget)
    found = [m for seed in range(12) for m in _run(seed)]
    assert found, f"a broken index ({defect}) went unnoticed"
