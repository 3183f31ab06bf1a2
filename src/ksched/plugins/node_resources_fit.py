"""NodeResourcesFit: does the node have room for the pod's requests; how full would it be.

# pkg/scheduler/framework/plugins/noderesources/fit.go (PreFilter, Filter, Fits, hints),
# resource_allocation.go (the scorer shared with BalancedAllocation), least_allocated.go,
# most_allocated.go, requested_to_capacity_ratio.go, plugins/helper/shape_score.go;
# pkg/scheduler/apis/config/v1/defaults.go and validation/validation_pluginargs.go (args).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

import attrs
import numpy as np

from .._errors import ConfigError
from ..api import Node, Pod, pod_requests
from ..framework import (
    MAX_NODE_SCORE,
    RESOURCES,
    ActionType,
    BoolArray,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    IntArray,
    NodeInfo,
    NodeTable,
    QueueingHint,
    SignFragment,
    Status,
    resources_signer,
    trunc_div,
)

__all__ = [
    "DEFAULT_RESOURCES",
    "LEAST_ALLOCATED",
    "MOST_ALLOCATED",
    "REQUESTED_TO_CAPACITY_RATIO",
    "InsufficientResource",
    "NodeResourcesFit",
    "NodeResourcesFitArgs",
    "PodResourceRequest",
    "ResourceAllocationScorer",
    "ResourceSpec",
    "ScoringStrategy",
    "UtilizationShapePoint",
    "broken_linear_function",
    "compute_pod_resource_request",
    "fits",
    "fits_request",
    "is_extended_resource_name",
    "is_scalar_resource_name",
    "parse_resource_specs",
    "validate_fit_args",
]

NAME: Final = "NodeResourcesFit"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME
PRE_SCORE_STATE_KEY: Final = "PreScore" + NAME

REASON_TOO_MANY_PODS: Final = "Too many pods"
REASON_INSUFFICIENT_CPU: Final = "Insufficient cpu"
REASON_INSUFFICIENT_MEMORY: Final = "Insufficient memory"
REASON_INSUFFICIENT_EPHEMERAL_STORAGE: Final = "Insufficient ephemeral-storage"

LEAST_ALLOCATED: Final = "LeastAllocated"
MOST_ALLOCATED: Final = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO: Final = "RequestedToCapacityRatio"
_STRATEGIES: Final = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

MAX_CUSTOM_PRIORITY_SCORE: Final = 10
"""Shape scores are given on 0..10 and scaled to 0..MAX_NODE_SCORE."""
_MAX_UTILIZATION: Final = 100

_CPU, _MEMORY, _EPHEMERAL_STORAGE, _PODS = "cpu", "memory", "ephemeral-storage", "pods"


# ---- resource names (pkg/apis/core/v1/helper, pkg/scheduler/util) ------------------------

_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = re.compile(rf"^{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*$")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")


def _qualified_name_errors(value: str) -> list[str]:
    """apimachinery's IsQualifiedName: ``[prefix/]name``, prefix a DNS-1123 subdomain."""
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return ["prefix part must be non-empty"]
        if len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix):
            return ["prefix part must be a lowercase RFC 1123 subdomain"]
    else:
        return ["a qualified name must consist of a name with an optional DNS subdomain prefix"]
    if not name:
        return ["name part must be non-empty"]
    if len(name) > 63:
        return ["name part must be no more than 63 characters"]
    if not _QUALIFIED_NAME.match(name):
        return ["name part must consist of alphanumeric characters, '-', '_' or '.'"]
    return []


def _is_prefixed_native_resource(name: str) -> bool:
    return "kubernetes.io/" in name


@functools.lru_cache(maxsize=4096)
def is_extended_resource_name(name: str) -> bool:
    """Fully qualified, outside the ``kubernetes.io`` domain, and not a quota name."""
    if "/" not in name or _is_prefixed_native_resource(name) or name.startswith("requests."):
        return False
    return not _qualified_name_errors("requests." + name)


@functools.lru_cache(maxsize=4096)
def is_scalar_resource_name(name: str) -> bool:
    """Extended, hugepages, ``kubernetes.io/``-prefixed or attachable-volume resources."""
    return (
        is_extended_resource_name(name)
        or name.startswith("hugepages-")
        or _is_prefixed_native_resource(name)
        or name.startswith("attachable-volumes-")
    )


