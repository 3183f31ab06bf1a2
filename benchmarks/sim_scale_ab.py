"""``ksched simulate`` at scale, two source trees A/B, interleaved (alternating order).

Each run is its own ``ksched`` process with ``PYTHONPATH`` pointing at one tree's ``src``;
the shapes and the measurement are ``sim_scale.py``'s. Medians and ratios are what to quote
on a shared machine.

    python benchmarks/sim_scale_ab.py --base ../base/src --shape large --outputs table --rounds 2
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from sim_scale import SHAPES, child_env, generate, measure, warm, write_ab_result

HERE = Path(__file__).resolve().parent.parent / "src"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base", required=True, help="the A tree's src directory")
    parser.add_argument("--branch", default=str(HERE), help="the B tree's src directory")
    parser.add_argument("--shape", choices=list(SHAPES), default="small")
    parser.add_argument("--outputs", default="table,json")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default="", help="result file ('' for stdout only)")
    args = parser.parse_args()
    trees = {"base": str(Path(args.base).resolve()), "branch": str(Path(args.branch).resolve())}
    ksched = str(Path(sys.executable).with_name("ksched"))
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {}
    with tempfile.TemporaryDirectory(prefix="sim-ab-") as tmp:
        files = generate(Path(tmp), **SHAPES[args.shape])
        base = [ksched, "simulate", *(a for f in files for a in ("-f", str(f)))]
        envs = {tree: child_env(Path(tmp) / tree, src) for tree, src in trees.items()}
        for tree, env in envs.items():
            warm([ksched], Path(tmp) / tree, env)
        for r in range(args.rounds):
            order = ["base", "branch"] if r % 2 == 0 else ["branch", "base"]
            for output in args.outputs.split(","):
                for tree in order:
                    run = measure([*base, "--output", output], Path(tmp) / "out", envs[tree])
                    runs.setdefault(output, {}).setdefault(tree, []).append(run)
                    print(f"{args.shape} {output} {tree}: {run}", file=sys.stderr, flush=True)
    summary: dict[str, Any] = {}
    for output, by_tree in runs.items():
        med = {
            tree: {
                key: statistics.median(run[key] for run in rs)
                for key in ("wallSeconds", "cpuSeconds", "peakRssMiB")
            }
            | {
                "wallRange": [min(r["wallSeconds"] for r in rs), max(r["wallSeconds"] for r in rs)],
                "cpuRange": [min(r["cpuSeconds"] for r in rs), max(r["cpuSeconds"] for r in rs)],
            }
            for tree, rs in by_tree.items()
        }
        med["cpuRatioBaseOverBranch"] = round(
            med["base"]["cpuSeconds"] / med["branch"]["cpuSeconds"], 2
        )
        summary[output] = med
    write_ab_result(args, summary, runs)


if __name__ == "__main__":
    main()
