"""Other sources of the trace format: Scenario files and scheduler_perf workloads.

- **Scenario** (scenario-format.md): ``objects`` are the initial state; ``create``,
  ``update`` and ``delete`` steps become records at the current time; ``advance: D``
  moves the time by D and ``settle`` by ``SETTLE_SECONDS`` (a trace has times, not
  "until idle": ten seconds is kube-scheduler's longest pod backoff). Workloads
  (Deployments, Jobs...) and ``scale`` steps are refused: a trace holds the pods.
- **scheduler_perf** (the workload files ``ksched bench`` runs): nodes and namespaces
  are the initial state, each ``createPods`` op's pods arrive together one second after
  the previous op, ``sleep`` ops move the time; barriers cost nothing. Other ops
  (churn, deletePods, updateAny, DRA drivers) are refused, naming the op.

Either way the result is read back through the one trace reader.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from .._errors import KschedError
from ..api import KubeObject, Namespace, Pod
from ..cluster import object_key
from ._format import Op, Trace, TraceError, TraceEvent, TraceHeader
from ._io import TraceWriter, _dumps, _header_dict, record_line, trace_lines

__all__ = ["SETTLE_SECONDS", "convert_file", "trace_of_file"]

SETTLE_SECONDS = 10.0
_WORKLOAD_KINDS = frozenset(
    {"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "ReplicationController"}
)


def _load_yaml(path: Path) -> list[Any]:
    try:
        return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    except (OSError, yaml.YAMLError) as exc:
        raise TraceError(f"{path}: cannot read: {exc}") from None


def _scenario_lines(path: Path, data: Mapping[str, Any]) -> Iterator[str]:
    """A Scenario's trace records, as lines (its checks are parse_scenario's)."""
    from ..simulate import parse_scenario

    scenario = parse_scenario(data, path=str(path))
    for obj in [*scenario.objects, *(o for s in scenario.steps for o in s.objects)]:
        kind = type(obj).__name__
        if kind in _WORKLOAD_KINDS and getattr(obj, "template", None) is not None:
            raise TraceError(
                f"{path}: {kind} {object_key(obj)}: a trace holds pods, not workloads "
                "(ksched simulate runs their controllers)"
            )
    header = TraceHeader(source="scenario", name=scenario.name)
    yield _dumps(_header_dict(header)) + "\n"
    for raw in data.get("objects") or []:
        yield record_line(0.0, Op.INIT, object=raw)
    t = 0.0
    for i, (step, raw_step) in enumerate(
        zip(scenario.steps, data.get("steps") or [], strict=False)
    ):
        if step.kind == "advance":
            t += step.seconds
        elif step.kind == "settle":
            t += SETTLE_SECONDS
        elif step.kind in ("create", "update"):
            op = Op.CREATE if step.kind == "create" else Op.UPDATE
            for raw in raw_step[step.kind]:
                yield record_line(t, op, object=raw)
        elif step.kind == "delete":
            for kind, key in step.deletes:
                yield record_line(t, Op.DELETE, kind=kind, key=key)
        elif step.kind == "scale":
            raise TraceError(f"{path}: steps[{i}].scale: not converted (a trace holds the pods)")
    yield record_line(t, Op.END)


def _perf_trace(path: Path, workload: str | None) -> Trace:
    """A scheduler_perf workload as a Trace of objects (read in memory, not streamed)."""
    from ..bench._errors import WorkloadError
    from ..bench._testcase import load_test_cases, select
    from ..bench._workload import Barrier, CreateNamespaces, CreateNodes, CreatePods, Sleep, plan

    try:
        chosen = select(load_test_cases(path), workload)
    except WorkloadError as exc:
        raise TraceError(f"{path}: {exc}") from None
    if len(chosen) != 1:
        names = ", ".join(f"{c.name}/{w.name}" for c, w in chosen[:8])
        raise TraceError(f"{path}: --workload: name one test case/workload ({names}, ...)")
    case, work = chosen[0]
    try:
        the_plan = plan(case, work)
    except WorkloadError as exc:
        raise TraceError(f"{path}: {exc}") from None
    builder = _perf_builder(the_plan)
    initial: list[KubeObject] = []
    events: list[TraceEvent] = []
    namespaces: set[str] = set()
    t = 0.0
    for op in the_plan.ops:
        if isinstance(op, CreateNodes):
            initial.extend(builder.build_nodes(op))
        elif isinstance(op, CreateNamespaces):
            namespaces.update(f"{op.prefix}-{i}" for i in range(op.count))
        elif isinstance(op, CreatePods):
            t += 1.0
            namespaces.add(op.namespace)
            for pod in builder.build_pods(op):
                events.append(_created(t, pod))
        elif isinstance(op, Sleep):
            t += op.seconds
        elif not isinstance(op, Barrier):
            name = type(op).__name__
            raise TraceError(
                f"{path}: {case.name}/{work.name}: op {op.index} ({name}): not converted to a "
                "trace (createNodes, createNamespaces, createPods, barrier and sleep are)"
            )
    initial[:0] = [Namespace(name=n) for n in sorted(namespaces) if n]
    events.append(TraceEvent(t=t + 1.0, op=Op.END))
    header = TraceHeader(source="scheduler_perf", name=f"{case.name}/{work.name}")
    return Trace(header, initial, events)


def _perf_builder(the_plan: Any) -> Any:
    """ksched bench's own object builders (the same nodes and pods the benchmark makes)."""
    from ..bench._ops import _Runner
    from ..cluster import InMemoryCluster

    return _Runner(the_plan, InMemoryCluster(), collector=None)  # type: ignore[arg-type]