# ---- the pod's request and the Fits verdict ----------------------------------------------


@attrs.frozen(slots=True)
class PodResourceRequest:
    """What a pod asks of a node: the largest need in each dimension (upstream preFilterState).

    ``scalars`` keeps every scalar resource the pod names, zero amounts included.
    """

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    scalars: tuple[tuple[str, int], ...] = ()

    def clone(self) -> PodResourceRequest:
        return self


def compute_pod_resource_request(pod: Pod) -> PodResourceRequest:
    """The pod's effective requests (app containers summed, init containers by maximum,
    sidecars and overhead added), as the Fit filter counts them."""
    reqs = pod_requests(pod)
    return PodResourceRequest(
        milli_cpu=reqs.get(_CPU, 0),
        memory=reqs.get(_MEMORY, 0),
        ephemeral_storage=reqs.get(_EPHEMERAL_STORAGE, 0),
        scalars=tuple((n, q) for n, q in reqs.items() if is_scalar_resource_name(n)),
    )


@attrs.frozen(slots=True)
class InsufficientResource:
    """One resource the node cannot give the pod.

    ``unresolvable``: the request exceeds the node's whole allocatable, so evicting pods
    (preemption) cannot help.
    """

    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool = False


def _is_ignored(
    name: str, ignored_resources: frozenset[str], ignored_groups: frozenset[str]
) -> bool:
    if not is_extended_resource_name(name):
        return False
    return name in ignored_resources or name.split("/", 1)[0] in ignored_groups


def _checked_scalars(
    request: PodResourceRequest, ignored_resources: frozenset[str], ignored_groups: frozenset[str]
) -> tuple[tuple[str, int], ...]:
    """The scalar requests the filter must check: non-zero and not ignored by the args."""
    return tuple(
        (name, qty)
        for name, qty in request.scalars
        if qty != 0 and not _is_ignored(name, ignored_resources, ignored_groups)
    )


def _insufficient(
    request: PodResourceRequest,
    scalars: Sequence[tuple[str, int]],
    node_info: NodeInfo,
) -> list[InsufficientResource] | None:
    """Every resource the node lacks for ``request`` (None when the pod fits)."""
    alloc = node_info.allocatable
    used = node_info.requested
    out: list[InsufficientResource] | None = None
    num_pods = len(node_info.pods)
    if num_pods + 1 > alloc.allowed_pod_number:
        out = [
            InsufficientResource(_PODS, REASON_TOO_MANY_PODS, 1, num_pods, alloc.allowed_pod_number)
        ]
    cpu = request.milli_cpu
    if cpu > 0 and cpu > alloc.milli_cpu - used.milli_cpu:
        out = out or []
        out.append(
            InsufficientResource(
                _CPU,
                REASON_INSUFFICIENT_CPU,
                cpu,
                used.milli_cpu,
                alloc.milli_cpu,
                unresolvable=cpu > alloc.milli_cpu,
            )
        )
    memory = request.memory
    if memory > 0 and memory > alloc.memory - used.memory:
        out = out or []
        out.append(
            InsufficientResource(
                _MEMORY,
                REASON_INSUFFICIENT_MEMORY,
                memory,
                used.memory,
                alloc.memory,
                unresolvable=memory > alloc.memory,
            )
        )
    storage = request.ephemeral_storage
    if storage > 0 and storage > alloc.ephemeral_storage - used.ephemeral_storage:
        out = out or []
        out.append(
            InsufficientResource(
                _EPHEMERAL_STORAGE,
                REASON_INSUFFICIENT_EPHEMERAL_STORAGE,
                storage,
                used.ephemeral_storage,
                alloc.ephemeral_storage,
                unresolvable=storage > alloc.ephemeral_storage,
            )
        )
    if scalars:
        alloc_scalar = alloc.scalar
        used_scalar = used.scalar
        for name, qty in scalars:
            capacity = alloc_scalar.get(name, 0)
            in_use = used_scalar.get(name, 0)
            if qty > capacity - in_use:
                out = out or []
                out.append(
                    InsufficientResource(
                        name,
                        f"Insufficient {name}",
                        qty,
                        in_use,
                        capacity,
                        unresolvable=qty > capacity,
                    )
                )
    return out


