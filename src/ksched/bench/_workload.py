"""scheduler_perf ops: the concrete ops of one workload, checked before anything runs.

# test/integration/scheduler_perf/operations.go (the op structs, isValid, patchParams),
# scheduler_perf.go validateTestCases
:func:`plan` turns one workload of a test case (``_testcase.py``) into concrete ops, or
raises :class:`WorkloadError` naming the test case, workload and op it cannot run. The ops
of their own modules (deletePods, updateAny, the metrics windows) are parsed there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ..api import parse_duration
from ._delete import DELETE_PODS_FIELDS, DeletePods, parse_delete_pods, selector
from ._dra import FIELDS as DRIVER_FIELDS
from ._dra import CreateResourceDriver, parse_resource_driver
from ._errors import WorkloadError
from ._phases import (
    MISSING_START,
    OVERLAP,
    START_FIELDS,
    STOP_FIELDS,
    StartCollectingMetrics,
    StopCollectingMetrics,
    parse_start,
)
from ._template import ObjectTemplate
from ._testcase import (
    DEFAULT_NODE,
    DEFAULT_POD,
    Params,
    TestCase,
    Workload,
    load_test_cases,
    mapping,
    select,
    strings,
)
from ._update import UPDATE_ANY_FIELDS, UpdateAny, parse_update_any
from ._volumes import NodeAllocatable, PodVolumes, pod_volumes, read_node_allocatable

__all__ = [
    "DEFAULT_NODE",
    "DEFAULT_POD",
    "Barrier",
    "Churn",
    "CreateAny",
    "CreateNamespaces",
    "CreateNodes",
    "CreatePods",
    "DeletePods",
    "Op",
    "Plan",
    "Sleep",
    "StartCollectingMetrics",
    "StopCollectingMetrics",
    "TestCase",
    "UpdateAny",
    "WaitForPodGroups",
    "Workload",
    "gang_scheduling",
    "load_test_cases",
    "plan",
    "select",
]

# Upstream opcodes ksched does not run; they are named in the error.
UNSUPPORTED_OPS = {
    "createResourceClaims": "creating claims through the op is not implemented (createAny is)",
    "allocResourceClaims": "allocating claims outside the scheduler is not implemented",
    "updateDeviceConditions": "DRA device binding conditions are not implemented",
    "checkPodScheduled": "DRA device binding conditions are not implemented",
    "createPodGroups": "the op is not implemented (createAny creates PodGroups)",
    "startCollectingProfile": "Go CPU profiles have no ksched counterpart",
    "stopCollectingProfile": "Go CPU profiles have no ksched counterpart",
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
        "steadyState",
        "steadyStateParam",
        "duration",
        "durationParam",
        "signatureBatchSize",
        "signatureBatchSizeParam",
        "templateParams",
        "countMultiplierParam",
    },
    "createPodSets": {"opcode", "count", "countParam", "namespacePrefix", "createPodsOp"},
    "createAny": {"opcode", "namespace", "templatePath", "count", "countParam"},
    "waitForPodGroups": {"opcode", "namespace", "count", "countParam"},
    "barrier": {"opcode", "namespaces", "labelSelector", "stageRequirement"},
    "sleep": {"opcode", "duration", "durationParam"},
    "churn": {"opcode", "mode", "number", "intervalMilliseconds", "namespace", "templatePaths"},
    "createResourceDriver": DRIVER_FIELDS,
    "deletePods": DELETE_PODS_FIELDS,
    "updateAny": UPDATE_ANY_FIELDS,
    "startCollectingMetrics": START_FIELDS,
    "stopCollectingMetrics": STOP_FIELDS,
}
_UNSUPPORTED_FIELDS: dict[str, set[str]] = {
    "createNodes": {"templateParams"},
    "createPods": {"deletePodsPerSecond"},
}

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
    steady_state: bool = False
    duration: float = 0.0
    """steadyState: how long to keep replacing scheduled pods, in seconds."""
    signature_batch: int | None = None
    """signatureBatchSize: pods ``i`` get the label ``signature=signature-label-<i // n>``."""
    template_params: Mapping[str, Any] = attrs.field(factory=dict)
    """templateParams: extra template values (``$name`` resolved from the params)."""


@attrs.frozen(kw_only=True)
class CreateAny:
    index: int
    template: ObjectTemplate
    count: int = 1
    namespace: str = ""


