"""Compile and evaluation cost of a DRA device selector in the two CEL engines on PyPI.

Compares ``common-expression-language`` (Rust bindings, module ``cel``) with
``cel-python`` (pure Python, module ``celpy``) on the selector a GPU DeviceClass uses,
with ``quantity()`` and ``compareTo`` supplied as functions (neither engine has them).
Writes benchmarks/results/cel.json.

    pip install 'ksched[bench]'    # brings cel-python
    python benchmarks/cel_engines.py [--evals N]
"""

from __future__ import annotations

import argparse
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
    functions = {"quantity": quantity, "compareTo": compare_to}

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--evals", type=int, default=2000)
    args = parser.parse_args()
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
