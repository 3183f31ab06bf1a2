"""One experiment of the FGD study on ksched: a workload submitted pod by pod to a
``Scheduler`` on an ``InMemoryCluster``, on trio's simulated clock, measured after each pod.

# pkg/simulator/simulator.go (SchedulePods, assumePod, syncClusterResourceList)
# scripts/generate_config_and_run.py, experiments/run_scripts/generate_run_scripts.py
#   (the profile of each policy)
# vendor/k8s.io/kubernetes/pkg/scheduler/core/generic_scheduler.go (selectHost)

As the artifact does: the nodes are added in name order, then each pod is created, the
scheduler given time until the pod is bound or has failed (every task blocked), and a
failed pod deleted, never retried. The pod's GPU request counts as arrived before it is
tried. The profile is the artifact's: the stock filters that can reject an openb pod
(NodeUnschedulable, TaintToleration, NodeResourcesFit), Open-Gpu-Share (GPU selection by
the policy, as each policy's run script sets it), the one Score policy with weight 1000, no
other Score plugin, every node scored (``percentageOfNodesToScore: 100``). DefaultPreemption
is left out: every openb pod has priority 0, so it never finds a victim (the artifact's
runs it to the same end).

Ties: the artifact's scheduler takes the lexicographically smallest node name among the
best-scored nodes (its ``selectHost`` is patched so). Nodes are added in name order, so
the engine's feasible list is in name order and the first of the tied nodes is that node;
the scheduler's tie-break draw is made to pick the first (``_FirstOfTies``). The Random
policy draws its node and GPU from the engine's seeded generator instead (its one
100-scored node has no tie).
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import anyio
import attrs

from .._errors import ConfigError
from ..api import Node, Pod
from ..cluster import InMemoryCluster
from ..config import SchedulerConfig, parse_config
from ..scheduler import Scheduler
from ._metrics import FragMeter, GpuClusterState, GpuCurve, pod_kind
from ._openb import PodShape
from ._typical import TypicalPod, TypicalPodsConfig, typical_pods, typical_pods_args
from ._workload import Workload, WorkloadConfig, prepare_workload

__all__ = [
    "POLICIES",
    "ExperimentConfig",
    "ExperimentResult",
    "policy_name",
    "run_experiment",
    "scheduler_config",
]

POLICIES: dict[str, str] = {
    "01-Random": "RandomScore",
    "02-DotProd": "DotProductScore",
    "03-GpuClustering": "GpuClusteringScore",
    "04-GpuPacking": "GpuPackingScore",
    "05-BestFit": "BestFitScore",
    "06-FGD": "FGDScore",
}
"""The artifact's policy names (as its tables spell them) and the Score plugins."""
_WEIGHT = 1000
_STOCK_FILTERS = ("NodeUnschedulable", "TaintToleration", "NodeResourcesFit")


def policy_name(name: str) -> str:
    """The table name of a policy given as ``06-FGD``, ``FGD`` or ``FGDScore``."""
    for table_name, plugin in POLICIES.items():
        if name.lower() in (table_name.lower(), table_name[3:].lower(), plugin.lower()):
            return table_name
    known = ", ".join(POLICIES)
    raise ConfigError(f"policy: {name!r} is none of {known} (or their short names)")


@attrs.frozen(kw_only=True)
class ExperimentConfig:
    """What one experiment runs (the artifact's defaults: tune 1.3, seed 42, Go draws)."""

    policy: str = attrs.field(default="06-FGD", converter=policy_name)
    """The policy, as its table name (``06-FGD``; ``FGD`` and ``FGDScore`` read as that)."""
    workload: WorkloadConfig = attrs.field(factory=WorkloadConfig)
    typical: TypicalPodsConfig = attrs.field(factory=TypicalPodsConfig)
    checkpoint_every: int = 500
    """Record the CPU time spent every this many pods (the cost per pod over the run)."""


@attrs.frozen(kw_only=True)
class ExperimentResult:
    """What an experiment measured."""

    policy: str
    workload: Workload
    typical: tuple[TypicalPod, ...]
    typical_share: float
    """The share of the original pods the typical pods cover."""
    curve: GpuCurve
    bound: int
    failed: int
    failed_by_kind: dict[str, int]
    unallocated_gpu_milli: int
    """GPU milli allocated to no pod at the end."""
    fully_free_gpus: int
    cpu_seconds: float
    """Process CPU time of the scheduling loop (preparation excluded)."""
    checkpoints: tuple[tuple[int, float], ...]
    """(pods submitted, CPU seconds since the loop began), every ``checkpoint_every`` pods."""
    placements: tuple[str | None, ...]
    """Each submitted pod's node, in order (None: it failed)."""


