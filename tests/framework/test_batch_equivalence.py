"""Batch forms must give exactly what the per-node plugins give.

Random nodes (taints, cordons, images, missing and extended resources) and random pods
(requests, tolerations, images, node names) are scheduled one by one; each pod's cycle
runs three times on the same state: per node only, batch with full diagnosis, and batch
as the hot path runs it (no statuses for a schedulable pod). Placements, every filter
status, every plugin score, the totals and the rotating start index must agree. Placed pods
stay on their nodes (and some leave again), so later pods meet fuller nodes.

Set KSCHED_DIFFERENTIAL_PODS / KSCHED_DIFFERENTIAL_NODES for the full-size run
(10 000 pods on 1 000 nodes).
"""

from __future__ import annotations

import os
import random
from typing import Any

import anyio
import anyio.lowlevel
import attrs
import pytest
from _differential import compare_paths

from ksched import InMemoryCluster, Pod, Scheduler, parse_config
from ksched.framework import Code, Status
from ksched.testing import make_node, make_pod

PODS = int(os.environ.get("KSCHED_DIFFERENTIAL_PODS", "1500"))
NODES = int(os.environ.get("KSCHED_DIFFERENTIAL_NODES", "150"))

GPU = "example.com/gpu"
IMAGES = {"app:v1": 300 << 20, "ml:v2": 900 << 20, "base:latest": 40 << 20, "db:v3": 600 << 20}

CONFIGS: dict[str, dict[str, Any] | None] = {
    "default": None,
    "most-allocated": {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "pluginConfig": [
                    {
                        "name": "NodeResourcesFit",
                        "args": {
                            "scoringStrategy": {
                                "type": "MostAllocated",
                                "resources": [
                                    {"name": "cpu", "weight": 2},
                                    {"name": "memory", "weight": 1},
                                    {"name": GPU, "weight": 3},
                                ],
                            }
                        },
                    },
                    {
                        "name": "NodeResourcesBalancedAllocation",
                        "args": {
                            "resources": [
                                {"name": "cpu", "weight": 1},
                                {"name": "memory", "weight": 1},
                                {"name": GPU, "weight": 1},
                            ]
                        },
                    },
                ],
            }
        ],
    },
}


def random_node(rng: random.Random, i: int) -> Any:
    resources: dict[str, str | int] = {
        "cpu": rng.choice(["2", "4", "3500m", "8", "16", "64"]),
        "pods": rng.choice([4, 10, 32, 110]),
    }
    if rng.random() > 0.03:  # a few nodes report no memory at all
        resources["memory"] = rng.choice(["4Gi", "16Gi", "32Gi", "100Gi", "256Gi"])
    if rng.random() < 0.3:
        resources["ephemeral-storage"] = rng.choice(["10Gi", "100Gi"])
    if rng.random() < 0.25:
        resources[GPU] = rng.choice([0, 1, 4, 8])
    node = make_node(f"node-{i}").resources(resources)
    node = node.label("topology.kubernetes.io/zone", f"zone-{i % 3}")
    roll = rng.random()
    if roll < 0.08:
        node = node.taint("dedicated", rng.choice(["ml", "db"]), "NoSchedule")
    elif roll < 0.12:
        node = node.taint("maintenance", "", "NoExecute")
    if rng.random() < 0.15:
        for _ in range(rng.randint(1, 2)):
            node = node.taint(f"soft-{rng.randint(0, 2)}", "x", "PreferNoSchedule")
    if rng.random() < 0.03:
        node = node.unschedulable()
    for image, size in IMAGES.items():
        if rng.random() < 0.2:
            # Nodes report different sizes for one name; the cache keeps the first one.
            node = node.image(image, size + (i % 3) * (64 << 20))
    return node.obj()


