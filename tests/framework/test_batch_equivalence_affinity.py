"""NodeAffinity's and NodePorts' batch forms must give exactly what their per-node methods give.

Random nodes carry zone, region, instance-type, rack and a numeric generation label, each
missing on some nodes (the generation is sometimes not an integer). Random pods have a
nodeSelector, required node affinity (several terms, every operator, matchFields on
metadata.name, now and then a term that does not parse), preferred terms and host ports.
Each pod's cycle runs per node only, batch with full diagnosis, and batch as the hot path
runs it: placements, every filter status, every plugin score, the totals and the rotating
start index must agree. A second profile adds scheduler-enforced affinity (addedAffinity).
NormalizeScore's batch form runs on both paths; tests/plugins/test_node_affinity.py pins it.

Set KSCHED_DIFFERENTIAL_PODS / KSCHED_DIFFERENTIAL_NODES for a larger run.
"""

from __future__ import annotations

import os
import random
from collections import Counter
from typing import Any

import attrs
import pytest
from _differential import compare_paths

from ksched import InMemoryCluster, Pod, Scheduler, parse_config
from ksched.api import (
    Affinity,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
)
from ksched.plugins import node_affinity, node_ports
from ksched.testing import make_node, make_pod

PODS = int(os.environ.get("KSCHED_DIFFERENTIAL_PODS", "1200"))
NODES = int(os.environ.get("KSCHED_DIFFERENTIAL_NODES", "150"))

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
INSTANCE = "node.kubernetes.io/instance-type"
RACK = "example.com/rack"
GENERATION = "example.com/generation"
DEDICATED = "example.com/dedicated"

LABELS: dict[str, tuple[float, list[str]]] = {
    # key: (chance the node lacks it, values)
    ZONE: (0.1, ["zone-a", "zone-b", "zone-c", "zone-d"]),
    REGION: (0.2, ["r1", "r2"]),
    INSTANCE: (0.15, ["small", "large", "xlarge", "gpu"]),
    RACK: (0.3, [f"rack-{i}" for i in range(10)]),
    GENERATION: (0.4, ["1", "2", "3", "4", "5", "+3", "007", "-2", "x9", "", "2.5"]),
    DEDICATED: (0.85, ["", "ml"]),
}
OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]

ADDED_AFFINITY = {
    "requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": RACK, "operator": "NotIn", "values": ["rack-9"]}]},
            {"matchExpressions": [{"key": REGION, "operator": "In", "values": ["r2"]}]},
        ]
    },
    "preferredDuringSchedulingIgnoredDuringExecution": [
        {
            "weight": 7,
            "preference": {"matchExpressions": [{"key": INSTANCE, "operator": "Exists"}]},
        },
        {
            "weight": 3,
            "preference": {
                "matchExpressions": [{"key": GENERATION, "operator": "Gt", "values": ["2"]}]
            },
        },
    ],
}

CONFIGS: dict[str, dict[str, Any] | None] = {
    "default": None,
    "added-affinity": {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "pluginConfig": [
                    {"name": "NodeAffinity", "args": {"addedAffinity": ADDED_AFFINITY}}
                ],
            }
        ],
    },
}


def random_node(rng: random.Random, i: int) -> Any:
    node = make_node(f"node-{i}").resources(
        {"cpu": rng.choice(["4", "8", "16"]), "memory": "32Gi", "pods": rng.choice([8, 110])}
    )
    for key, (missing, values) in LABELS.items():
        if rng.random() >= missing:
            node = node.label(key, rng.choice(values))
    return node.obj()


def random_requirement(rng: random.Random) -> NodeSelectorRequirement:
    key = rng.choice(list(LABELS))
    op = rng.choice(OPERATORS)
    values: tuple[str, ...] = ()
    if op in ("In", "NotIn"):
        pool = [*LABELS[key][1], "absent-value"]
        values = tuple(rng.sample(pool, rng.randint(1, min(7, len(pool)))))
    elif op in ("Gt", "Lt"):
        values = (rng.choice(["-1", "0", "2", "3", "4", "+2"]),)
    if rng.random() < 0.02:  # does not parse: the term fails only itself
        values = ("not-a-number",) if op in ("Gt", "Lt") else ()
    return NodeSelectorRequirement(key=key, operator=op, values=values)


def random_field(rng: random.Random, node_names: list[str]) -> NodeSelectorRequirement:
    name = rng.choice(node_names) if rng.random() < 0.9 else "node-missing"
    op = "In" if rng.random() < 0.6 else "NotIn"
    if rng.random() < 0.05:  # a field nodes do not have: it reads as ""
        return NodeSelectorRequirement(
            key="metadata.uid", operator=op, values=(rng.choice(["", name]),)
        )
    return NodeSelectorRequirement(key="metadata.name", operator=op, values=(name,))


def random_term(rng: random.Random, node_names: list[str]) -> NodeSelectorTerm:
    exprs = tuple(random_requirement(rng) for _ in range(rng.choice([0, 1, 1, 2, 3])))
    fields = (random_field(rng, node_names),) if rng.random() < 0.15 else ()
    return NodeSelectorTerm(match_expressions=exprs, match_fields=fields)


