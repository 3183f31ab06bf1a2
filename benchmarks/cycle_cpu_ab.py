"""CPU time of the scheduling cycle proper (``schedule_pod``: PreFilter to select host)
per plain pod, two source trees A/B, interleaved.

SchedulingBasic's shape: N default nodes (4 cpu, 32Gi, 110 pods), 1000 resident pods, then
the measured pods, all of one template (they share one spec, as a workload's pods do). Each
run is its own process with ``PYTHONPATH`` at one tree's ``src``; the figure is the thread
CPU time spent inside ``schedule_pod`` (plain ``def`` plugins: nothing suspends it), so a
loaded machine inflates it far less than wall time. Also reported: thread CPU per measured
pod for the whole process (binding, events, queue included).

    python benchmarks/cycle_cpu_ab.py --base ../base/src --nodes 5000 --pods 3000 --rounds 4
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent / "src"


async def _measure(nodes: int, pods: int) -> dict[str, float]:
    import anyio
    import attrs

    import ksched
    from ksched.testing import make_node, make_pod

    cluster = ksched.InMemoryCluster()
    bound = 0

    def observe(event: ksched.SchedulingEvent) -> None:
        nonlocal bound
        if event.kind == "Bound":
            bound += 1

    def pod(name: str) -> ksched.Pod:
        meta = attrs.evolve(template.metadata, name=name, uid=f"default/{name}")
        return attrs.evolve(template, metadata=meta)

    template = make_pod("template").req(cpu="100m", memory="500Mi").obj()
    async with ksched.Scheduler.open(cluster=cluster, observer=observe, seed=1) as scheduler:
        for i in range(nodes):
            node = make_node(f"node-{i}").capacity(cpu="4", memory="32Gi", pods=110).obj()
            cluster.apply(node)
        for i in range(1000):
            cluster.apply(pod(f"init-{i}"))
        while bound < 1000:
            await anyio.sleep(0.01)
        spent = [0.0, 0]
        schedule_pod = scheduler.algorithm.schedule_pod

        async def timed(*args: Any, **kwargs: Any) -> Any:
            t = time.thread_time()
            result = await schedule_pod(*args, **kwargs)
            spent[0] += time.thread_time() - t
            spent[1] += 1
            return result

        scheduler.algorithm.schedule_pod = timed  # type: ignore[method-assign]
        bound = 0
        start = time.thread_time()
        for i in range(pods):
            cluster.apply(pod(f"pod-{i}"))
        while bound < pods:
            await anyio.sleep(0.005)
        total = time.thread_time() - start
    return {
        "schedulePodCpuUs": round(spent[0] / max(1, int(spent[1])) * 1e6, 1),
        "cpuPerPodUs": round(total / pods * 1e6, 1),
    }


def _child(nodes: int, pods: int) -> None:
    import anyio

    print(json.dumps(anyio.run(_measure, nodes, pods)))


def _run(src: str, nodes: int, pods: int) -> dict[str, Any]:
    load = os.getloadavg()[0]
    cmd = [sys.executable, __file__, "--child", "--nodes", str(nodes), "--pods", str(pods)]
    out = subprocess.run(
        cmd, env={**os.environ, "PYTHONPATH": src}, capture_output=True, check=True, text=True
    ).stdout
    return {"loadAverageBefore": round(load, 2), **json.loads(out)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base", default="", help="the A tree's src directory")
    parser.add_argument("--branch", default=str(HERE), help="the B tree's src directory")
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--out", default="", help="result file ('' for stdout only)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.nodes, args.pods)
        return
    if not args.base:
        parser.error("--base is required")
    trees = {"base": str(Path(args.base).resolve()), "branch": str(Path(args.branch).resolve())}
    runs: dict[str, list[dict[str, Any]]] = {"base": [], "branch": []}
    for r in range(args.rounds):
        for tree in ("base", "branch") if r % 2 == 0 else ("branch", "base"):
            run = _run(trees[tree], args.nodes, args.pods)
            runs[tree].append(run)
            print(f"round {r + 1} {tree}: {run}", file=sys.stderr, flush=True)
    summary: dict[str, Any] = {}
    for key in ("schedulePodCpuUs", "cpuPerPodUs"):
        med = {tree: statistics.median(run[key] for run in rs) for tree, rs in runs.items()}
        summary[key] = {
            tree: {
                "median": med[tree],
                "min": min(run[key] for run in rs),
                "max": max(run[key] for run in rs),
            }
            for tree, rs in runs.items()
        } | {"ratioBaseOverBranch": round(med["base"] / med["branch"], 2)}
    result = {
        "workload": f"SchedulingBasic {args.nodes} nodes, 1000 resident + {args.pods} pods",
        "python": platform.python_version(),
        "backend": "asyncio",
        "rounds": args.rounds,
        "summary": summary,
        "runs": runs,
    }
    text = json.dumps(result, indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
