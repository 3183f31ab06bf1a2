"""Compile and evaluation cost of a DRA device selector in the two CEL engines on PyPI.

Compares ``common-expression-language`` (Rust bindings, module ``cel``) with
``cel-python`` (pure Python, module ``celpy``) on the selector a GPU DeviceClass uses,
with ``quantity()`` and ``compareTo`` supplied as functions (neither engine has them).
Writes benchmarks/results/cel.json.

``--ksched`` times ksched's own selectors instead (``compile_selector(e).matches``): the
GPU selector above, one with ``cel.bind`` and string functions, one with ``sets``.
``--ab-against TREE`` runs that, each run in its own process, alternately with TREE's
``src`` first on the path and with this tree's, and writes benchmarks/results/cel_ab.json.

    pip install 'ksched[bench]'    # brings cel-python
    python benchmarks/cel_engines.py [--evals N]
    python benchmarks/cel_engines.py --ab-against /tmp/base [--rounds 5]
"""

from __future__ import annotations

import argparse
import functools
import json
import platform
import sys
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

EXPR = (
    'device.attributes["gpu.example.com"].model == "a100" && '
    'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0'
)
GI = 1024**3


def _per_call(fn: Callable[[], Any], n: int) -> float:
    fn()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def _cpu_per_call(fn: Callable[[], Any], n: int) -> float:
    fn()
    start = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - start) / n


def _rust(evals: int) -> dict[str, Any]:
    import cel

    def quantity(text: str) -> dict[str, int]:
        return {"__q": int(text.removesuffix("Gi")) * GI * 1000}

    def compare_to(a: dict[str, int], b: dict[str, int]) -> int:
        return (a["__q"] > b["__q"]) - (a["__q"] < b["__q"])

    device = {
        "driver": "gpu.example.com",
        "attributes": {"gpu.example.com": {"model": "a100"}},
        "capacity": {"gpu.example.com": {"memory": quantity("80Gi")}},
    }
    program = cel.compile(EXPR)

    def evaluate() -> Any:
        ctx = cel.Context(
            variables={"device": device},
            functions={"quantity": quantity, "compareTo": compare_to},
        )
        return program.execute(ctx)

    assert evaluate() is True
    return {
        "package": "common-expression-language",
        "version": metadata.version("common-expression-language"),
        "compile_us": _per_call(lambda: cel.compile(EXPR), 200) * 1e6,
        "eval_us": _per_call(evaluate, evals) * 1e6,
    }


def _pure(evals: int) -> dict[str, Any]:
    import celpy
    from celpy import celtypes

    class Quantity:
        def __init__(self, milli: int) -> None:
            self.milli = milli

    def quantity(text: Any) -> Quantity:
        return Quantity(int(str(text).removesuffix("Gi")) * GI * 1000)

    def compare_to(a: Quantity, b: Quantity) -> Any:
        return celtypes.IntType((a.milli > b.milli) - (a.milli < b.milli))

    s = celtypes.StringType
    device = celtypes.MapType(
        {
            s("driver"): s("gpu.example.com"),
            s("attributes"): celtypes.MapType(
                {s("gpu.example.com"): celtypes.MapType({s("model"): s("a100")})}
            ),
            s("capacity"): celtypes.MapType(
                {s("gpu.example.com"): celtypes.MapType({s("memory"): quantity("80Gi")})}
            ),
        }
    )
    env = celpy.Environment()
    functions: dict[str, Any] = {"quantity": quantity, "compareTo": compare_to}

    def compile_() -> Any:
        return env.program(env.compile(EXPR), functions=functions)

    program = compile_()
    assert bool(program.evaluate({"device": device})) is True
    return {
        "package": "cel-python",
        "version": metadata.version("cel-python"),
        "compile_us": _per_call(compile_, 20) * 1e6,
        "eval_us": _per_call(lambda: program.evaluate({"device": device}), evals) * 1e6,
    }


