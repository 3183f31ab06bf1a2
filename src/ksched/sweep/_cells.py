"""Running one cell in a worker: a simulation, a replay or a GPU experiment, and its metrics.

``run_cell`` is what every executor calls (a plain function of picklable arguments). It
never raises for a cell's own failure: the error goes into the outcome, so a failing cell
is a row of the table and the sweep goes on.
"""

from __future__ import annotations

import functools
import math
import statistics
import threading
import time
import traceback
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from ._bundle import Bundle, folder_of, loaded
from ._overrides import Override, apply_overrides

__all__ = ["CellOutcome", "CellTask", "Metric", "run_cell"]

Metric = tuple[str, int | None, float]
"""(metric, at, value): ``at`` is a curve's x (the percent of arrived workload) or None."""


@attrs.frozen
class CellTask:
    """What a worker needs for one cell besides its bundle."""

    id: str
    kind: str
    config_document: Mapping[str, Any] | None = None
    overrides: tuple[Override, ...] = ()
    params: Mapping[str, Any] = attrs.field(factory=dict)
    metrics: tuple[str, ...] | None = None
    label: str = ""
    """How error messages name the input (its path as the spec gave it)."""


@attrs.frozen
class CellOutcome:
    """A cell's metrics, or its error; ``seconds`` is the worker's wall time for it,
    ``cpu_seconds`` its CPU time (the worker process's, while the cell ran)."""

    id: str
    metrics: tuple[Metric, ...] = ()
    error: str | None = None
    seconds: float = 0.0
    cpu_seconds: float = 0.0


def run_cell(task: CellTask, bundle: Bundle) -> CellOutcome:
    """Run one cell; its failure is the outcome's ``error``, never an exception."""
    with _ONE_AT_A_TIME:
        return _run(task, bundle)


_ONE_AT_A_TIME = threading.Lock()
"""A cell seeds trio's (process-wide) task order: one cell per process at a time."""


def _run(task: CellTask, bundle: Bundle) -> CellOutcome:
    start, cpu = time.perf_counter(), time.process_time()
    try:
        runner = _RUNNERS[task.kind]
        metrics = list(runner(task, bundle))
    except Exception as exc:
        return CellOutcome(
            id=task.id,
            error=_error_text(exc, bundle),
            seconds=time.perf_counter() - start,
            cpu_seconds=time.process_time() - cpu,
        )
    if task.metrics is not None:
        wanted = set(task.metrics)
        metrics = [m for m in metrics if m[0] in wanted]
    return CellOutcome(
        id=task.id,
        metrics=tuple(metrics),
        seconds=time.perf_counter() - start,
        cpu_seconds=time.process_time() - cpu,
    )


def _error_text(exc: Exception, bundle: Bundle) -> str:
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if (
        not isinstance(exc, (ValueError, OSError, KeyError))
        and "ksched" not in type(exc).__module__
    ):
        frame = traceback.extract_tb(exc.__traceback__)[-1:]
        if frame:
            text += f" (at {Path(frame[0].filename).name}:{frame[0].lineno})"
    folder = folder_of(bundle)
    text = text.replace(folder, bundle.root) if folder else text
    return " | ".join(line for line in text.splitlines() if line.strip())


def _config(task: CellTask, own: Any) -> Any:
    """The cell's configuration: the spec's file (else the input's own), overridden."""
    from ..config import parse_config

    config = parse_config(task.config_document) if task.config_document is not None else own
    return apply_overrides(config, task.overrides)


# ---- simulate ---------------------------------------------------------------------------


def _simulate(task: CellTask, bundle: Bundle) -> Iterable[Metric]:
    import attrs as _attrs

    from ..cli._inputs import load_inputs
    from ..simulate import run_scenario

    scenario = loaded(bundle, "scenario", load_inputs)
    scenario = _attrs.evolve(scenario, config=_config(task, scenario.config))
    report = run_scenario(
        scenario,
        seed=int(task.params.get("seed", 0)),
        registry=_registry(),
        events=False,
        opportunistic_batching=bool(task.params.get("opportunisticBatching", True)),
    )
    return simulate_metrics(report)


@functools.cache
def _registry() -> Any:
    """The in-tree plugins and those installed as entry points (as ``simulate`` has them)."""
    from ..cli._options import plugin_registry

    return plugin_registry(())


def simulate_metrics(report: Mapping[str, Any]) -> list[Metric]:
    """A simulation's metrics: pods by outcome, time, and how even the nodes are."""
    pods = report["pods"].values()
    bound = sum(1 for p in pods if p["phase"] == "Bound")
    nodes = report["nodes"].values()
    out: list[Metric] = [
        ("pods", None, len(report["pods"])),
        ("bound", None, bound),
        ("not_bound", None, len(report["pods"]) - bound),
        ("evicted", None, len(report["evicted"])),
        ("time_s", None, float(report["time"])),
        ("nodes_used", None, sum(1 for n in nodes if n["requested"]["pods"] > 0)),
    ]
    for resource in ("cpu", "memory"):
        shares = [_share(n, resource) for n in nodes]
        requested = sum(n["requested"][resource] for n in nodes)
        allocatable = sum(n["allocatable"][resource] for n in nodes)
        out.append((f"{resource}_requested_pct", None, _pct(requested, allocatable)))
        out.append((f"{resource}_imbalance_pct", None, _spread(shares)))
    return out


