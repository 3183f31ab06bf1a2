"""scheduler_perf workload files: reading test cases and their workloads' params.

# test/integration/scheduler_perf/scheduler_perf.go (testCase, workload, params,
# getTestCases, validateTestCases), util.go makeBaseNode / makeBasePod
A file is a YAML list of test cases. Each has a ``workloadTemplate`` (ops run in order) and
``workloads`` that fill the ``$param`` references. Paths are relative to the file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import yaml

from ._errors import WorkloadError

__all__ = [
    "DEFAULT_NODE",
    "DEFAULT_POD",
    "MetricThreshold",
    "Params",
    "TestCase",
    "Workload",
    "load_test_cases",
    "mapping",
    "select",
    "strings",
]

DEFAULT_NODE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {},
    "status": {
        "capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
        "allocatable": {"pods": "110", "cpu": "4", "memory": "32Gi"},
    },
}
"""util.go makeBaseNode: the node of a createNodes op without nodeTemplatePath."""

DEFAULT_POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"generateName": "pod-"},
    "spec": {
        "containers": [
            {
                "name": "pause",
                "image": "registry.k8s.io/pause",
                "ports": [{"containerPort": 80}],
                "resources": {
                    "limits": {"cpu": "100m", "memory": "500Mi"},
                    "requests": {"cpu": "100m", "memory": "500Mi"},
                },
            }
        ]
    },
}
"""util.go makeBasePod (test/utils MakePodSpec): the pod when no template is named."""


@attrs.frozen(kw_only=True)
class Workload:
    """One sized run of a test case: its params, labels and throughput threshold."""

    name: str
    params: Mapping[str, Any] = attrs.field(factory=dict)
    labels: tuple[str, ...] = ()
    threshold: float | None = None
    feature_gates: Mapping[str, bool] = attrs.field(factory=dict)
    metric_threshold: MetricThreshold | None = None
    """A threshold on another metric than SchedulingThroughput (thresholdMetricSelector)."""


DATA_BUCKETS = ("Average", "Perc50", "Perc90", "Perc95", "Perc99")
"""util.go collectHistogramVec: the data items of a histogram metric, in milliseconds."""


@attrs.frozen(kw_only=True)
class MetricThreshold:
    """scheduler_perf.go thresholdMetricSelector with its workload's threshold: the
    histogram metric (its labels) whose ``data_bucket`` is compared with ``value``, in
    milliseconds; at most ``value`` when ``expect_lower``, else at least."""

    name: str
    value: float
    labels: Mapping[str, str] = attrs.field(factory=dict)
    data_bucket: str = "Average"
    expect_lower: bool = False

    def to_json(self) -> dict[str, Any]:
        """The selector and its threshold as scheduler_perf's file spells them."""
        return {
            "name": self.name,
            "labels": dict(self.labels),
            "dataBucket": self.data_bucket,
            "expectLower": self.expect_lower,
            "threshold": self.value,
        }

    def holds(self, measured: float) -> bool:
        """Whether ``measured`` (ms) meets the threshold."""
        return measured <= self.value if self.expect_lower else measured >= self.value


THROUGHPUT = "SchedulingThroughput"


@attrs.frozen(kw_only=True)
class TestCase:
    """A test case: ops with ``$param`` references and the workloads that size them."""

    __test__ = False  # not a pytest class

    name: str
    ops: tuple[Mapping[str, Any], ...]
    workloads: tuple[Workload, ...]
    base: Path
    default_pod_template: str | None = None
    scheduler_config: Path | None = None
    labels: tuple[str, ...] = ()
    feature_gates: Mapping[str, bool] = attrs.field(factory=dict)


# ---- reading -----------------------------------------------------------------------


