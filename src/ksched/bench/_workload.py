"""scheduler_perf workload files: test cases, workloads with params, and their ops.

# test/integration/scheduler_perf/scheduler_perf.go (testCase, workload, params, the op
# structs and their patchParams/isValid), util.go makeBaseNode / makeBasePod
A file is a YAML list of test cases. Each has a ``workloadTemplate`` (ops run in order) and
``workloads`` that fill the ``$param`` references. Paths are relative to the file.
:func:`plan` turns one workload into concrete ops, or raises :class:`WorkloadError` naming
the op it cannot run, before anything runs.

One module past 600 lines on purpose: the op structs, their fields and :func:`plan` read
one file format together, as scheduler_perf.go's op types and their validation do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import yaml

from ..api import parse_duration
from ._dra import FIELDS as DRIVER_FIELDS
from ._dra import CreateResourceDriver, parse_resource_driver
from ._errors import WorkloadError
from ._template import ObjectTemplate
from ._volumes import NodeAllocatable, PodVolumes, pod_volumes, read_node_allocatable

__all__ = [
    "Barrier",
    "Churn",
    "CreateAny",
    "CreateNamespaces",
    "CreateNodes",
    "CreatePods",
    "Op",
    "Plan",
    "Sleep",
    "TestCase",
    "Workload",
    "load_test_cases",
    "plan",
    "select",
]

# Upstream opcodes ksched does not run; they are named in the error.
UNSUPPORTED_OPS = {
    "deletePods": "deleting pods is not implemented",
    "createResourceClaims": "creating claims through the op is not implemented (createAny is)",
    "allocResourceClaims": "allocating claims outside the scheduler is not implemented",
    "updateDeviceConditions": "DRA device binding conditions are not implemented",
    "checkPodScheduled": "DRA device binding conditions are not implemented",
    "updateAny": "updating objects is not implemented",
    "startCollectingMetrics": "explicit metrics phases are not implemented",
    "stopCollectingMetrics": "explicit metrics phases are not implemented",
}

# Known fields per op: anything else is an error, as upstream decodes with
# DisallowUnknownFields. Fields upstream knows but ksched does not run are listed apart.
_FIELDS: dict[str, set[str]] = {
    "createNodes": {
        "opcode",
        "count",
        "countParam",
        "nodeTemplatePath",
        "labelNodePrepareStrategy",
        "uniqueNodeLabelStrategy",
        "nodeAllocatableStrategy",
    },
    "createNamespaces": {"opcode", "prefix", "count", "countParam", "namespaceTemplatePath"},
    "createPods": {
        "opcode",
        "count",
        "countParam",
        "collectMetrics",
        "namespace",
        "podTemplatePath",
        "skipWaitToCompletion",
        "persistentVolumeTemplatePath",
        "persistentVolumeClaimTemplatePath",
    },
    "createPodSets": {"opcode", "count", "countParam", "namespacePrefix", "createPodsOp"},
    "createAny": {"opcode", "namespace", "templatePath", "count", "countParam"},
    "barrier": {"opcode", "namespaces", "labelSelector", "stageRequirement"},
    "sleep": {"opcode", "duration", "durationParam"},
    "churn": {"opcode", "mode", "number", "intervalMilliseconds", "namespace", "templatePaths"},
    "createResourceDriver": DRIVER_FIELDS,
}
_UNSUPPORTED_FIELDS: dict[str, set[str]] = {
    "createPods": {"steadyState", "duration", "durationParam"},
}

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


# ---- concrete ops ------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class CreateNodes:
    index: int
    count: int
    template: ObjectTemplate | None = None
    label_key: str = ""
    label_values: tuple[str, ...] = ()
    unique_label_key: str = ""
    allocatable: NodeAllocatable | None = None


@attrs.frozen(kw_only=True)
class CreateNamespaces:
    index: int
    prefix: str
    count: int
    template: ObjectTemplate | None = None


@attrs.frozen(kw_only=True)
class CreatePods:
    index: int
    count: int
    namespace: str
    template: ObjectTemplate | None = None
    collect_metrics: bool = False
    skip_wait: bool = False
    volumes: PodVolumes | None = None


@attrs.frozen(kw_only=True)
class CreateAny:
    index: int
    template: ObjectTemplate
    count: int = 1
    namespace: str = ""


@attrs.frozen(kw_only=True)
class Barrier:
    index: int
    namespaces: tuple[str, ...] = ()
    label_selector: Mapping[str, str] = attrs.field(factory=dict)
    stage: str = "Scheduled"


@attrs.frozen(kw_only=True)
class Sleep:
    index: int
    seconds: float


@attrs.frozen(kw_only=True)
class Churn:
    index: int
    mode: str
    number: int
    interval: float
    namespace: str
    templates: tuple[ObjectTemplate, ...]


Op = (
    CreateNodes
    | CreateNamespaces
    | CreatePods
    | CreateAny
    | Barrier
    | Sleep
    | Churn
    | CreateResourceDriver
)


@attrs.frozen(kw_only=True)
class Plan:
    """A workload ready to run: its ops with counts and templates resolved."""

    test_case: TestCase
    workload: Workload
    ops: tuple[Op, ...]
    notes: tuple[str, ...] = ()

    @property
    def nodes(self) -> int:
        return sum(op.count for op in self.ops if isinstance(op, CreateNodes))

    @property
    def measured_pods(self) -> int:
        return sum(op.count for op in self.ops if isinstance(op, CreatePods) and op.collect_metrics)


# ---- reading -----------------------------------------------------------------------


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise WorkloadError(f"{where}: expected a mapping, got {value!r}")
    return value


def _gates(value: Any, where: str) -> dict[str, bool]:
    return {str(k): bool(v) for k, v in _mapping(value, where).items()}


def _strings(value: Any, where: str) -> tuple[str, ...]:
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
        raw = _mapping(raw, where)
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
            w = _mapping(w, f"{where}: workloads[{j}]")
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
            workloads.append(
                Workload(
                    name=wname,
                    params=dict(_mapping(w.get("params"), f"{where}/{wname}: params")),
                    labels=_strings(w.get("labels"), f"{where}/{wname}: labels"),
                    threshold=float(threshold) if threshold else None,
                    feature_gates=_gates(w.get("featureGates"), f"{where}/{wname}: featureGates"),
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
                labels=_strings(raw.get("labels"), f"{where}: labels"),
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


# ---- planning ----------------------------------------------------------------------


class _Params:
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


def plan(case: TestCase, workload: Workload) -> Plan:
    """The concrete ops of ``workload``.

    Raises:
        WorkloadError: an unsupported op or field, an undefined or unused param, a
            missing template; the message names the test case, workload and op.
    """
    label = f"{case.name}/{workload.name}"
    params = _Params(label, workload.params)
    templates: dict[str, ObjectTemplate] = {}

    def template(rel: str | None, where: str) -> ObjectTemplate | None:
        if not rel:
            return None
        if rel not in templates:
            try:
                templates[rel] = ObjectTemplate(case.base / rel)
            except WorkloadError as exc:
                raise WorkloadError(f"{where}: {exc}") from None
            for name in templates[rel].fields - {"Index", "Count"}:
                params.used.add(name)
        return templates[rel]

    # Unsupported ops first: they are the reason a workload cannot run, whatever else is off.
    for i, op in enumerate(case.ops):
        _check_fields(op, f"{label}: op {i} ({op['opcode']})")
        inner = op.get("createPodsOp")
        if op["opcode"] == "createPodSets" and isinstance(inner, Mapping):
            inner = {"opcode": "createPods", **inner}
            _check_fields(inner, f"{label}: op {i} (createPodSets.createPodsOp)")

    raw_ops: list[Mapping[str, Any]] = []
    for i, op in enumerate(case.ops):
        if op["opcode"] == "createPodSets":
            where = f"{label}: op {i} (createPodSets)"
            _check_fields(op, where)
            count = params.count(op, where)
            inner = dict(_mapping(op.get("createPodsOp"), f"{where}: createPodsOp"))
            prefix = str(op.get("namespacePrefix") or "")
            for n in range(count):
                raw_ops.append({**inner, "namespace": f"{prefix}-{n}"})
        else:
            raw_ops.append(op)

    ops: list[Op] = []
    for index, op in enumerate(raw_ops):
        code = op["opcode"]
        where = f"{label}: op {index} ({code})"
        _check_fields(op, where)
        if code == "createNodes":
            strategy = _mapping(op.get("labelNodePrepareStrategy"), f"{where}: strategy")
            unique = _mapping(op.get("uniqueNodeLabelStrategy"), f"{where}: strategy")
            if strategy and unique:
                raise WorkloadError(f"{where}: at most one node prepare strategy")
            values = _strings(strategy.get("labelValues"), f"{where}: labelValues")
            if strategy and not values:
                raise WorkloadError(f"{where}: labelNodePrepareStrategy.labelValues: required")
            ops.append(
                CreateNodes(
                    index=index,
                    count=params.count(op, where),
                    template=template(op.get("nodeTemplatePath"), where),
                    label_key=str(strategy.get("labelKey") or ""),
                    label_values=values,
                    unique_label_key=str(unique.get("labelKey") or ""),
                    allocatable=read_node_allocatable(op.get("nodeAllocatableStrategy"), where),
                )
            )
        elif code == "createNamespaces":
            ops.append(
                CreateNamespaces(
                    index=index,
                    prefix=str(op.get("prefix") or ""),
                    count=params.count(op, where),
                    template=template(op.get("namespaceTemplatePath"), where),
                )
            )
        elif code == "createPods":
            collect = bool(op.get("collectMetrics", False))
            skip = bool(op.get("skipWaitToCompletion", False))
            if collect and skip:
                raise WorkloadError(
                    f"{where}: collectMetrics and skipWaitToCompletion cannot be true "
                    "at the same time"
                )
            ops.append(
                CreatePods(
                    index=index,
                    count=params.count(op, where),
                    namespace=str(op.get("namespace") or f"namespace-{index}"),
                    template=template(
                        op.get("podTemplatePath") or case.default_pod_template, where
                    ),
                    collect_metrics=collect,
                    skip_wait=skip,
                    volumes=pod_volumes(
                        template(op.get("persistentVolumeTemplatePath"), where),
                        template(op.get("persistentVolumeClaimTemplatePath"), where),
                        where,
                    ),
                )
            )
        elif code == "createAny":
            tmpl = template(op.get("templatePath"), where)
            if tmpl is None:
                raise WorkloadError(f"{where}: TemplatePath must be set")
            ops.append(
                CreateAny(
                    index=index,
                    template=tmpl,
                    count=params.count(op, where, default=1),
                    namespace=str(op.get("namespace") or ""),
                )
            )
        elif code == "barrier":
            if op.get("labelSelector"):
                raise WorkloadError(f"{where}: labelSelector is not supported")
            stage = str(op.get("stageRequirement") or "Scheduled")
            if stage not in ("Scheduled", "Attempted"):
                raise WorkloadError(f"{where}: invalid StageRequirement {stage}")
            ops.append(
                Barrier(
                    index=index,
                    namespaces=_strings(op.get("namespaces"), f"{where}: namespaces"),
                    label_selector={
                        str(k): str(v) for k, v in _mapping(op.get("labelSelector"), where).items()
                    },
                    stage=stage,
                )
            )
        elif code == "sleep":
            raw = op.get("duration")
            if op.get("durationParam"):
                raw = params.get(str(op["durationParam"]), where)
            try:
                seconds = parse_duration(raw if raw is not None else 0)
            except ValueError:
                raise WorkloadError(f"{where}: invalid duration {raw!r}") from None
            ops.append(Sleep(index=index, seconds=seconds))
        elif code == "churn":
            mode = op.get("mode")
            number = op.get("number", 0)
            if mode not in ("create", "recreate"):
                raise WorkloadError(
                    f"{where}: invalid mode: {mode}. must be one of [recreate create]"
                )
            if not isinstance(number, int) or number < 0:
                raise WorkloadError(f"{where}: number ({number}) cannot be negative")
            if mode == "recreate" and number == 0:
                raise WorkloadError(f"{where}: number cannot be 0 when mode is recreate")
            paths = _strings(op.get("templatePaths"), f"{where}: templatePaths")
            if not paths:
                raise WorkloadError(
                    f"{where}: at least one template spec file needs to be specified"
                )
            interval_ms = op.get("intervalMilliseconds") or 500
            ops.append(
                Churn(
                    index=index,
                    mode=str(mode),
                    number=number,
                    interval=float(interval_ms) / 1000.0,
                    namespace=str(op.get("namespace") or f"namespace-{index}"),
                    templates=tuple(t for p in paths if (t := template(p, where)) is not None),
                )
            )
        elif code == "createResourceDriver":
            ops.append(parse_resource_driver(op, index, where, params.get))
        else:  # pragma: no cover - _check_fields rejects every other opcode
            raise AssertionError(code)

    unused = sorted(set(workload.params) - params.used)
    if unused:
        raise WorkloadError(
            f"{label}: the parameters {unused} are defined on the workload but unused"
        )
    if not any(isinstance(op, CreatePods) and op.collect_metrics for op in ops):
        raise WorkloadError(f"{label}: no createPods op with collectMetrics: true")
    notes: list[str] = []
    gates = {**case.feature_gates, **workload.feature_gates}
    ignored = {k: v for k, v in gates.items() if k not in KNOWN_FEATURE_GATES}
    if ignored:
        listed = ", ".join(f"{k}={str(v).lower()}" for k, v in sorted(ignored.items()))
        notes.append(f"featureGates ignored (not ksched features): {listed}")
    return Plan(test_case=case, workload=workload, ops=tuple(ops), notes=tuple(notes))


KNOWN_FEATURE_GATES = frozenset({"OpportunisticBatching"})
"""The feature gates ksched honours; workloads may name others, which are ignored."""


def opportunistic_batching(plan: Plan) -> bool:
    """The plan's OpportunisticBatching gate (on unless the workload turns it off)."""
    gates = {**plan.test_case.feature_gates, **plan.workload.feature_gates}
    return bool(gates.get("OpportunisticBatching", True))


def _check_fields(op: Mapping[str, Any], where: str) -> None:
    code = str(op["opcode"])
    if code in UNSUPPORTED_OPS:
        raise WorkloadError(f"{where}: unsupported op {code!r}: {UNSUPPORTED_OPS[code]}")
    known = _FIELDS.get(code)
    if known is None:
        raise WorkloadError(f"{where}: unknown opcode {code!r}")
    for field in op:
        if field in _UNSUPPORTED_FIELDS.get(code, ()):
            raise WorkloadError(f"{where}: {field} is not supported")
        if field not in known:
            raise WorkloadError(f"{where}: unknown field {field!r}")
