"""Node fan-out, measured: how Filter work is spread over nodes at a given parallelism.

Strategies (each has ``run_chunked``'s signature: ``(pieces, parallelism, work)``, where
``work(i)`` returns False to stop the fan-out early):

- ``serial``: one ``await work(i)`` after another (the speed-up baseline);
- ``chunked``: upstream's shape (ksched's helper until 0.1): at most ``parallelism``
  workers in a task group, each taking chunks of upstream's ``chunkSizeFor`` nodes in turn;
- ``aiometer``: one task per node, ``aiometer.run_on_each(max_at_once=parallelism)``,
  with a stop-aware piece sequence so no new piece starts after a stop;
- ``pool``: ``parallelism`` spawned workers taking one node at a time (chunk size 1;
  ``run_chunked`` before the calling task became one of its workers);
- ``task_per_node``: a plain task group with one task per node, unbounded (reference:
  it ignores ``parallelism``);
- ``shipped``: whatever ``ksched.framework._parallel.run_chunked`` is now.

Parts:

1. ``engine``: a Filter plugin that awaits 1 ms per node (``--wait``, below),
   added to the default profile, 500 nodes, ``percentageOfNodesToScore: 100`` (every
   node filtered), run through a real ``Scheduler``; the Framework's fan-out is swapped
   per strategy. Reports wall time per pod (pod added to pod bound).
2. ``micro``: the same 1 ms-per-node work through the bare helper (no engine).
3. ``cpu``: a plain ``def`` Filter body (no awaits) over ``--cpu-nodes`` nodes: inline
   loop vs each fan-out, cost per node in microseconds (median of ``--cpu-passes``).
4. ``wake``: parts 1 and 2 on trio's ``MockClock`` (virtual time, so the wall clock
   measures only the CPU): microseconds of CPU per awaiting node, engine and bare helper.
   With timer waits a round's nodes run back to back, so this cost times the node count
   adds to the fan-out's time at any parallelism.

Each figure is the median of ``--repeat`` runs; every part runs on asyncio,
asyncio+uvloop (when importable) and trio.

``--wait`` picks how a node's 1 ms ends: ``sleep`` (default) is ``anyio.sleep``, a timer;
``socket`` waits for a byte on a socket pair, sent by a thread when the delay is up (a
remote call's reply). Event loops sleep on timers in whole milliseconds, so with ``sleep``
the workers of a round wake in lockstep and the CPU of all their nodes runs back to back
each round; with ``socket`` wake-ups come when the reply does.

    python benchmarks/fanout.py                     # everything, writes results/fanout.json
    python benchmarks/fanout.py --parts micro --backends asyncio --repeat 5
    python benchmarks/fanout.py --parts engine micro --wait socket   # results/fanout_socket.json
"""

from __future__ import annotations

import argparse
import heapq
import importlib.util
import json
import math
import os
import platform
import socket
import statistics
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, overload

import aiometer
import anyio

import ksched
import ksched.framework._fast._filter as fast_filter
import ksched.framework._runtime as runtime
from ksched.config import parse_config
from ksched.framework import Code, CycleState, NodeInfo, Status
from ksched.framework.batch import run_chunked as shipped_run_chunked
from ksched.testing import make_node, make_pod

RESULTS = Path(__file__).parent / "results"
PARALLELISM = (1, 4, 16, 64)
TARGET_FACTOR = 0.8
TARGET_UP_TO = 16

Work = Callable[[int], Awaitable[bool]]
FanOut = Callable[[int, int, Work], Coroutine[Any, Any, None]]
Wait = Callable[[float], Awaitable[None]]
WAITS = ("sleep", "socket")


# ---- the strategies ---------------------------------------------------------------------


async def serial(pieces: int, parallelism: int, work: Work) -> None:
    for i in range(pieces):
        if not await work(i):
            return


