"""``ksched simulate`` phase by phase, two source trees A/B, interleaved (alternating order).

Each run is its own child process with ``PYTHONPATH`` at one tree's ``src``; it does what
``ksched simulate --output table`` does for one of ``sim_scale.py``'s shapes and reports the
CPU seconds of each phase: reading the inputs, creating the objects in the cluster,
scheduling (until every pod settled), building the report, rendering the table; and the
peak RSS. Medians, ranges and the base/branch ratios are what to quote on a shared machine.

    python benchmarks/sim_scale_phases.py --base ../base/src --shape mid --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from sim_scale import SHAPES, generate, machine_header, write_result

HERE = Path(__file__).resolve().parent.parent / "src"

CHILD = """
import io, json, resource, sys, time
from rich.console import Console
from ksched._gc import few_collections, kept_for_the_run
from ksched.cli._inputs import load_inputs
from ksched.cli._render import render_report
from ksched.simulate import _runner, run_scenario

T = time.process_time
out = {}
create, pod_reports = _runner._Run.create, _runner._Run.pod_reports

def timed_create(self, objects):
    start = T()
    create(self, objects)
    out["createCpuSeconds"] = out.get("createCpuSeconds", 0.0) + T() - start
    out["_scheduling"] = T()

def first_report(self):
    if "_scheduling" in out:
        out["scheduleCpuSeconds"] = T() - out.pop("_scheduling")
    return pod_reports(self)

_runner._Run.create, _runner._Run.pod_reports = timed_create, first_report
with few_collections():
    start = T()
    with kept_for_the_run():
        scenario = load_inputs(sys.argv[1:])
    out["loadCpuSeconds"] = T() - start
    start = T()
    report = run_scenario(scenario, events=False)
    out["reportCpuSeconds"] = (
        T() - start - out["createCpuSeconds"] - out["scheduleCpuSeconds"]
    )
    start = T()
    render_report(Console(file=io.StringIO(), width=120), report, rows=100)
    out["renderCpuSeconds"] = T() - start
out["totalCpuSeconds"] = T()
out["peakRssMiB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""

KEYS = (
    "loadCpuSeconds",
    "createCpuSeconds",
    "scheduleCpuSeconds",
    "reportCpuSeconds",
    "renderCpuSeconds",
    "totalCpuSeconds",
    "peakRssMiB",
)


def _run(src: str, files: list[Path]) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": src}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *map(str, files)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return {k: round(v, 2) for k, v in json.loads(done.stdout).items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base", required=True, help="the A tree's src directory")
    parser.add_argument("--branch", default=str(HERE), help="the B tree's src directory")
    parser.add_argument("--shape", choices=list(SHAPES), default="mid")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default="", help="result file ('' for stdout only)")
    args = parser.parse_args()
    trees = {"base": str(Path(args.base).resolve()), "branch": str(Path(args.branch).resolve())}
    runs: dict[str, list[dict[str, float]]] = {"base": [], "branch": []}
    with tempfile.TemporaryDirectory(prefix="sim-phases-") as tmp:
        files = generate(Path(tmp), **SHAPES[args.shape])
        for r in range(args.rounds):
            for tree in ["base", "branch"] if r % 2 == 0 else ["branch", "base"]:
                run = _run(trees[tree], files)
                runs[tree].append(run)
                print(f"{args.shape} {tree}: {run}", file=sys.stderr, flush=True)
    medians: dict[str, Any] = {
        tree: {
            key: {
                "median": statistics.median(r[key] for r in rs),
                "range": [min(r[key] for r in rs), max(r[key] for r in rs)],
            }
            for key in KEYS
        }
        for tree, rs in runs.items()
    }
    medians["ratioBaseOverBranch"] = {
        key: round(medians["base"][key]["median"] / medians["branch"][key]["median"], 2)
        for key in KEYS
        if medians["branch"][key]["median"]
    }
    result = {
        **machine_header(),
        "shape": {"name": args.shape, **SHAPES[args.shape]},
        "rounds": args.rounds,
        "medians": medians,
        "runs": runs,
    }
    write_result(result, args.out)


if __name__ == "__main__":
    main()
