"""Run every workload of kube-scheduler's scheduler_perf configuration files with ksched.

Each upstream file copied under ``workloads/`` is read as is; every workload is planned here
first (a workload ksched cannot run says why, and does not start), then run in its own
process (``python -m ksched.bench``) with a timeout. Prints one row per workload: file,
test/workload, SchedulingThroughput average (pods/s), upstream's threshold, and ok / below /
no threshold / cannot run (reason) / timeout. Results go to
``benchmarks/results/upstream_configs.json``.

    python benchmarks/upstream_configs.py --max-nodes 500
    python benchmarks/upstream_configs.py --labels performance --max-nodes 5000
    python benchmarks/upstream_configs.py --name EventHandling --timeout 300
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

from ksched.bench import WorkloadError, load_test_cases, plan

HERE = Path(__file__).resolve().parent
WORKLOADS = HERE / "workloads"
RESULTS = HERE / "results" / "upstream_configs.json"

FILES = [
    "misc/performance-config.yaml",
    "affinity/performance-config.yaml",
    "topology_spreading/performance-config.yaml",
    "default_preemption/performance-config.yaml",
    "event_handling/performance-config.yaml",
    "volume/performance-config.yaml",
    "dra/performance-config.yaml",
    "gangscheduling/performance-config.yaml",
]


def wanted(labels: tuple[str, ...], selectors: list[str]) -> bool:
    """Upstream's label filter: ``x`` must be present, ``-x`` must be absent."""
    for sel in selectors:
        if sel.startswith("-"):
            if sel[1:] in labels:
                return False
        elif sel.startswith("+"):
            if sel[1:] not in labels:
                return False
        elif sel and sel not in labels:
            return False
    return True


def short(reason: str) -> str:
    """``reason`` with paths relative to ``workloads/``."""
    return reason.replace(f"{WORKLOADS}/", "").replace("misc/../", "").replace("../", "")


def _threshold(row: dict[str, Any]) -> str:
    metric = row.get("metricThreshold")
    if metric is not None:
        bound = "≤" if metric["expectLower"] else "≥"
        return f"{metric['name']} {metric['dataBucket']} {bound} {metric['threshold']:g} ms"
    return str(row.get("threshold") or "")


def run_one(file: Path, name: str, backend: str, timeout: float) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "ksched.bench", str(file), "--name", name]
    cmd += ["--output", "json", "--backend", backend]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "reason": f"no result within {timeout:g}s"}
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit status {done.returncode}"]
        reason = short(lines[-1].removeprefix("ksched bench: error: ").removeprefix(f"{name}: "))
        return {"status": "cannot run", "reason": reason}
    result = json.loads(done.stdout)
    average = float(result["throughput"]["average"])
    threshold = result.get("threshold")
    status = ("ok" if average >= threshold else "below") if threshold else "no threshold"
    metric = result.get("thresholdMetric")
    if metric is not None:
        data = metric.get("data")
        if not data:
            status = "metric not observed"
        else:
            value = data[metric["dataBucket"]]
            ok = (
                value <= metric["threshold"]
                if metric["expectLower"]
                else value >= metric["threshold"]
            )
            status = f"{'ok' if ok else 'missed'}: {metric['dataBucket']} {value:.2f} ms"
    return {"status": status, "podsPerSecond": average, "result": result}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", default="", help="comma-separated: x (required), -x (not)")
    parser.add_argument("--max-nodes", type=int, default=500, metavar="N")
    parser.add_argument("--name", default="", help="only TEST[/WORKLOAD] names containing this")
    parser.add_argument("--file", action="append", help="only these files (relative paths)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per workload")
    parser.add_argument("--backend", default="asyncio", choices=("asyncio", "trio", "uvloop"))
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    selectors = [s.strip() for s in args.labels.split(",") if s.strip()]

    rows: list[dict[str, Any]] = []
    skipped = 0
    for rel in args.file or FILES:
        path = WORKLOADS / rel
        try:
            cases = load_test_cases(path)
        except WorkloadError as exc:
            rows.append({"file": rel, "workload": "*", "status": "cannot run", "reason": str(exc)})
            continue
        for case in cases:
            for workload in case.workloads:
                name = f"{case.name}/{workload.name}"
                if args.name not in name or not wanted(case.labels + workload.labels, selectors):
                    continue
                row: dict[str, Any] = {
                    "file": rel,
                    "workload": name,
                    "threshold": workload.threshold,
                }
                if workload.metric_threshold is not None:
                    row["metricThreshold"] = workload.metric_threshold.to_json()
                try:
                    planned = plan(case, workload)
                except WorkloadError as exc:
                    reason = short(str(exc).removeprefix(f"{name}: "))
                    rows.append({**row, "status": "cannot run", "reason": reason})
                    print(f"{rel} {name}: cannot run: {reason}", file=sys.stderr)
                    continue
                if planned.nodes > args.max_nodes:
                    skipped += 1
                    continue
                row["nodes"] = planned.nodes
                row.update(run_one(path, name, args.backend, args.timeout))
                rows.append(row)
                shown = row.get("podsPerSecond")
                print(
                    f"{rel} {name}: {row['status']}"
                    + (f" {shown:.1f} pods/s" if shown is not None else "")
                    + (f" ({row['reason']})" if "reason" in row else ""),
                    file=sys.stderr,
                )

    print("| file | test/workload | nodes | pods/s | threshold | result |")
    print("| --- | --- | ---: | ---: | ---: | --- |")
    for row in rows:
        pods = row.get("podsPerSecond")
        status = row["status"] + (f" ({row['reason']})" if "reason" in row else "")
        print(
            f"| {row['file'].split('/')[0]} | {row['workload']} | {row.get('nodes', '')} | "
            f"{'' if pods is None else f'{pods:.1f}'} | {_threshold(row)} | "
            f"{status} |"
        )
    print(f"\n{skipped} workloads above --max-nodes {args.max_nodes} not run.")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(
        json.dumps(
            {
                "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                "python": platform.python_version(),
                "machine": platform.machine(),
                "backend": args.backend,
                "maxNodes": args.max_nodes,
                "labels": selectors,
                "rows": rows,
            },
            indent=2,
        )
        + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