def chunk_size(pieces: int, parallelism: int) -> int:
    """Upstream chunkSizeFor (parallelize/parallelism.go)."""
    size = int(math.sqrt(pieces))
    size = min(size, pieces // max(parallelism, 1) + 1)
    return max(size, 1)


async def chunked(pieces: int, parallelism: int, work: Work) -> None:
    """The chunked task group as the engine had it before aiometer."""
    if pieces <= 0:
        return
    size = chunk_size(pieces, parallelism)
    next_start = 0
    stop = False

    async def worker() -> None:
        nonlocal next_start, stop
        while not stop and next_start < pieces:
            start = next_start
            next_start = min(pieces, start + size)
            for i in range(start, next_start):
                if stop:
                    return
                if not await work(i):
                    stop = True
                    return

    workers = min(parallelism, (pieces + size - 1) // size)
    async with anyio.create_task_group() as tg:
        for _ in range(max(workers, 1)):
            tg.start_soon(worker)


class _Pieces(Sequence[int]):
    """0..n-1 that stops yielding once ``stopped`` is set."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.stopped = False

    def __len__(self) -> int:
        return self.n

    @overload
    def __getitem__(self, index: int) -> int: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[int]: ...
    def __getitem__(self, index: int | slice) -> int | Sequence[int]:
        return range(self.n)[index]

    def __iter__(self) -> Iterator[int]:
        for i in range(self.n):
            if self.stopped:
                return
            yield i


async def aiometer_each(pieces: int, parallelism: int, work: Work) -> None:
    if pieces <= 0:
        return
    items = _Pieces(pieces)

    async def one(i: int) -> None:
        if not items.stopped and not await work(i):
            items.stopped = True

    await aiometer.run_on_each(one, items, max_at_once=max(parallelism, 1))


async def pool(pieces: int, parallelism: int, work: Work) -> None:
    if pieces <= 0:
        return
    next_piece = 0
    stop = False

    async def worker() -> None:
        nonlocal next_piece, stop
        while not stop and next_piece < pieces:
            i = next_piece
            next_piece += 1
            if not await work(i):
                stop = True

    async with anyio.create_task_group() as tg:
        for _ in range(min(max(parallelism, 1), pieces)):
            tg.start_soon(worker)


async def task_per_node(pieces: int, parallelism: int, work: Work) -> None:
    stop = False

    async def one(i: int) -> None:
        nonlocal stop
        if not stop and not await work(i):
            stop = True

    async with anyio.create_task_group() as tg:
        for i in range(pieces):
            if stop:
                break
            tg.start_soon(one, i)


STRATEGIES: dict[str, FanOut] = {
    "chunked": chunked,
    "aiometer": aiometer_each,
    "pool": pool,
    "task_per_node": task_per_node,
    "shipped": shipped_run_chunked,
}


# ---- backends ---------------------------------------------------------------------------


def backends_available(wanted: Sequence[str]) -> list[str]:
    out = []
    for name in wanted:
        if name == "uvloop" and importlib.util.find_spec("uvloop") is None:
            print("uvloop not importable: skipped", file=sys.stderr)
            continue
        out.append(name)
    return out


def run_on(backend: str, fn: Callable[[], Awaitable[Any]]) -> Any:
    if backend == "uvloop":
        return anyio.run(fn, backend="asyncio", backend_options={"use_uvloop": True})
    return anyio.run(fn, backend=backend)


# ---- how a node's wait ends --------------------------------------------------------------


class _DelayLine:
    """A thread that sends one byte on a socket when its delay is up (a remote reply)."""

    def __init__(self) -> None:
        self._due: list[tuple[float, int, socket.socket]] = []
        self._cond = threading.Condition()
        self._seq = 0
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="delay-line", daemon=True)
        self._thread.start()

    def schedule(self, sock: socket.socket, delay: float) -> None:
        with self._cond:
            self._seq += 1
            heapq.heappush(self._due, (time.perf_counter() + delay, self._seq, sock))
            self._cond.notify()

    def _run(self) -> None:
        with self._cond:
            while not self._closed:
                if not self._due:
                    self._cond.wait()
                    continue
                left = self._due[0][0] - time.perf_counter()
                if left > 0:
                    self._cond.wait(left)
                    continue
                heapq.heappop(self._due)[2].send(b"x")

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join()


@asynccontextmanager
async def waiting(kind: str) -> AsyncIterator[Wait]:
    """``wait(delay)`` for the run: a timer (``sleep``) or a socket reply (``socket``)."""
    if kind == "sleep":
        yield anyio.sleep
        return
    # The sending thread needs the GIL: let it in within 50 µs of a reply being due, not
    # after the default 5 ms switch interval, or a busy loop thread delays the replies.
    switch = sys.getswitchinterval()
    sys.setswitchinterval(50e-6)
    line = _DelayLine()
    free: list[tuple[socket.socket, socket.socket]] = []
    made: list[tuple[socket.socket, socket.socket]] = []

    async def wait(delay: float) -> None:
        if free:
            pair = free.pop()
        else:
            pair = socket.socketpair()
            made.append(pair)
        line.schedule(pair[1], delay)
        await anyio.wait_readable(pair[0])
        pair[0].recv(1)
        free.append(pair)

    try:
        yield wait
    finally:
        line.close()
        sys.setswitchinterval(switch)
        for a, b in made:
            a.close()
            b.close()


# ---- part 1: through the engine -----------------------------------------------------------


class SlowFilter:
    """A Filter that waits 1 ms per node (a remote capacity check) and admits every node."""

    name = "SlowFilter"

    def __init__(self, delay: float, wait: Wait = anyio.sleep) -> None:
        self.delay = delay
        self.wait = wait
        self.calls = 0

    async def filter(self, state: CycleState, pod: ksched.Pod, node_info: NodeInfo) -> None:
        self.calls += 1
        await self.wait(self.delay)


async def engine_once(
    fan_out: FanOut, parallelism: int, nodes: int, pods: int, delay: float, wait: str = "sleep"
) -> float:
    """Seconds per pod: add a pod, wait until it is bound, ``pods`` times in turn."""
    async with waiting(wait) as wait_fn:
        return await _engine_once(fan_out, parallelism, nodes, pods, SlowFilter(delay, wait_fn))


async def _engine_once(
    fan_out: FanOut, parallelism: int, nodes: int, pods: int, plugin: SlowFilter
) -> float:
    config = parse_config(
        {
            "parallelism": parallelism,
            "profiles": [
                {
                    "percentageOfNodesToScore": 100,
                    "plugins": {"multiPoint": {"enabled": [{"name": "SlowFilter"}]}},
                }
            ],
        }
    )
    cluster = ksched.InMemoryCluster()
    for i in range(nodes):
        await cluster.add_node(
            make_node(f"node-{i}").capacity(cpu="4", memory="32Gi", pods=110).obj()
        )
    # The Framework's fan-out, swapped for this run (restored below).
    saved = shipped_run_chunked
    # the name each module imported: not re-exported, and typed as the shipped helper
    runtime.run_chunked = fast_filter.run_chunked = fan_out  # type: ignore[attr-defined,assignment]
    try:
        async with ksched.Scheduler.open(
            config, cluster, registry={"SlowFilter": lambda args, handle: plugin}
        ):
            # One warm-up pod (snapshot build, first-cycle caches), not measured.
            await cluster.add_pod(make_pod("warm").req(cpu="100m", memory="500Mi").obj())
            await cluster.wait_bound("default/warm", timeout=120)
            plugin.calls = 0
            start = time.perf_counter()
            for i in range(pods):
                await cluster.add_pod(make_pod(f"p{i}").req(cpu="100m", memory="500Mi").obj())
                await cluster.wait_bound(f"default/p{i}", timeout=120)
            elapsed = time.perf_counter() - start
    finally:
        runtime.run_chunked = fast_filter.run_chunked = saved  # type: ignore[attr-defined]
    if plugin.calls != pods * nodes:
        raise AssertionError(f"expected {pods * nodes} filter calls, got {plugin.calls}")
    return elapsed / pods


# ---- part 2: the bare helper --------------------------------------------------------------


async def micro_once(
    fan_out: FanOut, parallelism: int, nodes: int, delay: float, wait: str = "sleep"
) -> float:
    done = 0
    async with waiting(wait) as wait_fn:

        async def work(i: int) -> bool:
            nonlocal done
            await wait_fn(delay)
            done += 1
            return True

        start = time.perf_counter()
        await fan_out(nodes, parallelism, work)
        elapsed = time.perf_counter() - start
    if done != nodes:
        raise AssertionError(f"expected {nodes} pieces, got {done}")
    return elapsed


# ---- part 3: plain def plugins --------------------------------------------------------------


def cpu_filter(state: CycleState, pod: ksched.Pod, node_info: NodeInfo) -> Status | None:
    """A plain Filter body of about the cost of an in-tree one: a few lookups, no awaits."""
    alloc = node_info.node.status.allocatable
    if not alloc or node_info.node.name in state.skip_filter_plugins:
        return Status(Code.UNSCHEDULABLE, ("no allocatable",))
    return None


async def cpu_once(
    strategy: str, parallelism: int, infos: Sequence[NodeInfo], passes: int
) -> float:
    """Microseconds per node: the median of ``passes`` passes over all nodes."""
    state = CycleState()
    pod = make_pod("cpu").req(cpu="100m").obj()
    n = len(infos)

    async def work(i: int) -> bool:
        return cpu_filter(state, pod, infos[i]) is None

    fan_out = STRATEGIES.get(strategy)
    samples = []
    for _ in range(passes):
        start = time.perf_counter()
        if fan_out is None:
            for info in infos:
                cpu_filter(state, pod, info)
        else:
            await fan_out(n, parallelism, work)
        samples.append((time.perf_counter() - start) / n * 1e6)
    return statistics.median(samples)


# ---- driver ---------------------------------------------------------------------------------


def median_of(repeat: int, backend: str, fn: Callable[[], Awaitable[float]]) -> float:
    return float(statistics.median(run_on(backend, fn) for _ in range(repeat)))


def _speedups(rows: dict[str, dict[str, float]], serial_s: float) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, by_p in rows.items():
        out[name] = {}
        for p, seconds in by_p.items():
            speedup = serial_s / seconds
            out[name][p] = {
                "seconds": seconds,
                "speedup": speedup,
                "efficiency": speedup / int(p),
                "meets_target": speedup >= TARGET_FACTOR * int(p)
                if int(p) <= TARGET_UP_TO
                else None,
            }
    return out


def bench_async(
    part: str, backend: str, args: argparse.Namespace, strategies: Sequence[str]
) -> dict[str, Any]:
    def once(fan_out: FanOut, p: int) -> Callable[[], Awaitable[float]]:
        if part == "engine":
            return lambda: engine_once(fan_out, p, args.nodes, args.pods, args.delay, args.wait)
        return lambda: micro_once(fan_out, p, args.nodes, args.delay, args.wait)

    serial_s = median_of(args.repeat, backend, once(serial, 1))
    rows: dict[str, dict[str, float]] = {}
    for name in strategies:
        rows[name] = {}
        for p in args.parallelism:
            rows[name][str(p)] = median_of(args.repeat, backend, once(STRATEGIES[name], p))
            print(f"{part:6} {backend:7} {name:13} p={p:<3} {rows[name][str(p)] * 1e3:8.2f} ms")
    return {"serial_seconds": serial_s, "strategies": _speedups(rows, serial_s)}


def bench_cpu(backend: str, args: argparse.Namespace, strategies: Sequence[str]) -> dict[str, Any]:
    infos = [
        NodeInfo.of(make_node(f"node-{i}").capacity(cpu="4", memory="32Gi", pods=110).obj())
        for i in range(args.cpu_nodes)
    ]
    out: dict[str, Any] = {
        "inline": median_of(
            args.repeat, backend, lambda: cpu_once("inline", 1, infos, args.cpu_passes)
        )
    }
    for name in strategies:
        out[name] = {}
        for p in args.parallelism:

            def once(name: str = name, p: int = p) -> Awaitable[float]:
                return cpu_once(name, p, infos, args.cpu_passes)

            out[name][str(p)] = median_of(args.repeat, backend, once)
    print(f"cpu    {backend:7} " + json.dumps(out))
    return out


def bench_wake(args: argparse.Namespace, strategies: Sequence[str]) -> dict[str, Any]:
    """CPU microseconds per awaiting node on trio's virtual clock (``--wait`` ignored)."""
    from trio.testing import MockClock

    def on_mock(fn: Callable[[], Awaitable[float]]) -> float:
        clock = MockClock(autojump_threshold=0)
        return float(anyio.run(fn, backend="trio", backend_options={"clock": clock}))

    out: dict[str, Any] = {}
    fan_outs: dict[str, FanOut] = {"serial": serial} | {s: STRATEGIES[s] for s in strategies}
    for part in ("engine", "micro"):
        out[part] = {}
        for name, fan_out in fan_outs.items():
            out[part][name] = {}
            for p in [1] if name == "serial" else args.parallelism:

                def once(
                    fan_out: FanOut = fan_out, p: int = p, part: str = part
                ) -> Awaitable[float]:
                    if part == "engine":
                        return engine_once(fan_out, p, args.nodes, args.pods, args.delay)
                    return micro_once(fan_out, p, args.nodes, args.delay)

                runs = [on_mock(once) for _ in range(args.repeat)]
                out[part][name][str(p)] = statistics.median(runs) / args.nodes * 1e6
        print(f"wake   trio    {part:6} " + json.dumps(out[part]))
    return out


def machine() -> dict[str, Any]:
    cpu_model = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = {"anyio": _version("anyio"), "aiometer": _version("aiometer")}
    versions["trio"] = _version("trio")
    versions["uvloop"] = _version("uvloop")
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "machine": platform.machine(),
        "cpu_model": cpu_model,
        "cpus": os.cpu_count(),
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "versions": versions,
    }


def _version(dist: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return None


def markdown(results: dict[str, Any]) -> str:
    lines = []
    for part in ("engine", "micro"):
        if part not in results:
            continue
        label = "ms per pod" if part == "engine" else "ms per fan-out"
        lines.append(
            f"\n**{part}** ({results['nodes']} nodes x {results['delay_s'] * 1e3:g} ms "
            f"{results.get('wait', 'sleep')}; "
            f"{label}, speed-up vs serial; * = below {TARGET_FACTOR} x parallelism)\n"
        )
        ps = [str(p) for p in results["parallelism"]]
        lines.append("| backend | strategy | serial | " + " | ".join(f"p={p}" for p in ps) + " |")
        lines.append("|---|---|---:|" + "---:|" * len(ps))
        for backend, data in results[part].items():
            for name, by_p in data["strategies"].items():
                cells = []
                for p in ps:
                    c = by_p[p]
                    flag = "*" if c["meets_target"] is False else ""
                    cells.append(f"{c['seconds'] * 1e3:.1f} ({c['speedup']:.1f}x{flag})")
                serial_ms = data["serial_seconds"] * 1e3
                lines.append(
                    f"| {backend} | {name} | {serial_ms:.1f} | " + " | ".join(cells) + " |"
                )
    if "wake" in results:
        lines.append("\n**wake** (trio, virtual clock: CPU µs per awaiting node; serial at p=1)\n")
        ps = [str(p) for p in results["parallelism"]]
        lines.append("| part | strategy | " + " | ".join(f"p={p}" for p in ps) + " |")
        lines.append("|---|---|" + "---:|" * len(ps))
        for part, data in results["wake"].items():
            for name, by_p in data.items():
                cells = [f"{by_p[p]:.1f}" if p in by_p else "" for p in ps]
                lines.append(f"| {part} | {name} | " + " | ".join(cells) + " |")
    if "cpu" in results:
        lines.append(
            f"\n**cpu** (plain `def` Filter body, {results['cpu_nodes']} nodes; µs per node)\n"
        )
        names = [s for s in next(iter(results["cpu"].values())) if s != "inline"]
        lines.append("| backend | parallelism | inline | " + " | ".join(names) + " |")
        lines.append("|---|---:|---:|" + "---:|" * len(names))
        for backend, data in results["cpu"].items():
            for p in (str(p) for p in results["parallelism"]):
                cells = [f"{data[s][p]:.2f}" for s in names]
                inline = f"{data['inline']:.2f}"
                lines.append(f"| {backend} | {p} | {inline} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--parts", nargs="+", default=["engine", "micro", "cpu", "wake"])
    parser.add_argument("--backends", nargs="+", default=["asyncio", "uvloop", "trio"])
    parser.add_argument("--strategies", nargs="+", default=list(STRATEGIES))
    parser.add_argument("--parallelism", nargs="+", type=int, default=list(PARALLELISM))
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=3, help="measured pods per engine run")
    parser.add_argument("--delay", type=float, default=0.001, help="seconds awaited per node")
    parser.add_argument(
        "--wait", choices=WAITS, default="sleep", help="how a node's delay ends (see above)"
    )
    parser.add_argument("--cpu-nodes", type=int, default=5000)
    parser.add_argument("--cpu-passes", type=int, default=10, help="passes per cpu run")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--output", type=Path, help="default results/fanout[_socket].json")
    args = parser.parse_args()
    if args.output is None:
        suffix = "" if args.wait == "sleep" else f"_{args.wait}"
        args.output = RESULTS / f"fanout{suffix}.json"
    if math.isnan(args.delay) or args.delay < 0:
        parser.error("--delay must be >= 0")

    backends = backends_available(args.backends)
    results: dict[str, Any] = {
        "benchmark": "fanout",
        **machine(),
        "repeat": args.repeat,
        "statistic": "median",
        "nodes": args.nodes,
        "pods_per_engine_run": args.pods,
        "delay_s": args.delay,
        "wait": args.wait,
        "cpu_nodes": args.cpu_nodes,
        "cpu_passes": args.cpu_passes,
        "parallelism": args.parallelism,
        "target": f"speed-up >= {TARGET_FACTOR} x parallelism for parallelism <= {TARGET_UP_TO}",
    }
    started = time.perf_counter()
    for part in ("engine", "micro"):
        if part in args.parts:
            results[part] = {b: bench_async(part, b, args, args.strategies) for b in backends}
    if "wake" in args.parts:
        results["wake"] = bench_wake(args, args.strategies)
    if "cpu" in args.parts:
        cpu_strategies = [s for s in args.strategies if s != "shipped"]
        results["cpu"] = {b: bench_cpu(b, args, cpu_strategies) for b in backends}
    results["wall_seconds"] = time.perf_counter() - started
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(markdown(results))
    print(f"\nwrote {args.output}")


if __name__ == "__main__":
    main()
