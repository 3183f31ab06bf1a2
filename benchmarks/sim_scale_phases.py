"""``ksched simulate`` phase by phase, two source trees A/B, interleaved (alternating order).

Each run is its own child process with ``PYTHONPATH`` at one tree's ``src``; it does what
``ksched simulate --output table`` does for one of ``sim_scale.py``'s shapes and reports the
CPU seconds of each phase: reading the inputs, creating the objects in the cluster,
scheduling (until every pod settled), building the report, rendering the table; and the
peak RSS. Medians, ranges and the base/branch ratios are what to quote on a shared machine.

    python benchmarks/sim_scale_phases.py --base ../base/src --shape mid --rounds 3
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from sim_scale import child_ab

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


def main() -> None:
    child_ab(CHILD, KEYS, default_shape="mid", description=__doc__)


if __name__ == "__main__":
    main()