def random_pod(rng: random.Random, i: int, node_names: list[str]) -> Pod:
    pod = make_pod(f"pod-{i}").uid(f"uid-{i}")
    requests: dict[str, str | int] = {}
    if rng.random() < 0.9:
        requests["cpu"] = rng.choice(["100m", "250m", "500m", "1", "1500m", "3"])
    if rng.random() < 0.85:
        requests["memory"] = rng.choice(["64Mi", "500Mi", "1Gi", "4Gi", "12Gi"])
    if rng.random() < 0.1:
        requests["ephemeral-storage"] = rng.choice(["1Gi", "20Gi"])
    if rng.random() < 0.1:
        requests[GPU] = rng.choice([1, 2])
    image = rng.choice([*IMAGES, "other:v9", ""])
    pod = pod.container(requests=requests, image=image)
    if rng.random() < 0.1:
        pod = pod.toleration("dedicated", rng.choice(["ml", "db"]), "NoSchedule")
    if rng.random() < 0.05:
        pod = pod.toleration(operator="Exists")
    if rng.random() < 0.1:
        pod = pod.toleration("soft-1", "x", "PreferNoSchedule")
    if rng.random() < 0.03:
        pod = pod.toleration("node.kubernetes.io/unschedulable", "", "NoSchedule", "Exists")
    if rng.random() < 0.01:
        pod = pod.node(rng.choice(node_names))
    return pod.obj()


@pytest.mark.parametrize("config_name", sorted(CONFIGS))
@pytest.mark.anyio
async def test_batch_forms_equal_per_node_plugins(config_name: str, anyio_backend: str) -> None:
    if anyio_backend != "asyncio":
        pytest.skip("pure computation: one backend is enough")
    rng = random.Random(7)
    cluster = InMemoryCluster()
    nodes = [random_node(rng, i) for i in range(NODES)]
    for node in nodes:
        cluster.apply(node)
    scheduler = Scheduler(parse_config(CONFIGS[config_name]), cluster, seed=11)
    node_names = [n.name for n in nodes]
    placed: list[Pod] = []
    scheduled = unschedulable = 0
    for i in range(PODS):
        pod = random_pod(rng, i, node_names)
        chosen, _ = await compare_paths(scheduler, pod)
        if isinstance(chosen, str):
            scheduled += 1
            bound = attrs.evolve(pod, spec=attrs.evolve(pod.spec, node_name=chosen))
            scheduler.cache.assume_pod(bound)
            placed.append(bound)
        else:
            unschedulable += 1
        if placed and rng.random() < 0.1:
            scheduler.cache.forget_pod(placed.pop(rng.randrange(len(placed))))
    # The run must have exercised both outcomes, with scoring.
    assert scheduled > PODS // 3
    assert unschedulable > 0


class SlowParity:
    """An async Filter (it awaits) that rejects nodes whose number is odd for even pods."""

    name = "SlowParity"

    @classmethod
    def new(cls, args: Any, handle: Any) -> SlowParity:
        return cls()

    async def filter(self, state: Any, pod: Pod, node_info: Any) -> Status | None:
        await anyio.lowlevel.checkpoint()
        if int(pod.name.split("-")[1]) % 2 == 0 and int(node_info.name.split("-")[1]) % 2:
            return Status(Code.UNSCHEDULABLE, ("odd node for an even pod",))
        return None


@pytest.mark.anyio
async def test_batch_forms_with_an_async_filter_equal_per_node() -> None:
    """Batch masks for the plain plugins, the async one fanned out over what passes."""
    rng = random.Random(3)
    cluster = InMemoryCluster()
    nodes = [random_node(rng, i) for i in range(60)]
    for node in nodes:
        cluster.apply(node)
    config = parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": "default-scheduler",
                    "plugins": {"filter": {"enabled": [{"name": "SlowParity"}]}},
                }
            ],
        }
    )
    scheduler = Scheduler(config, cluster, seed=2, registry={"SlowParity": SlowParity.new})
    assert scheduler.frameworks["default-scheduler"].filters_async
    names = [n.name for n in nodes]
    outcomes: list[Any] = []
    for i in range(300):
        pod = random_pod(rng, i, names)
        chosen, _ = await compare_paths(scheduler, pod)
        outcomes.append(chosen)
        if isinstance(chosen, str):
            scheduler.cache.assume_pod(
                attrs.evolve(pod, spec=attrs.evolve(pod.spec, node_name=chosen))
            )
    assert sum(isinstance(o, str) for o in outcomes) > 100
    assert any(not isinstance(o, str) for o in outcomes)