def scheduler_config(policy: str, typical: Sequence[TypicalPod]) -> SchedulerConfig:
    """The artifact's profile for a policy (see the module docstring)."""
    plugin = POLICIES[policy_name(policy)]
    enabled: list[dict[str, Any]] = [{"name": "PrioritySort"}]
    enabled += [{"name": name} for name in _STOCK_FILTERS]
    enabled += [
        {"name": "Open-Gpu-Share"},
        {"name": plugin, "weight": _WEIGHT},
        {"name": "DefaultBinder"},
    ]
    plugin_config: list[dict[str, Any]] = [
        {"name": "Open-Gpu-Share", "args": {"gpuSelMethod": "auto"}}
    ]
    if plugin == "FGDScore":
        plugin_config.append({"name": plugin, "args": {"typicalPods": typical_pods_args(typical)}})
    elif plugin == "DotProductScore":
        args = {"dimExtMethod": "merge", "normMethod": "max"}  # the run scripts' 02-DotProd
        plugin_config.append({"name": plugin, "args": args})
    return parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "percentageOfNodesToScore": 100,
            "profiles": [
                {
                    "schedulerName": "default-scheduler",
                    "plugins": {
                        "multiPoint": {"enabled": enabled, "disabled": [{"name": "*"}]},
                        "score": {
                            "disabled": [{"name": "TaintToleration"}, {"name": "NodeResourcesFit"}]
                        },
                    },
                    "pluginConfig": plugin_config,
                }
            ],
        }
    )


class _FirstOfTies(random.Random):
    """A generator whose ``randrange`` draws the first candidate: the scheduler's tie
    between equally scored nodes goes to the first of them in the feasible list, i.e. the
    smallest name (nodes are added in name order). Every other method draws as usual."""

    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:
        return 0 if stop is None else start  # the tie rule needs no draw


@attrs.define(eq=False)
class _Loop:
    """The pod-by-pod submission and what it measures."""

    cluster: InMemoryCluster
    state: GpuClusterState
    curve: GpuCurve
    checkpoint_every: int
    arrived: int = 0
    bound: int = 0
    failed: Counter[str] = attrs.field(factory=Counter)
    checkpoints: list[tuple[int, float]] = attrs.field(factory=list)
    placements: list[str | None] = attrs.field(factory=list)

    async def submit(self, pods: Sequence[Pod], clock: Callable[[], float]) -> None:
        cluster, state = self.cluster, self.state
        start = clock()
        for done, pod in enumerate(pods, 1):
            shape = PodShape.of(pod)
            self.arrived += shape.total_gpu_milli
            cluster.apply(pod)
            await anyio.wait_all_tasks_blocked()
            current = cluster.get_pod(pod.key)
            if current is not None and current.spec.node_name:
                state.bind(current, current.spec.node_name)
                self.bound += 1
                self.placements.append(current.spec.node_name)
            else:
                self.failed[pod_kind(shape)] += 1
                self.placements.append(None)
                if current is not None:
                    cluster.remove("Pod", pod.key)
            self.curve.sample(state, self.arrived)
            if done % self.checkpoint_every == 0 or done == len(pods):
                self.checkpoints.append((done, clock() - start))


def run_experiment(
    nodes: Sequence[Node], pods: Sequence[Pod], config: ExperimentConfig | None = None
) -> ExperimentResult:
    """Run one experiment (see the module docstring) and measure it.

    Args:
        nodes: the cluster (the trace's nodes as ``to_nodes`` reads them).
        pods: the trace's pods (``to_pods``); typical pods and tuning draw from them.
        config: the policy and the knobs.
    """
    import trio.testing

    config = config or ExperimentConfig()
    policy = policy_name(config.policy)
    originals = sorted(pods, key=lambda p: p.name)
    typical, share = typical_pods((PodShape.of(p) for p in originals), config.typical)
    workload = prepare_workload(nodes, originals, config.workload)
    cluster = InMemoryCluster(keep_events=False)
    state = GpuClusterState(workload.nodes, FragMeter(typical))
    loop = _Loop(cluster, state, GpuCurve(total_gpus=state.total_gpus), config.checkpoint_every)
    # Opportunistic batching would hand an equal pod the next node of an earlier ranking,
    # whose ties are ordered at random: the artifact ranks every pod afresh.
    seed = config.workload.seed
    scheduler = Scheduler(
        scheduler_config(policy, typical),
        cluster,
        seed=seed,
        opportunistic_batching=False,
        rng=random.Random(seed) if policy == "01-Random" else _FirstOfTies(seed),
    )
    cpu_start = time.process_time()

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            await tg.start(scheduler.serve)
            for node in workload.nodes:
                cluster.apply(node)
            await loop.submit(workload.pods, time.process_time)
            tg.cancel_scope.cancel()

    clock = trio.testing.MockClock(autojump_threshold=0)
    anyio.run(main, backend="trio", backend_options={"clock": clock})
    return ExperimentResult(
        policy=policy,
        workload=workload,
        typical=tuple(typical),
        typical_share=share,
        curve=loop.curve,
        bound=loop.bound,
        failed=sum(loop.failed.values()),
        failed_by_kind=dict(loop.failed),
        unallocated_gpu_milli=state.total_gpus * 1000 - state.used_gpu_milli,
        fully_free_gpus=state.fully_free_gpus(),
        cpu_seconds=time.process_time() - cpu_start,
        checkpoints=tuple(loop.checkpoints),
        placements=tuple(loop.placements),
    )
