"""``ksched simulate``'s work around the engine at scale, two source trees A/B, interleaved.

Reading the inputs (``load_inputs``: parse, check, read) and creating them in the embedded
cluster (``_Run.create``, the scheduler subscribed but not yet popping) for one of
``sim_scale.py``'s shapes, each in its own child process with ``PYTHONPATH`` at one tree's
``src``. CPU seconds of each phase and the child's peak RSS; medians, ranges and the
base/branch ratio are what to quote on a shared machine.

    python benchmarks/sim_scale_load.py --base ../base/src --shape large --rounds 3
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
    parser.add_argument("--shape", choices=list(SHAPES), default="large")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default="", help="result file ('' for stdout only)")
    args = parser.parse_args()
    trees = {"base": str(Path(args.base).resolve()), "branch": str(Path(args.branch).resolve())}
    runs: dict[str, list[dict[str, float]]] = {"base": [], "branch": []}
    with tempfile.TemporaryDirectory(prefix="sim-load-") as tmp:
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
