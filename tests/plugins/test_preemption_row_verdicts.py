"""A preemptor's Filter statuses from kept row verdicts equal a batch pass's.

A pod that fits nowhere needs every node's status (its FitError, and the nodes
preemption may dry-run). Its single-pass verdict on every table row is kept per pod key
and only refreshed rows are judged again (``RowVerdicts``). Two schedulers see the same
random cluster and the same random pods, most of them too big to fit: one keeps row
verdicts, the other runs the batch forms every cycle. Between cycles pods are placed and
forgotten, nodes are tainted, cordoned, relabelled and resized, pods are nominated and
their nominations cleared, and new nodes join (the table is then rebuilt). Each cycle
must end alike, with every node's status, in the same order, and the same rotating start.

# pkg/scheduler/schedule_one.go (findNodesThatFitPod, FitError),
# framework/runtime/framework.go (RunFilterPluginsWithNominatedPods)
"""

from __future__ import annotations

import random
from typing import Any

import attrs
import pytest

from ksched import InMemoryCluster, Node, Pod, Scheduler
from ksched.framework import CycleState, PodInfo, Status
from ksched.framework._fast._nominated_verdicts import NominatedVerdicts
from ksched.scheduler import FitError
from ksched.scheduler._observer import UNOBSERVED
from ksched.testing import make_node, make_pod

CYCLES = 700
ZONES = ("zone-a", "zone-b")


def _node(rng: random.Random, i: int) -> Node:
    b = make_node(f"n{i}").capacity(cpu=rng.choice(["2", "4", "8"]), memory="8Gi", pods=8)
    b = b.label("topology.kubernetes.io/zone", rng.choice(ZONES))
    if rng.random() < 0.15:
        b = b.taint("dedicated", rng.choice(["infra", "gpu"]))
    if rng.random() < 0.05:
        b = b.unschedulable()
    return b.obj()


def _changed(rng: random.Random, node: Node, i: int) -> Node:
    roll = rng.random()
    if roll < 0.3:
        spec = node.spec
        taints = () if spec.taints else make_node("t").taint("dedicated", "infra").obj().spec.taints
        return attrs.evolve(node, spec=attrs.evolve(spec, taints=taints))
    if roll < 0.45:
        return attrs.evolve(
            node, spec=attrs.evolve(node.spec, unschedulable=not node.spec.unschedulable)
        )
    if roll < 0.7:
        labels = dict(node.labels)
        labels["topology.kubernetes.io/zone"] = rng.choice(ZONES)
        return attrs.evolve(node, metadata=attrs.evolve(node.metadata, labels=labels))
    resized = _node(rng, i)
    return attrs.evolve(node, status=resized.status)


def _shapes(rng: random.Random) -> list[Pod]:
    """Pods mostly too big for the nodes as they fill: each node-local Filter rejects."""
    shapes = []
    for i in range(8):
        b = make_pod(f"shape{i}").priority(rng.choice([0, 10, 100]))
        b = b.req(cpu=rng.choice(["1", "3", "5", "9"]), memory=rng.choice(["1Gi", "6Gi", "9Gi"]))
        if rng.random() < 0.3:
            b = b.toleration("dedicated", "infra")
        if rng.random() < 0.3:
            b = b.node_selector({"topology.kubernetes.io/zone": rng.choice(ZONES)})
        shapes.append(b.obj())
    return shapes


def _ending(found: Any) -> Any:
    if isinstance(found, FitError):
        statuses = [(name, _key(s)) for name, s in found.statuses.items()]
        return ("fit-error", found.message(), statuses, sorted(found.unschedulable_plugins))
    if isinstance(found, Status):
        return ("status", _key(found))
    return found


def _key(s: Status) -> tuple[Any, ...]:
    return (s.code, s.reasons, s.plugin)


async def _cycle(scheduler: Scheduler, pod: Pod) -> tuple[Any, int]:
    fw = scheduler.frameworks["default-scheduler"]
    scheduler.cache.update_snapshot(scheduler.snapshot)
    found = await scheduler.algorithm.schedule_pod(fw, CycleState(), pod, UNOBSERVED)
    return _ending(found), scheduler.state.next_start_node_index


@pytest.mark.anyio
async def test_kept_row_verdicts_equal_batch_passes(
    anyio_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if anyio_backend != "asyncio":
        pytest.skip("pure computation: one backend is enough")
    hits = [0]
    row_verdicts = NominatedVerdicts.row_verdicts

    def counted(self: NominatedVerdicts, *args: Any) -> Any:
        out = row_verdicts(self, *args)
        hits[0] += out is not None
        return out

    monkeypatch.setattr(NominatedVerdicts, "row_verdicts", counted)
    rng = random.Random(7)
    nodes = {n.name: n for n in (_node(rng, i) for i in range(60))}
    shapes = _shapes(rng)
    kept, fresh = (Scheduler(cluster=InMemoryCluster(), seed=5) for _ in range(2))
    fresh.frameworks["default-scheduler"].fast.verdict_cache = False
    both = (kept, fresh)
    for node in nodes.values():
        for s in both:
            s.cache.add_node(node)
    placed: list[Pod] = []
    nominated: list[Pod] = []
    failed = 0
    for i in range(CYCLES):
        shape = rng.choice(shapes)
        pod = attrs.evolve(shape, metadata=attrs.evolve(shape.metadata, name=f"p{i}", uid=f"u{i}"))
        got, want = await _cycle(kept, pod), await _cycle(fresh, pod)
        assert got == want, (i, pod.name)
        if isinstance(got[0], str):
            bound = attrs.evolve(pod, spec=attrs.evolve(pod.spec, node_name=got[0]))
            placed.append(bound)
            for s in both:
                s.cache.assume_pod(bound)
        else:
            failed += 1
        roll = rng.random()
        if placed and roll < 0.1:
            gone = placed.pop(rng.randrange(len(placed)))
            for s in both:
                s.cache.forget_pod(gone)
        elif roll < 0.2:
            name = rng.choice(list(nodes))
            nodes[name] = _changed(rng, nodes[name], int(name[1:]))
            for s in both:
                s.cache.update_node(nodes[name])
        elif roll < 0.3:
            target = rng.choice(list(nodes))
            nominated.append(pod)
            for s in both:
                s.queue.add_nominated_pod(PodInfo.of(pod), target)
        elif nominated and roll < 0.37:
            gone = nominated.pop(rng.randrange(len(nominated)))
            for s in both:
                s.queue.delete_nominated_pod_if_exists(gone)
        elif roll < 0.38:
            node = _node(rng, len(nodes))
            nodes[node.name] = node
            for s in both:
                s.cache.add_node(node)
    assert failed > CYCLES // 2
    # Most failed cycles read their statuses from kept row verdicts.
    assert hits[0] > failed // 2, (hits, failed)
