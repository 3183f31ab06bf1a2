"""``ksched simulate`` at cluster scale: wall time, peak RSS and output size per output form.

Two shapes of plain manifests (Nodes and Pods, the default profile), generated into a
temporary directory and run through the ``ksched`` command in a child process each:

- ``small``: 1000 nodes (4 cpu) x 5000 pods (100m): multi-document YAML; every pod bound;
- ``mid`` (for profiles, not in the default set): 10 000 nodes x 20 000 pods, as ``large``;
- ``large``: 50 000 nodes (4 cpu) x 100 000 pods (2 cpu): a JSON ``List`` each, as
  ``kubectl get -o json`` writes them; every pod bound, two per node.

Each run is measured as the operating system sees it (``os.wait4`` of the child: wall time,
peak RSS); stdout goes to a file whose size is reported. Every child writes and reads its
bytecode in one cache directory per source tree (``PYTHONPYCACHEPREFIX``), warmed by a tiny
run first: a run measures what a user sees on a second run, also where
``PYTHONDONTWRITEBYTECODE`` is set (it would make every run compile every module).

    python benchmarks/sim_scale.py                       # both shapes, table and json
    python benchmarks/sim_scale.py --shape small --explain-all
    python benchmarks/sim_scale.py --shape large --outputs json
    python benchmarks/sim_scale.py --shape mid --outputs json --profile mid.prof --out ''
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SHAPES: dict[str, dict[str, Any]] = {
    "small": {"nodes": 1000, "pods": 5000, "node_cpu": "4", "pod_cpu": "100m", "form": "yaml"},
    "mid": {"nodes": 10_000, "pods": 20_000, "node_cpu": "4", "pod_cpu": "2", "form": "json"},
    "large": {"nodes": 50_000, "pods": 100_000, "node_cpu": "4", "pod_cpu": "2", "form": "json"},
}
RESULTS = Path(__file__).parent / "results" / "sim_scale.json"
SRC = Path(__file__).resolve().parent.parent / "src"


def _node(i: int, cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": f"node-{i}",
            "labels": {"topology.kubernetes.io/zone": f"zone-{i % 10}"},
        },
        "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}},
    }


def _pod(i: int, cpu: str) -> dict[str, Any]:
    container = {
        "name": "c",
        "image": "registry.k8s.io/pause:3.10",
        "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}},
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"pod-{i}", "namespace": "default"},
        "spec": {"containers": [container]},
    }


def _write(path: Path, objects: Iterator[dict[str, Any]], form: str) -> None:
    with path.open("w") as f:
        if form == "yaml":  # multi-document YAML, one flow-style document per line
            for obj in objects:
                f.write("---\n" + json.dumps(obj) + "\n")
            return
        f.write('{"apiVersion": "v1", "kind": "List", "items": [\n')  # kubectl get -o json
        f.write(",\n".join(json.dumps(obj) for obj in objects))
        f.write("\n]}\n")


def generate(
    directory: Path, nodes: int, pods: int, node_cpu: str, pod_cpu: str, form: str
) -> list[Path]:
    """Write the nodes and the pods, as multi-document YAML or as a JSON ``List``."""
    suffix = "yaml" if form == "yaml" else "json"
    files = [directory / f"nodes.{suffix}", directory / f"pods.{suffix}"]
    _write(files[0], (_node(i, node_cpu) for i in range(nodes)), form)
    _write(files[1], (_pod(i, pod_cpu) for i in range(pods)), form)
    return files


def child_env(directory: Path, src: str = "") -> dict[str, str]:
    """The environment of a measured child: ``PYTHONPATH`` at ``src`` (if given) and a
    bytecode cache of its own in ``directory`` (written even under PYTHONDONTWRITEBYTECODE)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(directory / "pycache")
    if src:
        env["PYTHONPATH"] = src
    return env


def warm(command: list[str], directory: Path, env: dict[str, str]) -> None:
    """Fill ``env``'s bytecode cache: ``command`` simulates a tiny shape once per output."""
    tiny = directory / "warm"
    tiny.mkdir(parents=True, exist_ok=True)
    nodes = generate(tiny, nodes=2, pods=2, node_cpu="4", pod_cpu="1", form="json")[0]
    pods = generate(tiny, nodes=2, pods=2, node_cpu="4", pod_cpu="1", form="yaml")[1]
    files = [nodes, pods]  # both readers
    for output in ("table", "json"):
        subprocess.run(
            [*command, "simulate", *(a for f in files for a in ("-f", str(f))), "-o", output],
            env=env,
            capture_output=True,
            check=True,
        )


