"""The worst per-object cost of reading hostile objects: the goal is <= 10 ms each.

A fuzzed set (fixed seed) of Pods and Nodes an attacker could store through the API
server or hand to ``ksched simulate``: huge exponents and long digit strings in
quantities, deep nesting in fields ksched does not know, many containers, ports,
tolerations, affinity terms and huge label maps (within the apiserver's limits: 256 KiB
of annotations, 1.5 MiB per object). Each object is timed through what the connector
does with a watch event (``validate_and_read`` of decoded JSON), what ``ksched simulate`` does
(``read_manifest``, strict and not), and the requests sum the scheduler counts
(``pod_requests``); the figure is the median of ``--repeat`` runs of one object, the
report its worst object per family. Runs are cold (the memos of bodies read emptied
before each: an attacker varies every object); the memo hit, what the next object of one
template costs, is reported beside them.

The loop stall: how long the event loop cannot run while the reflector reads one watch
event of the object (decode, validate, read), the longest gap between the turns of a task
that only yields, on the asyncio loop; as the reflector does it (a worker thread for events
of ``OFF_LOOP_BYTES`` or more) and all on the loop. Wall time, median of ``--repeat``.

    python benchmarks/hostile_objects.py [--count 40] [--repeat 5] [--out FILE]
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx

from ksched import ManifestError
from ksched.api import read_manifest, validate_and_read
from ksched.api._resources import pod_requests
from ksched.api._validation import forget_read_bodies
from ksched.kube import RESOURCES, KubeClient, Reflector, TokenBucket
from ksched.kube._reflector import OFF_LOOP_BYTES

GOAL_MS = 10.0
Family = Callable[[random.Random, int], dict[str, Any]]


def _pod(name: str, containers: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": containers, **spec},
    }


def _container(
    i: int, requests: dict[str, Any], limits: dict[str, Any] | None = None
) -> dict[str, Any]:
    resources: dict[str, Any] = {"requests": requests}
    if limits:
        resources["limits"] = limits
    return {"name": f"c{i}", "image": "registry.k8s.io/pause:3.7", "resources": resources}


def huge_exponent(rng: random.Random, i: int) -> dict[str, Any]:
    def q() -> str:
        sign = rng.choice(["", "", "-", "+"])
        mantissa = rng.choice(["1", "9.99", "0.5", "123456789.987654321"])
        return f"{sign}{mantissa}e{rng.choice(['', '+', '-'])}{rng.randint(19, 2**31 - 1)}"

    reqs = {"cpu": q(), "memory": q(), "ephemeral-storage": q(), "example.com/gpu": q()}
    return _pod(f"exp-{i}", [_container(0, reqs, {"memory": q()})])


def long_digits(rng: random.Random, i: int) -> dict[str, Any]:
    width = rng.choice([200, 4_000, 50_000, 200_000])
    digits = "".join(rng.choice("0123456789") for _ in range(width))
    point = rng.randint(0, width)
    suffix = rng.choice(["", "m", "Ki", "Ei", "n", "e-30", "e30"])
    text = f"{digits[:point]}.{digits[point:]}{suffix}".lstrip(".") or "1"
    return _pod(f"digits-{i}", [_container(0, {"memory": text, "cpu": text})])


def deep_nesting(rng: random.Random, i: int) -> dict[str, Any]:
    depth = rng.choice([50, 500, 900])  # below Python's recursion limit of a JSON decode
    nested: Any = "x"
    for _ in range(depth):
        nested = {"a": nested} if rng.random() < 0.5 else [nested]
    pod = _pod(f"deep-{i}", [_container(0, {"cpu": "1"})])
    pod["spec"]["x-unknown"] = nested
    pod["metadata"]["x-unknown"] = nested
    return pod


def many_containers(rng: random.Random, i: int) -> dict[str, Any]:
    count = rng.choice([100, 1_000, 3_000])
    containers = [
        {
            **_container(c, {"cpu": f"{rng.randint(1, 999)}m", "memory": f"{c % 99 + 1}Mi"}),
            "ports": [{"containerPort": 1 + (c * 7 + p) % 65535, "hostPort": 1 + (c + p) % 65535}
                      for p in range(3)],
        }
        for c in range(count)
    ]  # fmt: skip
    init = [_container(c, {"cpu": "2", "memory": "1Gi"}) for c in range(count // 10)]
    for c, container in enumerate(init):
        container["name"] = f"init{c}"
    return _pod(f"containers-{i}", containers, initContainers=init)


def huge_labels(rng: random.Random, i: int) -> dict[str, Any]:
    count = rng.choice([1_000, 10_000, 20_000])
    labels = {f"k{j}.example.com/l{j}": f"v{rng.randint(0, 10**9)}" for j in range(count)}
    annotations = {f"a{j}": "x" * 200 for j in range(1_000)}  # ~200 KiB < 256 KiB
    pod = _pod(
        f"labels-{i}", [_container(0, {"cpu": "1"})], nodeSelector=dict(list(labels.items())[:500])
    )
    pod["metadata"] |= {"labels": labels, "annotations": annotations}
    return pod


def wide_affinity(rng: random.Random, i: int) -> dict[str, Any]:
    terms = [
        {"matchExpressions": [
            {"key": f"k{t}-{e}", "operator": rng.choice(["In", "NotIn"]),
             "values": [f"v{v}" for v in range(rng.choice([10, 100]))]}
            for e in range(20)
        ]}
        for t in range(rng.choice([10, 50]))
    ]  # fmt: skip
    pod_terms = [
        {"labelSelector": {"matchLabels": {f"app{t}": "x"}}, "topologyKey": "zone"}
        for t in range(200)
    ]
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
        },
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": pod_terms},
    }
    tolerations = [
        {"key": f"t{t}", "operator": "Exists", "effect": "NoSchedule"} for t in range(2_000)
    ]
    spread = [
        {"maxSkew": 1, "topologyKey": f"zone{t}", "whenUnsatisfiable": "DoNotSchedule",
         "labelSelector": {"matchLabels": {"app": "x"}}}
        for t in range(100)
    ]  # fmt: skip
    return _pod(
        f"affinity-{i}",
        [_container(0, {"cpu": "1"})],
        affinity=affinity,
        tolerations=tolerations,
        topologySpreadConstraints=spread,
    )


def hostile_node(rng: random.Random, i: int) -> dict[str, Any]:
    big = f"1e{rng.randint(19, 2**31 - 1)}"
    capacity = {"cpu": big, "memory": "9" * rng.choice([30, 5_000]), "pods": big}
    capacity |= {f"example.com/r{j}": big for j in range(200)}
    taints = [{"key": f"t{t}", "value": "v", "effect": "NoSchedule"} for t in range(1_000)]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": f"node-{i}", "labels": {f"l{j}": "v" for j in range(5_000)}},
        "spec": {"taints": taints},
        "status": {"capacity": capacity, "allocatable": capacity},
    }


FAMILIES: dict[str, Family] = {
    "huge exponents": huge_exponent,
    "long digit strings": long_digits,
    "deep nesting (unknown fields)": deep_nesting,
    "many containers and ports": many_containers,
    "huge label maps": huge_labels,
    "wide affinity, tolerations, spread": wide_affinity,
    "hostile nodes": hostile_node,
}


def _watch_event(obj: dict[str, Any]) -> None:
    """What the connector's reflector does with an object from a watch event."""
    try:
        _, read = validate_and_read(obj, strict=False, from_json=True)
    except ManifestError:
        return
    if read is not None and read.__class__.__name__ == "Pod":
        pod_requests(read)  # type: ignore[arg-type]  # a Pod here