def fits_request(
    request: PodResourceRequest,
    node_info: NodeInfo,
    ignored_resources: Iterable[str] = (),
    ignored_resource_groups: Iterable[str] = (),
) -> list[InsufficientResource]:
    """Every resource ``node_info`` lacks for ``request`` (empty: it fits). Upstream fitsRequest."""
    scalars = _checked_scalars(
        request, frozenset(ignored_resources), frozenset(ignored_resource_groups)
    )
    return _insufficient(request, scalars, node_info) or []


def fits(pod: Pod, node_info: NodeInfo) -> list[InsufficientResource]:
    """Upstream ``Fits``: what ``node_info`` lacks to host ``pod`` (empty: it fits).

    Ignores no resource, as upstream's exported helper (used by preemption and others).
    """
    return fits_request(compute_pod_resource_request(pod), node_info)


# ---- args ---------------------------------------------------------------------------------


@attrs.frozen
class ResourceSpec:
    """A resource the scorer looks at, with its weight."""

    name: str
    weight: int = 1


@attrs.frozen
class UtilizationShapePoint:
    """A point of the RequestedToCapacityRatio shape: utilization 0..100 -> score 0..10."""

    utilization: int
    score: int


DEFAULT_RESOURCES: Final = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


@attrs.frozen
class ScoringStrategy:
    """``scoringStrategy``; ``shape`` is ``requestedToCapacityRatio.shape`` (None: not given)."""

    type: str = LEAST_ALLOCATED
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES
    shape: tuple[UtilizationShapePoint, ...] | None = None


@attrs.frozen
class NodeResourcesFitArgs:
    """NodeResourcesFitArgs (kubescheduler.config.k8s.io/v1), defaults applied."""

    ignored_resources: tuple[str, ...] = ()
    ignored_resource_groups: tuple[str, ...] = ()
    scoring_strategy: ScoringStrategy = ScoringStrategy()

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any] | None) -> NodeResourcesFitArgs:
        """Read the pluginConfig ``args`` (camelCase), applying the v1 defaults."""
        if raw is None:
            return cls()
        _check_mapping(
            raw, "args", {"ignoredResources", "ignoredResourceGroups", "scoringStrategy"}
        )
        strategy_raw = raw.get("scoringStrategy")
        if strategy_raw is None:
            strategy = ScoringStrategy()
        else:
            _check_mapping(
                strategy_raw,
                "args.scoringStrategy",
                {"type", "resources", "requestedToCapacityRatio"},
            )
            strategy_type = strategy_raw.get("type", "")
            if not isinstance(strategy_type, str):
                raise _error("args.scoringStrategy.type", "must be a string")
            resources = parse_resource_specs(
                strategy_raw.get("resources"), "args.scoringStrategy.resources"
            )
            shape: tuple[UtilizationShapePoint, ...] | None = None
            ratio = strategy_raw.get("requestedToCapacityRatio")
            if ratio is not None:
                _check_mapping(ratio, "args.scoringStrategy.requestedToCapacityRatio", {"shape"})
                shape = _parse_shape(
                    ratio.get("shape"), "args.scoringStrategy.requestedToCapacityRatio.shape"
                )
            strategy = ScoringStrategy(
                type=strategy_type, resources=resources or DEFAULT_RESOURCES, shape=shape
            )
        return cls(
            ignored_resources=_str_list(raw.get("ignoredResources"), "args.ignoredResources"),
            ignored_resource_groups=_str_list(
                raw.get("ignoredResourceGroups"), "args.ignoredResourceGroups"
            ),
            scoring_strategy=strategy,
        )


def _error(path: str, detail: str, plugin: str = NAME) -> ConfigError:
    return ConfigError(f"{plugin}: {path}: {detail}")


def _check_mapping(value: Any, path: str, known: set[str], plugin: str = NAME) -> None:
    if not isinstance(value, Mapping):
        raise _error(path, f"must be a mapping, not {type(value).__name__}", plugin)
    # apiVersion/kind may accompany typed args in a KubeSchedulerConfiguration.
    unknown = sorted(set(value) - known - {"apiVersion", "kind"})
    if unknown:
        raise _error(f"{path}.{unknown[0]}", "unknown field", plugin)