def _share(node: Mapping[str, Any], resource: str) -> float:
    total = node["allocatable"][resource]
    return 100 * node["requested"][resource] / total if total else 0.0


def _pct(part: float, whole: float) -> float:
    return round(100 * part / whole, 6) if whole else 0.0


def _spread(shares: Sequence[float]) -> float:
    """The population standard deviation of the nodes' requested shares (percent points)."""
    return round(statistics.pstdev(shares), 6) if len(shares) > 1 else 0.0


# ---- replay -----------------------------------------------------------------------------


def _replay(task: CellTask, bundle: Bundle) -> Iterable[Metric]:
    from ..config import SchedulerConfig
    from ..replay import replay
    from ..trace import is_trace_file, open_trace
    from ..trace._sources import trace_of_file

    path = loaded(bundle, "path", lambda paths: paths[0])
    config = _config(task, SchedulerConfig())
    options: dict[str, Any] = {
        "follow_recorded": bool(task.params.get("followRecorded", False)),
        "seed": int(task.params.get("seed", 0)),
        "registry": _registry(),
        "explain": False,
        "trace_name": task.label,
    }
    if is_trace_file(path):
        with open_trace(path) as trace:
            report = replay(trace, config, **options)
    else:
        trace = trace_of_file(path, workload=task.params.get("workload"))
        report = replay(trace, config, **options)
    return replay_metrics(report)


def replay_metrics(report: Mapping[str, Any]) -> list[Metric]:
    """A replay's metrics: its summary, agreement with the recording, time to schedule."""
    summary = report["summary"]
    out: list[Metric] = [
        (name, None, float(summary[key]))
        for name, key in (
            ("pods", "ours"),
            ("bound", "bound"),
            ("pending", "pending"),
            ("preemptions", "preemptions"),
            ("duration_s", "duration"),
        )
    ]
    agreement = report["agreement"]
    out.append(("agreement", None, float(agreement.get("ratio") or 0.0)))
    waits = report["timeToSchedule"]["replayed"]
    for p in ("p50", "p99"):
        if p in waits:
            out.append((f"time_to_schedule_{p}_s", None, float(waits[p])))
    utilization = report["utilization"]
    for name, key in (
        ("cpu_mean_pct", "cpu"),
        ("memory_mean_pct", "memory"),
        ("fragmentation_cpu_mean_pct", "fragmentationCpu"),
    ):
        if key in utilization.get("mean", {}):
            out.append((name, None, float(utilization["mean"][key])))
    return out


# ---- gpu --------------------------------------------------------------------------------


def _gpu(task: CellTask, bundle: Bundle) -> Iterable[Metric]:
    from ..gpu import ExperimentConfig, TypicalPodsConfig, WorkloadConfig, run_experiment

    nodes, pods = loaded(bundle, "openb", _read_openb)
    p = task.params
    config = ExperimentConfig(
        policy=str(p.get("policy", "FGD")),
        workload=WorkloadConfig(
            tune=float(p.get("tune", 1.3)),
            seed=int(p.get("seed", 42)),
            shuffle=bool(p.get("shuffle", True)),
            rng=str(p.get("rng", "go")),
        ),
        typical=TypicalPodsConfig(
            is_involved_cpu_pods=bool(p.get("cpuPods", True)),
            pod_popularity_threshold=int(p.get("popularityThreshold", 95)),
            pod_increase_step=int(p.get("increaseStep", 1)),
            gpu_res_weight=float(p.get("gpuResWeight", 0.0)),
        ),
    )
    return gpu_metrics(run_experiment(nodes, pods, config))


def _read_openb(paths: list[Path]) -> tuple[list[Any], list[Any]]:
    from ..gpu import read_nodes, read_pods, to_nodes, to_pods

    pods_csv, nodes_csv = paths
    return (
        to_nodes(read_nodes(nodes_csv), source=nodes_csv.name),
        to_pods(read_pods(pods_csv), source=pods_csv.name),
    )


def gpu_metrics(result: Any) -> list[Metric]:
    """An experiment's metrics: its outcome and the study's three curves, point by point."""
    out: list[Metric] = [
        ("pods", None, len(result.workload.pods)),
        ("bound", None, result.bound),
        ("failed", None, result.failed),
        ("unallocated_gpus", None, round(result.unallocated_gpu_milli / 1000, 3)),
        ("fully_free_gpus", None, result.fully_free_gpus),
    ]
    curves = (
        ("gpu_alloc_pct", result.curve.allocation()),
        ("gpu_frag_pct", result.curve.fragmentation()),
        ("gpu_frag_ratio_pct", result.curve.fragmentation_ratio()),
    )
    for name, values in curves:
        out.extend((name, int(at), float(v)) for at, v in values.items() if not math.isnan(v))
    return out


_RUNNERS = {"simulate": _simulate, "replay": _replay, "gpu": _gpu}