def _manifest(strict: bool) -> Callable[[dict[str, Any]], None]:
    def read(obj: dict[str, Any]) -> None:
        try:
            read = read_manifest(obj, strict=strict)
        except ManifestError:
            return
        if read.__class__.__name__ == "Pod":
            pod_requests(read)  # type: ignore[arg-type]  # a Pod here

    return read


PATHS: dict[str, Callable[[dict[str, Any]], None]] = {
    "watch event": _watch_event,
    "read_manifest strict": _manifest(True),
    "read_manifest lenient": _manifest(False),
}


def _time(
    fn: Callable[[dict[str, Any]], None], obj: dict[str, Any], repeat: int, *, cold: bool
) -> float:
    """The median CPU time of ``fn`` on a fresh copy of ``obj``: ``cold``, with the memos
    of bodies read emptied first (an attacker varies every object), else after a first
    read (the memo hit of a template's next object)."""
    costs = []
    text = json.dumps(obj)
    if not cold:
        fn(json.loads(text))
    for _ in range(repeat):
        copy = json.loads(text)  # a fresh object, as each event brings
        if cold:
            forget_read_bodies()
        gc.collect()  # what other objects left is not this one's to collect
        start = time.process_time()
        fn(copy)
        costs.append(time.process_time() - start)
    return statistics.median(costs) * 1000


def _decode_ms(obj: dict[str, Any], repeat: int) -> float:
    """The JSON decode of the object, which every client pays before reading it."""
    text = json.dumps(obj)
    costs = []
    for _ in range(repeat):
        start = time.process_time()
        json.loads(text)
        costs.append(time.process_time() - start)
    return statistics.median(costs) * 1000