def mapping(value: Any, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise WorkloadError(f"{where}: expected a mapping, got {value!r}")
    return value


def _gates(value: Any, where: str) -> dict[str, bool]:
    return {str(k): bool(v) for k, v in mapping(value, where).items()}


def strings(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise WorkloadError(f"{where}: expected a list, got {value!r}")
    return tuple(str(v) for v in value)


def load_test_cases(path: str | Path) -> list[TestCase]:
    """Every test case of a scheduler_perf workload file.

    Raises:
        WorkloadError: unreadable file, invalid YAML, or a malformed test case.
    """
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise WorkloadError(f"{path}: {exc.strerror or exc}") from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise WorkloadError(f"{path}: invalid YAML: {exc}") from exc
    if isinstance(data, Mapping) and "testCases" in data:
        data = data["testCases"]
    if not isinstance(data, list) or not data:
        raise WorkloadError(f"{path}: expected a list of test cases")
    cases: list[TestCase] = []
    seen: set[str] = set()
    for i, raw in enumerate(data):
        where = f"{path}: [{i}]"
        raw = mapping(raw, where)
        name = raw.get("name")
        if not isinstance(name, str) or not name:
            raise WorkloadError(f"{where}.name: required")
        if name in seen:
            raise WorkloadError(f"{path}: test case {name}: name is not unique")
        seen.add(name)
        where = f"{path}: test case {name}"
        ops = raw.get("workloadTemplate")
        if not isinstance(ops, list) or not ops:
            raise WorkloadError(f"{where}: no ops defined (workloadTemplate)")
        for j, op in enumerate(ops):
            if not isinstance(op, Mapping) or not isinstance(op.get("opcode"), str):
                raise WorkloadError(f"{where}: op {j}: expected a mapping with an opcode")
        workloads = []
        names: set[str] = set()
        for j, w in enumerate(raw.get("workloads") or []):
            w = mapping(w, f"{where}: workloads[{j}]")
            wname = str(w.get("name") or "")
            if not wname or wname in names:
                raise WorkloadError(f"{where}: workload name {wname!r} is missing or not unique")
            names.add(wname)
            threshold = w.get("threshold")
            if threshold is not None and (
                isinstance(threshold, bool) or not isinstance(threshold, int | float)
            ):
                raise WorkloadError(f"{where}/{wname}: threshold: expected a number")
            if threshold is not None and threshold < 0:
                raise WorkloadError(f"{where}/{wname}: threshold: should be non-negative")
            metric = THROUGHPUT
            other = None
            selector = w.get("thresholdMetricSelector") or raw.get("defaultThresholdMetricSelector")
            if selector is not None:
                chosen = mapping(selector, f"{where}/{wname}: thresholdMetricSelector")
                metric = str(chosen.get("name") or THROUGHPUT)
                bucket = str(chosen.get("dataBucket") or "")
                if metric != THROUGHPUT and not bucket:
                    raise WorkloadError(
                        f"{where}/{wname}: dataBucket should be set for metric {metric}"
                    )
                if bucket and bucket not in DATA_BUCKETS:
                    raise WorkloadError(
                        f"{where}/{wname}: thresholdMetricSelector.dataBucket: "
                        f"expected one of {', '.join(DATA_BUCKETS)}, got {bucket!r}"
                    )
                if metric != THROUGHPUT and threshold:
                    other = MetricThreshold(
                        name=metric,
                        value=float(threshold),
                        labels={
                            str(k): str(v)
                            for k, v in mapping(
                                chosen.get("labels"), f"{where}/{wname}: labels"
                            ).items()
                        },
                        data_bucket=bucket,
                        expect_lower=bool(chosen.get("expectLower", False)),
                    )
                    threshold = None
            workloads.append(
                Workload(
                    name=wname,
                    params=dict(mapping(w.get("params"), f"{where}/{wname}: params")),
                    labels=strings(w.get("labels"), f"{where}/{wname}: labels"),
                    threshold=float(threshold) if threshold else None,
                    feature_gates=_gates(w.get("featureGates"), f"{where}/{wname}: featureGates"),
                    metric_threshold=other,
                )
            )
        if not workloads:
            raise WorkloadError(f"{where}: no workloads defined")
        config_path = raw.get("schedulerConfigPath")
        cases.append(
            TestCase(
                name=name,
                ops=tuple(ops),
                workloads=tuple(workloads),
                base=path.parent,
                default_pod_template=raw.get("defaultPodTemplatePath"),
                scheduler_config=path.parent / config_path if config_path else None,
                labels=strings(raw.get("labels"), f"{where}: labels"),
                feature_gates=_gates(raw.get("featureGates"), f"{where}: featureGates"),
            )
        )
    return cases


def select(cases: Sequence[TestCase], name: str | None) -> list[tuple[TestCase, Workload]]:
    """The workloads ``name`` picks: ``TEST`` (all its workloads), ``TEST/WORKLOAD``, or all.

    Workload names may themselves contain ``/`` (``5kNodes/100Init/10kPods``).
    """
    if name is None:
        return [(c, w) for c in cases for w in c.workloads]
    case_name, _, workload_name = name.partition("/")
    for case in cases:
        if case.name != case_name:
            continue
        if not workload_name:
            return [(case, w) for w in case.workloads]
        for w in case.workloads:
            if w.name == workload_name:
                return [(case, w)]
        known = ", ".join(w.name for w in case.workloads)
        raise WorkloadError(f"test case {case_name}: no workload {workload_name!r} ({known})")
    known = ", ".join(c.name for c in cases)
    raise WorkloadError(f"no test case {case_name!r} ({known})")


class Params:
    """A workload's params, recording which ones the ops use (upstream: unusedParams)."""

    def __init__(self, where: str, params: Mapping[str, Any]) -> None:
        self.where = where
        self.params = params
        self.used: set[str] = set()

    def count(self, op: Mapping[str, Any], where: str, default: int | None = None) -> int:
        ref = op.get("countParam")
        if ref:
            value = self.get(str(ref), where)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise WorkloadError(f"{where}: parameter {ref} has the wrong type {value!r}")
            count = int(value)
        else:
            raw = op.get("count", default)
            if raw is None:
                raise WorkloadError(f"{where}: count or countParam required")
            if isinstance(raw, bool) or not isinstance(raw, int):
                raise WorkloadError(f"{where}: count: expected an integer, got {raw!r}")
            count = raw
        if count < 0:
            raise WorkloadError(f"{where}: invalid Count={count}")
        return count

    def get(self, ref: str, where: str) -> Any:
        if not ref.startswith("$"):
            raise WorkloadError(f"{where}: parameter reference {ref!r} must start with $")
        key = ref[1:]
        self.used.add(key)
        if key not in self.params:
            raise WorkloadError(f"{where}: parameter {key} is undefined")
        return self.params[key]
