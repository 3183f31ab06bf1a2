"""``ksched simulate``'s work around the engine at scale, two source trees A/B, interleaved.

Reading the inputs (``load_inputs``: parse, check, read) and creating them in the embedded
cluster (``_Run.create``, the scheduler subscribed but not yet popping) for one of
``sim_scale.py``'s shapes, each in its own child process with ``PYTHONPATH`` at one tree's
``src``. CPU seconds of each phase and the child's peak RSS; medians, ranges and the
base/branch ratio are what to quote on a shared machine.

    python benchmarks/sim_scale_load.py --base ../base/src --shape large --rounds 3
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from sim_scale import child_ab

CHILD = """
import gc, json, resource, sys, time
import anyio, trio.testing
from ksched.cli._inputs import load_inputs
from ksched.simulate._runner import _Run

gc.set_threshold(200_000, 30, 30)  # as ksched simulate runs
start = time.process_time()
scenario = load_inputs(sys.argv[1:])
loaded = time.process_time()
out = {"loadCpuSeconds": loaded - start}

async def main():
    run = _Run(scenario, 0, None, events=False)
    run.t0 = anyio.current_time()
    async with anyio.create_task_group() as tg:
        await tg.start(run.scheduler.serve)
        await tg.start(run.controllers.serve)
        begin = time.process_time()
        run.create(scenario.objects)
        out["createCpuSeconds"] = time.process_time() - begin
        tg.cancel_scope.cancel()

clock = trio.testing.MockClock(autojump_threshold=0)
anyio.run(main, backend="trio", backend_options={"clock": clock})
out["peakRssMiB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""

KEYS = ("loadCpuSeconds", "createCpuSeconds", "peakRssMiB")


def main() -> None:
    child_ab(CHILD, KEYS, default_shape="large", description=__doc__)


if __name__ == "__main__":
    main()
