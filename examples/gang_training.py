"""Gang-scheduled training jobs on a small GPU cluster, run to completion.

Each job is a pod group: its workers are placed all together or not at all. By default the
groups are scheduler-plugins PodGroups (Coscheduling); with ``--native`` they are
scheduling.k8s.io PodGroups (the GangScheduling plugin and its pod-group cycle).
A job controller submits jobs over time, lets each run for a while once every worker is
bound, then deletes its pods so later jobs get the GPUs. The log says what waited at Permit,
what was released and where each job landed.

python examples/gang_training.py              # on a virtual clock: the same story every run
python examples/gang_training.py --native     # scheduling.k8s.io PodGroups (GangScheduling)
python examples/gang_training.py --real-time  # the same code on asyncio's real clock

By default the run is on trio's virtual clock (``MockClock(autojump_threshold=0)``: time
jumps ahead whenever every task waits), with trio's order of simultaneous tasks seeded, so
a minute is sixty simulated seconds, the run takes well under a second and prints the
same lines every time. ``--real-time`` runs on asyncio with one minute lasting
``REAL_SECONDS_PER_MINUTE``; its times drift on a loaded machine.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from collections.abc import Callable, Sequence

import anyio
import attrs
import trio.testing

import ksched
from ksched.api import GroupPolicy, ObjectMeta, SchedulingGroupRef, SchedulingPodGroup
from ksched.plugins.coscheduling import POD_GROUP_LABEL, Coscheduling
from ksched.simulate import task_order_seeded
from ksched.testing import make_node, make_pod

SECONDS_PER_MINUTE = 60.0
"""A minute on the virtual clock."""
REAL_SECONDS_PER_MINUTE = 0.02
"""A minute with ``--real-time``."""
GPU = "nvidia.com/gpu"

CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      multiPoint:
        enabled: [{name: Coscheduling}]
        # Coscheduling sorts the queue; jobs wait for room instead of preempting workers.
        disabled: [{name: PrioritySort}, {name: DefaultPreemption}]
    pluginConfig:
      - name: NodeResourcesFit
        args:
          # Pack GPUs, so whole nodes stay free for wide workers.
          scoringStrategy:
            type: MostAllocated
            resources: [{name: nvidia.com/gpu, weight: 1}, {name: cpu, weight: 1}]
"""

NATIVE_CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    plugins:
      multiPoint:
        enabled: [{name: GangScheduling}]
        # Jobs wait for room instead of preempting workers, as in the Coscheduling run.
        disabled: [{name: DefaultPreemption}]
    pluginConfig:
      - name: NodeResourcesFit
        args:
          scoringStrategy:
            type: MostAllocated
            resources: [{name: nvidia.com/gpu, weight: 1}, {name: cpu, weight: 1}]