def _created(t: float, pod: Pod) -> TraceEvent:
    return TraceEvent(t=t, op=Op.CREATE, object=pod, kind="Pod", key=pod.key)


def _is_scenario(docs: Sequence[Any]) -> bool:
    return len(docs) == 1 and isinstance(docs[0], Mapping) and docs[0].get("kind") == "Scenario"


def trace_of_file(path: str | Path, *, workload: str | None = None) -> Trace:
    """The trace of a Scenario file or a scheduler_perf workload file.

    Raises:
        TraceError: neither, or a part that has no trace form (named).
    """
    path = Path(path)
    docs = _load_yaml(path)
    if _is_scenario(docs):
        lines = "".join(_scenario_lines(path, docs[0]))
        return trace_lines(io.StringIO(lines), str(path))
    if len(docs) == 1 and isinstance(docs[0], list):
        return _perf_trace(path, workload)
    raise TraceError(
        f"{path}: not a trace, a Scenario or a scheduler_perf workload file "
        "(a trace starts with its header line: apiVersion ksched.io/v1alpha1, kind Trace)"
    )


def convert_file(source: str | Path, output: str | Path, *, workload: str | None = None) -> int:
    """Write a Scenario file as a trace file; returns the records written.

    Raises:
        TraceError: the source is not a Scenario (scheduler_perf workloads are replayed
            directly: ``ksched replay FILE --workload NAME``), or cannot be converted.
    """
    source = Path(source)
    docs = _load_yaml(source)
    if not _is_scenario(docs):
        raise TraceError(
            f"{source}: only Scenario files are written as traces; replay a scheduler_perf "
            "workload directly (ksched replay FILE --workload NAME)"
        )
    if workload is not None:
        raise KschedError("--workload: only for scheduler_perf files")
    lines = _scenario_lines(source, docs[0])
    next(lines)  # the header, written by the writer
    meta = docs[0].get("metadata") or {}
    header = TraceHeader(source="scenario", name=str(meta.get("name") or source.stem))
    with TraceWriter(output, header) as writer:
        for line in lines:
            writer.write_line(line)
        return writer.records