def random_affinity(rng: random.Random, node_names: list[str]) -> NodeAffinity | None:
    required: NodeSelector | None = None
    roll = rng.random()
    if roll < 0.05:  # pinned by name: PreFilter narrows the nodes
        terms = tuple(
            NodeSelectorTerm(
                match_fields=(
                    NodeSelectorRequirement(
                        key="metadata.name",
                        operator="In",
                        values=tuple(rng.sample(node_names, rng.randint(1, 3))),
                    ),
                ),
                match_expressions=(random_requirement(rng),) if rng.random() < 0.5 else (),
            )
            for _ in range(rng.randint(1, 2))
        )
        required = NodeSelector(terms=terms)
    elif roll < 0.55:
        required = NodeSelector(
            terms=tuple(random_term(rng, node_names) for _ in range(rng.randint(1, 3)))
        )
    elif roll < 0.57:
        required = NodeSelector()  # no terms: no node matches
    preferred: tuple[PreferredSchedulingTerm, ...] = ()
    if rng.random() < 0.45:
        preferred = tuple(
            PreferredSchedulingTerm(
                weight=rng.choice([0, 1, 5, 20, 50, 100]),
                preference=random_term(rng, node_names),
            )
            for _ in range(rng.randint(1, 4))
        )
    if required is None and not preferred:
        return None
    return NodeAffinity(required=required, preferred=preferred)


def random_pod(rng: random.Random, i: int, node_names: list[str]) -> Pod:
    pod = make_pod(f"pod-{i}").uid(f"uid-{i}")
    pod = pod.req(cpu=rng.choice(["100m", "500m", "1"]), memory=rng.choice(["256Mi", "1Gi"]))
    if rng.random() < 0.3:
        keys = rng.sample(list(LABELS), rng.randint(1, 2))
        pod = pod.node_selector({k: rng.choice(LABELS[k][1]) for k in keys})
    affinity = random_affinity(rng, node_names)
    if affinity is not None:
        pod = pod.affinity(Affinity(node_affinity=affinity))
    if rng.random() < 0.3:
        for _ in range(rng.randint(1, 2)):
            pod = pod.host_port(
                rng.choice([8080, 8081, 9000]),
                rng.choice(["TCP", "TCP", "UDP"]),
                rng.choice(["", "", "127.0.0.1", "10.0.0.1", "0.0.0.0"]),
            )
    return pod.obj()


def _count_batch_results(monkeypatch: pytest.MonkeyPatch, cls: Any, method: str) -> Counter[str]:
    """Count, on ``cls``, the batch form's answers: an array, or None (per node)."""
    counts: Counter[str] = Counter()
    original = getattr(cls, method)

    def counting(self: Any, *args: Any) -> Any:
        result = original(self, *args)
        counts["none" if result is None else "array"] += 1
        return result

    monkeypatch.setattr(cls, method, counting)
    return counts


@pytest.mark.parametrize("config_name", sorted(CONFIGS))
@pytest.mark.anyio
async def test_affinity_and_ports_batch_forms_equal_per_node(
    config_name: str, anyio_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if anyio_backend != "asyncio":
        pytest.skip("pure computation: one backend is enough")
    affinity_filter = _count_batch_results(monkeypatch, node_affinity.NodeAffinity, "filter_batch")
    affinity_score = _count_batch_results(monkeypatch, node_affinity.NodeAffinity, "score_batch")
    ports_filter = _count_batch_results(monkeypatch, node_ports.NodePorts, "filter_batch")
    rng = random.Random(23)
    cluster = InMemoryCluster()
    nodes = [random_node(rng, i) for i in range(NODES)]
    for node in nodes:
        cluster.apply(node)
    scheduler = Scheduler(parse_config(CONFIGS[config_name]), cluster, seed=5)
    # The batch forms themselves, every cycle (kept masks and columns: test_row_cache.py).
    scheduler.frameworks["default-scheduler"].fast.use_row_cache = False
    node_names = [n.name for n in nodes]
    placed: list[Pod] = []
    outcomes: Counter[str] = Counter()
    for i in range(PODS):
        pod = random_pod(rng, i, node_names)
        chosen, per_node = await compare_paths(scheduler, pod)
        if isinstance(chosen, str):
            outcomes["scheduled"] += 1
            bound = attrs.evolve(pod, spec=attrs.evolve(pod.spec, node_name=chosen))
            scheduler.cache.assume_pod(bound)
            placed.append(bound)
        else:
            outcomes[chosen[0]] += 1
            for status in per_node.filter.values():
                outcomes[status.plugin] += 1
        if placed and rng.random() < 0.1:
            scheduler.cache.forget_pod(placed.pop(rng.randrange(len(placed))))
    # Both outcomes, rejections by both plugins, and the batch forms really ran.
    assert outcomes["scheduled"] > PODS // 3, outcomes
    assert outcomes["fit-error"] > PODS // 20, outcomes
    assert outcomes["NodeAffinity"] > 0 and outcomes["NodePorts"] > 0, outcomes
    assert affinity_filter["array"] > PODS // 2, affinity_filter
    assert affinity_score["array"] > PODS // 4, affinity_score
    assert ports_filter["array"] > PODS // 10, ports_filter