def measure(argv: list[str], out: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run ``argv`` with stdout to ``out``; wall seconds, peak RSS (MiB), output bytes."""
    load = os.getloadavg()[0]  # the machine is shared: wall time is only as good as this
    with out.open("wb") as stdout:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.PIPE, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: exit {proc.returncode}\n{err}")
    return {
        "loadAverageBefore": round(load, 2),
        "wallSeconds": round(wall, 2),
        "cpuSeconds": round(usage.ru_utime + usage.ru_stime, 2),
        "peakRssMiB": round(usage.ru_maxrss / 1024, 1),
        "outputBytes": out.stat().st_size,
    }


def run_shape(
    name: str, outputs: list[str], explain_all: bool, profile: str = ""
) -> dict[str, Any]:
    shape = SHAPES[name]
    command = [str(Path(sys.executable).with_name("ksched"))]
    if profile:  # cProfile in the child; its times are inflated, compare shares only
        command = [sys.executable, "-m", "cProfile", "-o", profile, "-m", "ksched.cli._main"]
    result: dict[str, Any] = {**shape, "runs": {}}
    with tempfile.TemporaryDirectory(prefix="sim-scale-") as tmp:
        directory = Path(tmp)
        files = generate(directory, **shape)
        env = child_env(directory)
        warm(command, directory, env)
        base = [*command, "simulate", *(a for f in files for a in ("-f", str(f)))]
        forms = [(o, ["--output", o]) for o in outputs]
        if explain_all:
            forms.append(("jsonl --explain all", ["--output", "jsonl", "--explain", "all"]))
            forms.append(("json --explain all", ["--output", "json", "--explain", "all"]))
        for label, extra in forms:
            print(f"{name}: {label} ...", file=sys.stderr, flush=True)
            run = measure([*base, *extra], directory / "out", env)
            result["runs"][label] = run
            print(f"{name}: {label}: {run}", file=sys.stderr, flush=True)
    runs = result["runs"]
    if "table" in runs and "json" in runs:
        result["jsonOverTable"] = round(
            runs["json"]["wallSeconds"] / runs["table"]["wallSeconds"], 2
        )
    return result


def machine_header() -> dict[str, Any]:
    """Python version, machine and CPU count, at the head of every result file."""
    return {"python": sys.version.split()[0], "machine": platform.machine(), "cpus": os.cpu_count()}


def write_result(result: dict[str, Any], out: str) -> None:
    """Print ``result`` as JSON and write it to ``out`` (unless empty)."""
    text = json.dumps(result, indent=2)
    if out:
        Path(out).write_text(text + "\n")
    print(text)


def write_ab_result(args: argparse.Namespace, medians: Any, runs: Any) -> None:
    """An A/B run's result file: the machine, the shape (``args.shape``), the rounds, the
    medians and every run."""
    result = {
        **machine_header(),
        "shape": {"name": args.shape, **SHAPES[args.shape]},
        "rounds": args.rounds,
        "medians": medians,
        "runs": runs,
    }
    write_result(result, args.out)


def child_ab(child: str, keys: tuple[str, ...], *, default_shape: str, description: str) -> None:
    """An in-process A/B of two source trees: ``child`` (a ``python -c`` program given the
    shape's manifest files, printing one JSON object of ``keys``) runs in its own process
    per tree and round, the trees alternating; medians, ranges and base/branch ratios."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--base", required=True, help="the A tree's src directory")
    parser.add_argument("--branch", default=str(SRC), help="the B tree's src directory")
    parser.add_argument("--shape", choices=list(SHAPES), default=default_shape)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default="", help="result file ('' for stdout only)")
    args = parser.parse_args()
    trees = {"base": str(Path(args.base).resolve()), "branch": str(Path(args.branch).resolve())}
    runs: dict[str, list[dict[str, float]]] = {"base": [], "branch": []}
    ksched = [str(Path(sys.executable).with_name("ksched"))]
    with tempfile.TemporaryDirectory(prefix="sim-ab-") as tmp:
        files = generate(Path(tmp), **SHAPES[args.shape])
        envs = {tree: child_env(Path(tmp) / tree, src) for tree, src in trees.items()}
        for tree, env in envs.items():
            warm(ksched, Path(tmp) / tree, env)
        for r in range(args.rounds):
            for tree in ["base", "branch"] if r % 2 == 0 else ["branch", "base"]:
                done = subprocess.run(
                    [sys.executable, "-c", child, *map(str, files)],
                    env=envs[tree],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                run = {k: round(v, 2) for k, v in json.loads(done.stdout).items()}
                runs[tree].append(run)
                print(f"{args.shape} {tree}: {run}", file=sys.stderr, flush=True)
    medians: dict[str, Any] = {
        tree: {
            key: {
                "median": statistics.median(r[key] for r in rs),
                "range": [min(r[key] for r in rs), max(r[key] for r in rs)],
            }
            for key in keys
        }
        for tree, rs in runs.items()
    }
    medians["ratioBaseOverBranch"] = {
        key: round(medians["base"][key]["median"] / medians["branch"][key]["median"], 2)
        for key in keys
        if medians["branch"][key]["median"]
    }
    write_ab_result(args, medians, runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--shape", choices=[*SHAPES, "all"], default="all")
    parser.add_argument("--outputs", default="table,json", help="comma-separated output forms")
    parser.add_argument(
        "--explain-all", action="store_true", help="also run --explain all --output jsonl"
    )
    parser.add_argument("--out", default=str(RESULTS), help="result file ('' for none)")
    parser.add_argument(
        "--profile", default="", metavar="FILE.prof", help="run the child under cProfile"
    )
    args = parser.parse_args()
    shapes = ["small", "large"] if args.shape == "all" else [args.shape]
    outputs = [o for o in args.outputs.split(",") if o]
    result: dict[str, Any] = machine_header()
    if args.out and Path(args.out).exists():
        previous = json.loads(Path(args.out).read_text())
        result["shapes"] = previous.get("shapes", {})
    result.setdefault("shapes", {})
    for name in shapes:
        result["shapes"][name] = run_shape(name, outputs, args.explain_all, args.profile)
    write_result(result, args.out)


if __name__ == "__main__":
    main()