def _str_list(value: Any, path: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise _error(path, "must be a list of strings")
    return tuple(value)


def _int(value: Any, path: str, plugin: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _error(path, f"must be an integer, not {value!r}", plugin)
    return value


def parse_resource_specs(value: Any, path: str, plugin: str = NAME) -> tuple[ResourceSpec, ...]:
    """A ``resources`` list; a missing or zero weight defaults to 1 (v1 defaulting)."""
    if value is None:
        return ()
    if not isinstance(value, list | tuple):
        raise _error(path, "must be a list", plugin)
    specs = []
    for i, item in enumerate(value):
        _check_mapping(item, f"{path}[{i}]", {"name", "weight"}, plugin)
        name = item.get("name")
        if not isinstance(name, str):
            raise _error(f"{path}[{i}].name", "must be a string", plugin)
        weight = _int(item.get("weight", 0), f"{path}[{i}].weight", plugin)
        specs.append(ResourceSpec(name, weight or 1))
    return tuple(specs)


def _parse_shape(value: Any, path: str) -> tuple[UtilizationShapePoint, ...]:
    if value is None:
        return ()
    if not isinstance(value, list | tuple):
        raise _error(path, "must be a list")
    points = []
    for i, item in enumerate(value):
        _check_mapping(item, f"{path}[{i}]", {"utilization", "score"})
        points.append(
            UtilizationShapePoint(
                _int(item.get("utilization", 0), f"{path}[{i}].utilization", NAME),
                _int(item.get("score", 0), f"{path}[{i}].score", NAME),
            )
        )
    return tuple(points)


def _validate_shape(shape: Sequence[UtilizationShapePoint], path: str) -> list[str]:
    if not shape:
        return [f"{path}: Required value: at least one point must be specified"]
    errs = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errs.append(
                f"{path}[{i}].utilization: Invalid value: {shape[i].utilization}: "
                "values must be sorted in increasing order"
            )
            break
    for i, point in enumerate(shape):
        if not 0 <= point.utilization <= _MAX_UTILIZATION:
            errs.append(
                f"{path}[{i}].utilization: Invalid value: {point.utilization}: "
                f"not in valid range [0, {_MAX_UTILIZATION}]"
            )
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(
                f"{path}[{i}].score: Invalid value: {point.score}: "
                f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"
            )
    return errs


def validate_fit_args(args: NodeResourcesFitArgs) -> None:
    """Upstream ValidateNodeResourcesFitArgs; raises ConfigError listing every problem."""
    errs: list[str] = []
    for i, res in enumerate(args.ignored_resources):
        path = f"args.ignoredResources[{i}]"
        errs += [f"{path}: Invalid value: {res!r}: {e}" for e in _qualified_name_errors(res)]
    for i, group in enumerate(args.ignored_resource_groups):
        path = f"args.ignoredResourceGroups[{i}]"
        if "/" in group:
            errs.append(f"{path}: Invalid value: {group!r}: resource group name can't contain '/'")
        errs += [f"{path}: Invalid value: {group!r}: {e}" for e in _qualified_name_errors(group)]
    strategy = args.scoring_strategy
    if strategy.type not in _STRATEGIES:
        supported = ", ".join(f'"{s}"' for s in _STRATEGIES)
        errs.append(
            f'args.scoringStrategy.type: Unsupported value: "{strategy.type}": '
            f"supported values: {supported}"
        )
    for i, spec in enumerate(strategy.resources):
        if not 0 < spec.weight <= 100:
            errs.append(
                f"args.scoringStrategy.resources[{i}].weight: Invalid value: {spec.weight}: "
                f"resource weight of {spec.name} not in valid range (0, 100]"
            )
    if strategy.shape is not None:
        errs += _validate_shape(strategy.shape, "args.scoringStrategy.shape")
    elif strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        errs.append(
            "args.scoringStrategy.requestedToCapacityRatio: Required value: "
            f"the {REQUESTED_TO_CAPACITY_RATIO} strategy needs a shape"
        )
    if errs:
        raise ConfigError(f"{NAME}: " + "; ".join(errs))


# ---- the resource allocation scorer (shared with NodeResourcesBalancedAllocation) ---------

_KIND_CPU, _KIND_MEMORY, _KIND_EPHEMERAL, _KIND_SCALAR, _KIND_OTHER = range(5)


def _kind(name: str) -> int:
    if name == _CPU:
        return _KIND_CPU
    if name == _MEMORY:
        return _KIND_MEMORY
    if name == _EPHEMERAL_STORAGE:
        return _KIND_EPHEMERAL
    return _KIND_SCALAR if is_scalar_resource_name(name) else _KIND_OTHER


class ResourceAllocationScorer:
    """Gathers, per configured resource, the node's allocatable and what it would have
    requested with the pod on it; a strategy turns them into a score.

    ``use_requested``: count the node's actual cpu/memory requests (BalancedAllocation)
    instead of the non-zero ones (100m / 200Mi for a container that asks none).
    """

    __slots__ = ("_names", "_plan", "_use_requested", "resources")

    def __init__(self, resources: Sequence[ResourceSpec], use_requested: bool) -> None:
        self.resources = tuple(resources)
        self._names = tuple(r.name for r in self.resources)
        self._plan = tuple((_kind(r.name), r.name, r.weight) for r in self.resources)
        self._use_requested = use_requested

    def pod_request_list(self, pod: Pod) -> tuple[int, ...]:
        """The pod's request of each configured resource, in ``resources`` order."""
        reqs = pod_requests(pod, non_zero=not self._use_requested)
        return tuple(reqs.get(name, 0) for name in self._names)

    def gather(
        self, node_info: NodeInfo, pod_request_list: Sequence[int]
    ) -> list[tuple[int, int, int]]:
        """``(requested with the pod, allocatable, weight)`` of each configured resource the
        node has; a scalar resource the pod does not ask for is left out too."""
        if not self._plan:
            raise RuntimeError("resources not found")
        alloc = node_info.allocatable
        actual = node_info.requested
        usage = actual if self._use_requested else node_info.non_zero_requested
        out = []
        for (kind, name, weight), pod_req in zip(self._plan, pod_request_list, strict=True):
            if kind == _KIND_CPU:
                a, r = alloc.milli_cpu, usage.milli_cpu + pod_req
            elif kind == _KIND_MEMORY:
                a, r = alloc.memory, usage.memory + pod_req
            elif kind == _KIND_EPHEMERAL:
                a, r = alloc.ephemeral_storage, actual.ephemeral_storage + pod_req
            elif kind == _KIND_SCALAR and pod_req != 0:
                a = alloc.scalar.get(name, 0)
                r = actual.scalar.get(name, 0) + pod_req
            else:
                continue
            if a != 0:
                out.append((r, a, weight))
        return out

    def gather_columns(
        self, table: NodeTable, rows: IntArray, pod_request_list: Sequence[int]
    ) -> list[tuple[IntArray, IntArray, int]]:
        """:meth:`gather` for many nodes: ``(requested with the pod, allocatable, weight)``
        columns over ``rows``; an allocatable of 0 marks the resource absent on that node."""
        if not self._plan:
            raise RuntimeError("resources not found")
        cpu_usage = table.req_cpu if self._use_requested else table.nonzero_cpu
        memory_usage = table.req_memory if self._use_requested else table.nonzero_memory
        out = []
        for (kind, name, weight), pod_req in zip(self._plan, pod_request_list, strict=True):
            if kind == _KIND_CPU:
                a, r = table.alloc_cpu[rows], cpu_usage[rows] + pod_req
            elif kind == _KIND_MEMORY:
                a, r = table.alloc_memory[rows], memory_usage[rows] + pod_req
            elif kind == _KIND_EPHEMERAL:
                a, r = table.alloc_ephemeral[rows], table.req_ephemeral[rows] + pod_req
            elif kind == _KIND_SCALAR and pod_req != 0:
                alloc_col, req_col = table.scalar(name)
                a, r = alloc_col[rows], req_col[rows] + pod_req
            else:
                continue
            out.append((r, a, weight))
        return out


ScoreFn = Callable[[Sequence[tuple[int, int, int]]], int]
"""``score([(requested, allocatable, weight), ...]) -> 0..100``."""


def least_resource_score(entries: Sequence[tuple[int, int, int]]) -> int:
    """Favours free room: weighted mean of (allocatable - requested) / allocatable."""
    node_score = weight_sum = 0
    for req, cap, w in entries:
        if req <= cap:
            node_score += (cap - req) * MAX_NODE_SCORE // cap * w
        weight_sum += w
    return node_score // weight_sum if weight_sum else 0


def least_resource_scores(columns: Sequence[tuple[IntArray, IntArray, int]]) -> IntArray:
    """:func:`least_resource_score` over columns from ``gather_columns``."""
    node_score: IntArray = np.zeros(len(columns[0][0]), dtype=np.int64)
    weight_sum = np.zeros_like(node_score)
    for req, cap, w in columns:
        present = cap != 0
        free = np.where(present & (req <= cap), cap - req, 0)
        node_score += free * MAX_NODE_SCORE // np.where(present, cap, 1) * w
        weight_sum += present * w
    return np.where(weight_sum > 0, node_score // np.maximum(weight_sum, 1), 0)


def most_resource_scores(columns: Sequence[tuple[IntArray, IntArray, int]]) -> IntArray:
    """:func:`most_resource_score` over columns from ``gather_columns``."""
    node_score: IntArray = np.zeros(len(columns[0][0]), dtype=np.int64)
    weight_sum = np.zeros_like(node_score)
    for req, cap, w in columns:
        present = cap != 0
        used = np.where(present, np.minimum(req, cap), 0)
        node_score += used * MAX_NODE_SCORE // np.where(present, cap, 1) * w
        weight_sum += present * w
    return np.where(weight_sum > 0, node_score // np.maximum(weight_sum, 1), 0)


def most_resource_score(entries: Sequence[tuple[int, int, int]]) -> int:
    """Favours full nodes: weighted mean of requested / allocatable (capped at 1)."""
    node_score = weight_sum = 0
    for req, cap, w in entries:
        # requested may exceed the allocatable: pods without requests count non-zero.
        node_score += (req if req < cap else cap) * MAX_NODE_SCORE // cap * w
        weight_sum += w
    return node_score // weight_sum if weight_sum else 0


def broken_linear_function(points: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """The piecewise-linear function through ``(utilization, score)`` points, flat outside."""
    pts = tuple(points)

    def f(p: int) -> int:
        for i, (u, s) in enumerate(pts):
            if p <= u:
                if i == 0:
                    return s
                u0, s0 = pts[i - 1]
                return s0 + trunc_div((s - s0) * (p - u0), u - u0)
        return pts[-1][1]

    return f


def requested_to_capacity_ratio_scorer(shape: Sequence[UtilizationShapePoint]) -> ScoreFn:
    """Scores each resource's utilization on the shape; weighted mean of positive scores."""
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    raw = broken_linear_function([(p.utilization, p.score * scale) for p in shape])
    at_full = raw(_MAX_UTILIZATION)

    def score(entries: Sequence[tuple[int, int, int]]) -> int:
        node_score = weight_sum = 0
        for req, cap, w in entries:
            if req > cap:
                resource_score = at_full
            else:
                resource_score = raw(req * _MAX_UTILIZATION // cap if req > 0 else 0)
            if resource_score > 0:
                node_score += resource_score * w
                weight_sum += w
        if weight_sum == 0:
            return 0
        # round half away from zero (Go math.Round) of node_score / weight_sum, both >= 0
        return (2 * node_score + weight_sum) // (2 * weight_sum)

    return score


def _strategy_batch_scorer(
    strategy: ScoringStrategy,
) -> Callable[[Sequence[tuple[IntArray, IntArray, int]]], IntArray] | None:
    if strategy.type == MOST_ALLOCATED:
        return most_resource_scores
    if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        return None
    return least_resource_scores


def _strategy_scorer(strategy: ScoringStrategy) -> ScoreFn:
    if strategy.type == MOST_ALLOCATED:
        return most_resource_score
    if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        return requested_to_capacity_ratio_scorer(strategy.shape or ())
    return least_resource_score


# ---- the plugin ---------------------------------------------------------------------------


@attrs.frozen(slots=True)
class _PreFilterState:
    request: PodResourceRequest
    checked_scalars: tuple[tuple[str, int], ...]

    def clone(self) -> _PreFilterState:
        return self


@attrs.frozen(slots=True)
class _PreScoreState:
    pod_requests: tuple[int, ...]

    def clone(self) -> _PreScoreState:
        return self


class NodeResourcesFit:
    """Filters nodes without room for the pod's requests and scores the rest by the
    configured strategy (LeastAllocated by default)."""

    name = NAME

    def __init__(self, args: NodeResourcesFitArgs | None = None) -> None:
        args = args or NodeResourcesFitArgs()
        validate_fit_args(args)
        self.args = args
        self._ignored = frozenset(args.ignored_resources)
        self._ignored_groups = frozenset(args.ignored_resource_groups)
        self._allocation = ResourceAllocationScorer(
            args.scoring_strategy.resources, use_requested=False
        )
        self._scorer = _strategy_scorer(args.scoring_strategy)
        self._batch_scorer = _strategy_batch_scorer(args.scoring_strategy)

    @classmethod
    def new(cls, args: Mapping[str, Any] | None, handle: Handle) -> NodeResourcesFit:
        return cls(NodeResourcesFitArgs.from_dict(args))

    # -- PreFilter / Filter

    def sign_pod(self, pod: Pod) -> Sequence[SignFragment]:
        """Fit and the resource scorers read the pod's requests and overhead."""
        return ((RESOURCES, resources_signer(pod)),)

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> None:
        request = compute_pod_resource_request(pod)
        state.write(
            PRE_FILTER_STATE_KEY,
            _PreFilterState(
                request, _checked_scalars(request, self._ignored, self._ignored_groups)
            ),
        )
        return None

    def pre_filter_extensions(self) -> None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status(
                Code.ERROR, (f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found',)
            )
        missing = _insufficient(s.request, s.checked_scalars, node_info)
        if missing is None:
            return None
        unresolvable = any(m.unresolvable for m in missing)
        code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE
        return Status(code, tuple(m.reason for m in missing))

    def filter_batch(self, state: CycleState, pod: Pod, table: NodeTable) -> BoolArray | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return None
        request = s.request
        mask: BoolArray = table.pod_count < table.alloc_pods
        if request.milli_cpu > 0:
            mask &= request.milli_cpu <= table.alloc_cpu - table.req_cpu
        if request.memory > 0:
            mask &= request.memory <= table.alloc_memory - table.req_memory
        if request.ephemeral_storage > 0:
            mask &= request.ephemeral_storage <= table.alloc_ephemeral - table.req_ephemeral
        for name, qty in s.checked_scalars:
            alloc_col, req_col = table.scalar(name)
            mask &= qty <= alloc_col - req_col
        return mask

    def filter_batch_statuses(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> list[Status | None]:
        """:meth:`filter`'s statuses for rejected ``rows``: each row's missing resources
        (in :func:`_insufficient`'s order) as bits, one Status per distinct combination."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return [self.filter(state, pod, info) for info in map(table.infos.__getitem__, rows)]
        request = s.request
        checks: list[tuple[str, BoolArray, BoolArray]] = [
            (
                REASON_TOO_MANY_PODS,
                table.pod_count[rows] >= table.alloc_pods[rows],
                np.zeros(len(rows), dtype=np.bool_),
            )
        ]
        for qty, alloc_col, req_col, reason in (
            (request.milli_cpu, table.alloc_cpu, table.req_cpu, REASON_INSUFFICIENT_CPU),
            (request.memory, table.alloc_memory, table.req_memory, REASON_INSUFFICIENT_MEMORY),
            (
                request.ephemeral_storage,
                table.alloc_ephemeral,
                table.req_ephemeral,
                REASON_INSUFFICIENT_EPHEMERAL_STORAGE,
            ),
        ):
            if qty > 0:
                alloc = alloc_col[rows]
                checks.append((reason, qty > alloc - req_col[rows], qty > alloc))
        for name, qty in s.checked_scalars:
            alloc_col, req_col = table.scalar(name)
            alloc = alloc_col[rows]
            checks.append((f"Insufficient {name}", qty > alloc - req_col[rows], qty > alloc))
        missing = np.zeros(len(rows), dtype=np.int64)
        unresolvable = np.zeros(len(rows), dtype=np.bool_)
        for bit, (_, lacking, beyond) in enumerate(checks):
            missing |= lacking.astype(np.int64) << bit
            unresolvable |= lacking & beyond
        codes = missing * 2 + unresolvable
        distinct, which = np.unique(codes, return_inverse=True)
        made: list[Status | None] = []
        for code in distinct.tolist():
            reasons = tuple(
                reason for bit, (reason, _, _) in enumerate(checks) if code >> 1 >> bit & 1
            )
            kind = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if code & 1 else Code.UNSCHEDULABLE
            made.append(Status(kind, reasons))
        return [made[i] for i in which.tolist()]

    # -- PreScore / Score

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> None:
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(self._allocation.pod_request_list(pod)))
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        s = state.get(PRE_SCORE_STATE_KEY)
        reqs = s.pod_requests if s is not None else self._allocation.pod_request_list(pod)
        return self._scorer(self._allocation.gather(node_info, reqs))

    def score_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: IntArray
    ) -> IntArray | None:
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None or self._batch_scorer is None or not len(rows):
            return None
        return self._batch_scorer(self._allocation.gather_columns(table, rows, s.pod_requests))

    def score_extensions(self) -> None:
        return None

    # -- EnqueueExtensions

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN
                ),
                self.is_schedulable_after_pod_event,
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE
                ),
                self.is_schedulable_after_node_change,
            ),
        ]

    def is_schedulable_after_pod_event(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """A scheduled pod deleted, or a pod scaled down in something ``pod`` requests."""
        if (new is not None and not isinstance(new, Pod)) or not isinstance(old, Pod):
            return QueueingHint.QUEUE
        if new is None:
            if not old.spec.node_name and not old.status.nominated_node_name:
                return QueueingHint.SKIP
            return QueueingHint.QUEUE
        if _scaled_down_for(pod, old, new):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def is_schedulable_after_node_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """A node added that fits the pod, or one whose allocatable grew in what it asks."""
        if not isinstance(new, Node) or (old is not None and not isinstance(old, Node)):
            return QueueingHint.QUEUE
        if fits(pod, NodeInfo.of(new)):  # something is missing: the pod cannot go there
            return QueueingHint.SKIP
        if old is None:
            return QueueingHint.QUEUE
        if _requested_resources_increased(pod, old, new):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP


def _scaled_down_for(target: Pod, old: Pod, new: Pod) -> bool:
    """Upstream isSchedulableAfterPodScaleDown."""
    if new.uid == target.uid:
        return True
    if not new.spec.node_name:
        return False
    before = compute_pod_resource_request(old)
    after = compute_pod_resource_request(new)
    before_scalar = dict(before.scalars)
    after_scalar = dict(after.scalars)
    for name, qty in pod_requests(target).items():
        if qty == 0:
            continue
        if name == _CPU:
            if before.milli_cpu > after.milli_cpu:
                return True
        elif name == _MEMORY:
            if before.memory > after.memory:
                return True
        elif name == _EPHEMERAL_STORAGE:
            if before.ephemeral_storage > after.ephemeral_storage:
                return True
        elif is_scalar_resource_name(name) and before_scalar.get(name, 0) > after_scalar.get(
            name, 0
        ):
            return True
    return False


def _requested_resources_increased(pod: Pod, old: Node, new: Node) -> bool:
    """Upstream haveAnyRequestedResourcesIncreased."""
    request = compute_pod_resource_request(pod)
    before = NodeInfo.of(old).allocatable
    after = NodeInfo.of(new).allocatable
    if after.allowed_pod_number > before.allowed_pod_number:
        return True
    if (
        request.milli_cpu == 0
        and request.memory == 0
        and request.ephemeral_storage == 0
        and not request.scalars
    ):
        return False
    if (
        (request.milli_cpu > 0 and after.milli_cpu > before.milli_cpu)
        or (request.memory > 0 and after.memory > before.memory)
        or (request.ephemeral_storage > 0 and after.ephemeral_storage > before.ephemeral_storage)
    ):
        return True
    return any(
        qty != 0 and after.scalar.get(name, 0) > before.scalar.get(name, 0)
        for name, qty in request.scalars
    )