KSCHED_SELECTORS = {
    "gpu": EXPR,
    "bind": (
        'cel.bind(gpu, device.attributes["gpu.example.com"], gpu.model == "a100" && '
        'gpu.family.lowerAscii().startsWith("amp"))'
    ),
    "sets": 'sets.intersects([device.attributes["gpu.example.com"].model], ["a100", "h100"])',
}


def _ksched(evals: int) -> dict[str, float | None]:
    """Microseconds per ``matches`` of each selector, wall and CPU (None: it does not
    compile here)."""
    from fractions import Fraction

    from ksched.api import CelError, Device, DeviceAttribute, compile_selector

    device = Device(
        name="gpu-0",
        attributes={"model": DeviceAttribute("a100"), "family": DeviceAttribute("Ampere")},
        capacity={"memory": Fraction(80 * GI)},
    )
    out: dict[str, float | None] = {}
    for name, expression in KSCHED_SELECTORS.items():
        try:
            selector = compile_selector(expression)
        except CelError:
            out[name] = None
            continue
        assert selector.matches(device, "gpu.example.com") is True
        call = functools.partial(selector.matches, device, "gpu.example.com")
        # The best of five batches: the other jobs on a loaded machine only add time.
        out[name] = min(_per_call(call, evals // 5) for _ in range(5)) * 1e6
        out[f"{name}_cpu"] = min(_cpu_per_call(call, evals // 5) for _ in range(5)) * 1e6
    return out


def _ab(base: Path, rounds: int, evals: int) -> None:
    """Interleaved A/B of ``_ksched``: A = ``base``'s src, B = this tree, each run in
    its own process, the order alternating from round to round."""
    import os
    import statistics
    import subprocess
    import tempfile

    runs: dict[str, list[dict[str, Any]]] = {"A": [], "B": []}
    for round_ in range(rounds):
        for label in ("A", "B") if round_ % 2 == 0 else ("B", "A"):  # ABBA: no order bias
            env = dict(os.environ)
            if label == "A":
                env["PYTHONPATH"] = str(base / "src")
            with tempfile.TemporaryFile() as out:
                proc = subprocess.Popen(
                    [sys.executable, __file__, "--ksched", "--evals", str(evals)],
                    stdout=out,
                    env=env,
                )
                _, status, usage = os.wait4(proc.pid, 0)
                assert status == 0
                out.seek(0)
                result = json.loads(out.read())
            result["cpu_s"] = usage.ru_utime + usage.ru_stime
            runs[label].append(result)

    def summary(label: str, key: str) -> dict[str, float] | None:
        values = [r[key] for r in runs[label] if r.get(key) is not None]
        if not values:
            return None
        return {"median": statistics.median(values), "min": min(values), "max": max(values)}

    report: dict[str, Any] = {"rounds": rounds, "evals": evals, "python": sys.version.split()[0]}
    keys = [k for name in KSCHED_SELECTORS for k in (name, f"{name}_cpu")]
    for key in [*keys, "cpu_s"]:
        a, b = summary("A", key), summary("B", key)
        report[key] = {
            "A": a,
            "B": b,
            "ratio_B_over_A": b["median"] / a["median"] if a and b else None,
        }
        print(f"{key:6} A {a}  B {b}")
    path = Path(__file__).parent / "results" / "cel_ab.json"
    path.write_text(json.dumps(report, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--evals", type=int, default=2000)
    parser.add_argument("--ksched", action="store_true", help="time ksched's selectors (JSON)")
    parser.add_argument("--ab-against", type=Path, help="a baseline tree for an A/B run")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if args.ksched:
        print(json.dumps(_ksched(args.evals)))
        return
    if args.ab_against is not None:
        _ab(args.ab_against, args.rounds, args.evals)
        return
    results = [_rust(args.evals), _pure(max(args.evals // 10, 50))]
    out = {
        "expression": EXPR,
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "engines": results,
    }
    path = Path(__file__).parent / "results" / "cel.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    for r in results:
        print(
            f"{r['package']:28} {r['version']:8} compile {r['compile_us']:9.1f} us"
            f"   eval {r['eval_us']:8.1f} us"
        )


if __name__ == "__main__":
    main()