@attrs.frozen(kw_only=True)
class WaitForPodGroups:
    """waitForPodGroups: until ``count`` PodGroups of ``namespace`` are in the store."""

    index: int
    namespace: str
    count: int


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
    | DeletePods
    | UpdateAny
    | StartCollectingMetrics
    | StopCollectingMetrics
    | WaitForPodGroups
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


# ---- planning ----------------------------------------------------------------------


def plan(case: TestCase, workload: Workload) -> Plan:
    """The concrete ops of ``workload``.

    Raises:
        WorkloadError: an unsupported op or field, an undefined or unused param, a
            missing template; the message names the test case, workload and op.
    """
    label = f"{case.name}/{workload.name}"
    params = Params(label, workload.params)
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
            inner = dict(mapping(op.get("createPodsOp"), f"{where}: createPodsOp"))
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
            strategy = mapping(op.get("labelNodePrepareStrategy"), f"{where}: strategy")
            unique = mapping(op.get("uniqueNodeLabelStrategy"), f"{where}: strategy")
            if strategy and unique:
                raise WorkloadError(f"{where}: at most one node prepare strategy")
            values = strings(strategy.get("labelValues"), f"{where}: labelValues")
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
            steady, duration, batch = _pod_pacing(op, params, where)
            if skip and steady:
                raise WorkloadError(
                    f"{where}: skipWaitToCompletion and steadyState cannot be true at the same time"
                )
            ops.append(
                CreatePods(
                    index=index,
                    steady_state=steady,
                    duration=duration,
                    signature_batch=batch,
                    count=params.count(op, where) * _multiplier(op, params, where),
                    template_params=_template_params(op, params, where),
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
        elif code == "waitForPodGroups":
            ops.append(
                WaitForPodGroups(
                    index=index,
                    namespace=str(op.get("namespace") or ""),
                    count=params.count(op, where),
                )
            )
        elif code == "barrier":
            stage = str(op.get("stageRequirement") or "Scheduled")
            if stage not in ("Scheduled", "Attempted"):
                raise WorkloadError(f"{where}: invalid StageRequirement {stage}")
            ops.append(
                Barrier(
                    index=index,
                    namespaces=strings(op.get("namespaces"), f"{where}: namespaces"),
                    label_selector=selector(op, f"{where}: labelSelector"),
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
            paths = strings(op.get("templatePaths"), f"{where}: templatePaths")
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
        elif code == "deletePods":
            ops.append(parse_delete_pods(op, index, where))
        elif code == "updateAny":
            tmpl = template(op.get("templatePath"), where)
            count = params.count(op, where, default=1)
            ops.append(parse_update_any(op, index, where, count, tmpl))
        elif code == "startCollectingMetrics":
            ops.append(parse_start(op, index, where))
        elif code == "stopCollectingMetrics":
            ops.append(StopCollectingMetrics(index=index))
        else:  # pragma: no cover - _check_fields rejects every other opcode
            raise AssertionError(code)

    unused = sorted(set(workload.params) - params.used)
    if unused:
        raise WorkloadError(
            f"{label}: the parameters {unused} are defined on the workload but unused"
        )
    _check_windows(label, ops)
    notes: list[str] = []
    gates = {**case.feature_gates, **workload.feature_gates}
    ignored = {k: v for k, v in gates.items() if k not in KNOWN_FEATURE_GATES}
    if ignored:
        listed = ", ".join(f"{k}={str(v).lower()}" for k, v in sorted(ignored.items()))
        notes.append(f"featureGates ignored (not ksched features): {listed}")
    chosen = workload.metric_threshold
    if chosen is not None and chosen.name not in COLLECTED_METRICS:
        notes.append(
            f"threshold {chosen.value:g} on {chosen.name} not compared "
            "(ksched does not record that metric)"
        )
    return Plan(test_case=case, workload=workload, ops=tuple(ops), notes=tuple(notes))


COLLECTED_METRICS = frozenset(
    {
        "scheduler_scheduling_attempt_duration_seconds",
        "scheduler_scheduling_algorithm_duration_seconds",
        "scheduler_pod_scheduling_sli_duration_seconds",
        "scheduler_framework_extension_point_duration_seconds",
        "scheduler_plugin_execution_duration_seconds",
        "scheduler_permit_wait_duration_seconds",
        "scheduler_podgroup_scheduling_attempt_duration_seconds",
        "scheduler_podgroup_scheduling_algorithm_duration_seconds",
    }
)
"""Histogram metrics a threshold may name: ksched records them (SchedulerMetrics)."""


KNOWN_FEATURE_GATES = frozenset({"OpportunisticBatching", "GangScheduling", "GenericWorkload"})
"""The feature gates ksched honours; workloads may name others, which are ignored."""


def opportunistic_batching(plan: Plan) -> bool:
    """The plan's OpportunisticBatching gate (on unless the workload turns it off)."""
    gates = {**plan.test_case.feature_gates, **plan.workload.feature_gates}
    return bool(gates.get("OpportunisticBatching", True))


def _multiplier(op: Mapping[str, Any], params: Params, where: str) -> int:
    """createPods' countMultiplierParam: the pod count is countParam times it."""
    ref = op.get("countMultiplierParam")
    if not ref:
        return 1
    value = params.get(str(ref), where)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise WorkloadError(f"{where}: parameter {ref} has the wrong type {value!r}")
    return value


def _template_params(op: Mapping[str, Any], params: Params, where: str) -> dict[str, Any]:
    """createPods' templateParams: values for the pod template, ``$name`` from the params."""
    raw = op.get("templateParams")
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise WorkloadError(f"{where}: templateParams: expected a mapping, got {raw!r}")
    return {
        str(k): params.get(v, f"{where}: templateParams.{k}")
        if isinstance(v, str) and v.startswith("$")
        else v
        for k, v in raw.items()
    }


def gang_scheduling(plan: Plan) -> bool:
    """The plan's GangScheduling gate (off unless the workload turns it on): the default
    profile then runs the GangScheduling plugin. GenericWorkload (the API) is always on."""
    gates = {**plan.test_case.feature_gates, **plan.workload.feature_gates}
    return bool(gates.get("GangScheduling", False))


def _pod_pacing(
    op: Mapping[str, Any], params: Params, where: str
) -> tuple[bool, float, int | None]:
    """createPods' steadyState, duration (seconds) and signatureBatchSize (None: unset)."""
    steady = op.get("steadyState", False)
    if op.get("steadyStateParam"):
        steady = params.get(str(op["steadyStateParam"]), where)
    if not isinstance(steady, bool):
        raise WorkloadError(f"{where}: steadyState: expected a boolean, got {steady!r}")
    raw = op.get("duration")
    if op.get("durationParam"):
        raw = params.get(str(op["durationParam"]), where)
    try:
        duration = parse_duration(raw if raw is not None else 0)
    except ValueError:
        raise WorkloadError(f"{where}: invalid duration {raw!r}") from None
    if steady and duration <= 0:
        raise WorkloadError(
            f"{where}: when creating pods in a steady state, the test duration must be > 0"
        )
    batch = op.get("signatureBatchSize")
    if op.get("signatureBatchSizeParam"):
        batch = params.get(str(op["signatureBatchSizeParam"]), where)
    if batch is not None:
        if isinstance(batch, bool) or not isinstance(batch, int | float) or batch < 0:
            raise WorkloadError(f"{where}: invalid SignatureBatchSize={batch!r}")
        batch = int(batch) or 1  # upstream: 0 means 1
    return steady, duration, batch


def _check_windows(label: str, ops: list[Op]) -> None:
    """Metrics windows open and close in order, never overlap, and at least one closes."""
    open_at: int | None = None
    closed = False
    for op in ops:
        where = f"{label}: op {op.index}"
        if isinstance(op, StartCollectingMetrics) or (
            isinstance(op, CreatePods) and op.collect_metrics
        ):
            if open_at is not None:
                raise WorkloadError(f"{where}: {OVERLAP}")
            open_at = op.index
        collects = isinstance(op, CreatePods) and op.collect_metrics
        if collects or isinstance(op, StopCollectingMetrics):
            if open_at is None:
                raise WorkloadError(f"{where}: {MISSING_START}")
            open_at, closed = None, True
    if open_at is not None:
        raise WorkloadError(
            f"{label}: op {open_at}: startCollectingMetrics is never stopped "
            "(no stopCollectingMetrics after it)"
        )
    if not closed:
        raise WorkloadError(f"{label}: no op in the workload template collects metrics")


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