def _reflector(kind: str) -> Reflector:
    resource = next(r for r in RESOURCES if r.kind == kind)
    client = KubeClient(httpx.AsyncClient(base_url="http://unused"), TokenBucket(0, 0))
    return Reflector(client, resource, lambda *_: None, lambda *_: None)


async def _stall_once(reflector: Reflector, line: bytes, off_loop: bool) -> float:
    """The longest the loop went without a turn while ``line`` was read."""
    longest, done = 0.0, False

    async def turns() -> None:
        nonlocal longest
        last = time.perf_counter()
        while not done:
            await anyio.sleep(0)
            now = time.perf_counter()
            longest, last = max(longest, now - last), now

    async with anyio.create_task_group() as tg:
        tg.start_soon(turns)
        await anyio.sleep(0.01)
        if off_loop:
            await anyio.to_thread.run_sync(reflector._read_line, line)
        else:
            reflector._read_line(line)
        done = True
    return longest * 1000


def _loop_stall_ms(obj: dict[str, Any], repeat: int) -> dict[str, float]:
    line = json.dumps({"type": "ADDED", "object": obj}).encode()
    reflector = _reflector(obj["kind"])
    out = {}
    for how, off_loop in (("reflector", len(line) >= OFF_LOOP_BYTES), ("on the loop", False)):
        costs = [anyio.run(_stall_once, reflector, line, off_loop) for _ in range(repeat)]
        out[how] = round(statistics.median(costs), 3)
    return out


def objects(count: int, seed: int) -> Iterator[tuple[str, dict[str, Any]]]:
    rng = random.Random(seed)
    for family, make in FAMILIES.items():
        for i in range(count):
            yield family, make(rng, i)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=12, help="objects per family")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--only", default="", help="families whose name holds this text")
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "results" / "hostile_objects.json"
    )
    args = parser.parse_args(argv)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 4_000))  # json.dumps of deep objects
    worst: dict[str, dict[str, Any]] = {}
    for family, obj in objects(args.count, args.seed):
        if args.only not in family:
            continue
        size = len(json.dumps(obj))
        decode = _decode_ms(obj, args.repeat)
        for path, fn in PATHS.items():
            cost = _time(fn, obj, args.repeat, cold=True)
            warm = _time(fn, obj, args.repeat, cold=False)
            entry = worst.setdefault(
                f"{family} / {path}", {"worst_ms": 0.0, "costs": [], "warm": []}
            )
            entry["costs"].append(cost)
            entry["warm"].append(warm)
            entry.setdefault("per_kib", []).append(cost / (size / 1024))
            if cost >= entry["worst_ms"]:
                entry |= {"worst_ms": cost, "worst_object": obj["metadata"]["name"], "bytes": size,
                          "decode_ms": decode, "object": obj}  # fmt: skip
    rows = {
        k: {"worst_ms": round(v["worst_ms"], 3),
            "median_ms": round(statistics.median(v["costs"]), 3),
            "worst_memo_hit_ms": round(max(v["warm"]), 3),
            "worst_object": v["worst_object"], "worst_object_bytes": v["bytes"],
            "worst_object_json_decode_ms": round(v["decode_ms"], 3),
            "max_ms_per_kib": round(max(v["per_kib"]), 4)}
        for k, v in worst.items()
    }  # fmt: skip
    overall = max(r["worst_ms"] for r in rows.values())
    stalls = {
        k.split(" / ")[0]: _loop_stall_ms(v["object"], args.repeat)
        for k, v in worst.items()
        if k.endswith(" / watch event")
    }
    report = {
        "goal_ms": GOAL_MS,
        "worst_ms": round(overall, 3),
        "objects": args.count * sum(args.only in f for f in FAMILIES),
        "repeat": args.repeat,
        "python": platform.python_version(),
        "machine": platform.processor() or platform.machine(),
        "by_family_and_path": rows,
        "loop_stall_ms_of_the_worst_watch_event": stalls,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    width = max(map(len, rows))
    for name, row in rows.items():
        print(f"{name:<{width}}  worst {row['worst_ms']:8.3f} ms  median {row['median_ms']:8.3f} ms"
              f"  memo hit {row['worst_memo_hit_ms']:7.3f} ms"
              f"  {row['max_ms_per_kib']:.4f} ms/KiB  ({row['worst_object']},"
              f" {row['worst_object_bytes']} B,"
              f" json decode {row['worst_object_json_decode_ms']} ms)")  # fmt: skip
    for family, stall in stalls.items():
        print(f"loop stall, {family}: {stall['reflector']:.1f} ms as the reflector reads it"
              f" ({stall['on the loop']:.1f} ms read on the loop)")  # fmt: skip
    print(f"worst object overall: {overall:.3f} ms (goal <= {GOAL_MS} ms)")
    return 0 if overall <= GOAL_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