"""


@attrs.frozen
class Job:
    """A training job: ``workers`` pods of ``gpus`` GPUs each, all or nothing."""

    name: str
    workers: int
    gpus: int
    priority: int
    submit_at: int
    """Minutes after the start."""
    runs_for: int
    """Minutes of training once every worker is bound."""


JOBS = (
    Job("bert-finetune", workers=4, gpus=2, priority=50, submit_at=0, runs_for=40),
    Job("resnet-sweep", workers=6, gpus=1, priority=10, submit_at=0, runs_for=30),
    Job("vit-train", workers=3, gpus=2, priority=50, submit_at=5, runs_for=30),
    Job("llm-pretrain", workers=4, gpus=4, priority=100, submit_at=10, runs_for=30),
    Job("tiny-eval", workers=2, gpus=1, priority=10, submit_at=20, runs_for=10),
)

NODES = ("gpu-a", "gpu-b", "gpu-c", "gpu-d")
GPUS_PER_NODE = 4


@attrs.define
class JobRecord:
    job: Job
    landed_at: float | None = None
    finished_at: float | None = None
    nodes: dict[str, str] = attrs.field(factory=dict)
    waits: int = 0
    releases: int = 0


class Log:
    """Turns scheduling events into one readable line each (per job, not per worker)."""

    def __init__(
        self,
        clock: Callable[[], float],
        print_line: Callable[[str], None],
        seconds_per_minute: float = SECONDS_PER_MINUTE,
    ) -> None:
        self._clock = clock
        self.seconds_per_minute = seconds_per_minute
        self._print = print_line
        self.records: dict[str, JobRecord] = {}
        self.lines: list[str] = []
        self._last_block: dict[str, str] = {}

    def minutes(self) -> float:
        return round(self._clock() / self.seconds_per_minute, 3)

    def say(self, text: str) -> None:
        line = f"[{self.minutes():5.0f}m] {text}"
        self.lines.append(line)
        self._print(line)

    def observe(self, event: ksched.SchedulingEvent) -> None:
        name = event.pod.partition("/")[2]
        job, _, worker = name.rpartition("-w")
        record = self.records.get(job)
        if record is None:
            return
        if event.kind == "WaitingOnPermit":
            record.waits += 1
            node = event.details.get("node")
            self.say(
                f"wait     {job}: worker {worker} reserved {node}, waits at Permit "
                f"for its gang ({record.job.workers} workers)"
            )
        elif event.kind == "PermitRejected":
            record.releases += 1
            message = event.details.get("message")
            self.say(
                f"release  {job}: worker {worker} gives back {event.details['node']} ({message})"
            )
        elif event.kind == "Unschedulable":
            message = str(event.details.get("message", ""))
            if "minCount (" in message:  # the pod-group cycle's verdict (GangScheduling)
                if self._last_block.get(job) != message:
                    self._last_block[job] = message
                    self.say(f"blocked  {job}: {message}")
            elif "even after PostFilter" in message or "failed recently" in message:
                # the FitError, without the PostFilter tail naming the member that failed
                reason = re.split(r"\. (?:no new claims to deallocate|PodGroup)", message)[0]
                if self._last_block.get(job) != reason:
                    self._last_block[job] = reason
                    self.say(f"blocked  {job}: {reason}")
        elif event.kind == "Bound":
            record.nodes[name] = str(event.details.get("node"))


def gpu_cluster() -> list[ksched.Node]:
    return [
        make_node(name)
        .resources({"cpu": "32", "memory": "256Gi", "pods": 110, GPU: GPUS_PER_NODE})
        .label("accelerator", "a100")
        .obj()
        for name in NODES
    ]


def job_objects(
    job: Job, native: bool = False
) -> tuple[ksched.PodGroup | SchedulingPodGroup, list[ksched.Pod]]:
    meta = ObjectMeta(name=job.name, namespace="default")
    group: ksched.PodGroup | SchedulingPodGroup
    if native:
        group = SchedulingPodGroup(metadata=meta, policy=GroupPolicy(min_count=job.workers))
    else:
        group = ksched.PodGroup(metadata=meta, min_member=job.workers)
    pods = []
    for i in range(job.workers):
        builder = make_pod(f"{job.name}-w{i}").priority(job.priority)
        if not native:
            builder = builder.label(POD_GROUP_LABEL, job.name)
        pod = builder.container(
            {"cpu": "4", "memory": "32Gi", GPU: job.gpus}, image="trainer:latest"
        ).obj()
        if native:  # spec.schedulingGroup.podGroupName
            ref = SchedulingGroupRef(pod_group_name=job.name)
            pod = attrs.evolve(pod, spec=attrs.evolve(pod.spec, scheduling_group=ref))
        pods.append(pod)
    return group, pods


async def run_job(
    cluster: ksched.InMemoryCluster, log: Log, job: Job, native: bool = False
) -> None:
    """Submit the job at its time, wait for the whole gang, train, then delete it."""
    await anyio.sleep(job.submit_at * log.seconds_per_minute)
    record = log.records[job.name]
    group, pods = job_objects(job, native)
    log.say(
        f"submit   {job.name}: {job.workers} workers x {job.gpus} GPU, "
        f"priority {job.priority}, runs {job.runs_for}m"
    )
    cluster.apply(group)
    for pod in pods:
        await cluster.add_pod(pod)
    for pod in pods:
        await cluster.wait_bound(pod.key)
    record.landed_at = log.minutes()
    placement = Counter(record.nodes[p.name] for p in pods)
    where = ", ".join(f"{node} x{count}" for node, count in sorted(placement.items()))
    log.say(f"landed   {job.name}: all {job.workers} workers bound on {where}")
    await anyio.sleep(job.runs_for * log.seconds_per_minute)
    for pod in pods:
        await cluster.delete_pod(pod.key)
    cluster.remove("SchedulingPodGroup" if native else "PodGroup", f"default/{job.name}")
    record.finished_at = log.minutes()
    log.say(f"finished {job.name}: {job.workers * job.gpus} GPUs free again")


async def main(
    jobs: Sequence[Job] = JOBS,
    print_line: Callable[[str], None] = print,
    native: bool = False,
    seconds_per_minute: float = SECONDS_PER_MINUTE,
) -> dict[str, JobRecord]:
    """Run every job to completion, on whatever clock the event loop has; returns what
    happened to each."""
    cluster = ksched.InMemoryCluster()
    start = anyio.current_time()
    log = Log(lambda: anyio.current_time() - start, print_line, seconds_per_minute)
    log.records = {job.name: JobRecord(job) for job in jobs}
    config = ksched.load_config(NATIVE_CONFIG if native else CONFIG)
    async with ksched.Scheduler.open(config, cluster, observer=log.observe, seed=1) as scheduler:
        await cluster.add(gpu_cluster())
        start = anyio.current_time()
        total = len(NODES) * GPUS_PER_NODE
        log.say(f"cluster  {len(NODES)} nodes x {GPUS_PER_NODE} GPU = {total} GPUs")
        async with anyio.create_task_group() as tg:
            for job in jobs:
                tg.start_soon(run_job, cluster, log, job, native)
        plugins = scheduler.frameworks["default-scheduler"].plugins
        if native:
            assert not scheduler.cache.sizes()["assumed_pods"]
        else:
            plugin = plugins["Coscheduling"]
            assert isinstance(plugin, Coscheduling)
            statuses = plugin.group_statuses()
            leftover = {k: v for k, v in statuses.items() if v["bound"] or v["waiting"]}
            assert not leftover, leftover
    print_line("")
    print_line(f"{'job':<14} {'prio':>4} {'gang':>8} {'submit':>7} {'landed':>7} {'waited':>7} "
               f"{'done':>6}  Permit waits/releases")  # fmt: skip
    for record in log.records.values():
        job = record.job
        assert record.landed_at is not None and record.finished_at is not None
        print_line(
            f"{job.name:<14} {job.priority:>4} {f'{job.workers}x{job.gpus}GPU':>8} "
            f"{job.submit_at:>6}m {record.landed_at:>6.0f}m "
            f"{record.landed_at - job.submit_at:>6.0f}m {record.finished_at:>5.0f}m  "
            f"{record.waits}/{record.releases}"
        )
    return log.records


def run_on_virtual_clock(
    print_line: Callable[[str], None] = print, native: bool = False, seed: int = 0
) -> dict[str, JobRecord]:
    """``main`` on trio's virtual clock, simultaneous tasks ordered by ``seed``."""
    clock = trio.testing.MockClock(autojump_threshold=0)
    with task_order_seeded(seed):
        return anyio.run(
            lambda: main(print_line=print_line, native=native),
            backend="trio",
            backend_options={"clock": clock},
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--native", action="store_true", help="scheduling.k8s.io PodGroups and GangScheduling"
    )
    parser.add_argument(
        "--real-time", action="store_true", help="run on asyncio's real clock instead"
    )
    args = parser.parse_args()
    if args.real_time:
        anyio.run(
            lambda: main(native=args.native, seconds_per_minute=REAL_SECONDS_PER_MINUTE),
            backend="asyncio",
        )
    else:
        run_on_virtual_clock(native=args.native)
